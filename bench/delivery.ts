/**
 * Engine throughput and publish-to-first-attempt latency beside two baselines, in one run on one machine:
 *   1. a plain signed POST loop to the same receiver (the cost of HTTP alone);
 *   2. bare Temporal: one workflow with one no-op activity (the cost of Temporal alone);
 *   3. the engine: publishEvent -> deliverEvent -> sign-and-post -> record, one endpoint per event.
 * Run: `npx tsx bench/delivery.ts` (BENCH_EVENTS, BENCH_CONCURRENCY). It starts its own dev server (file
 * database, the pragmas `npm start` uses) and scratch database, and removes both at the end. With `--cluster`,
 * the full Temporal server on PostgreSQL (bench/cluster.ts) instead of the dev server, on fresh databases too.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { loadConfig, type Config } from '../infra/config';
import { createHttpAgent, postWebhook } from '../infra/http-client';
import { newId } from '../core/ids';
import { publishEvent } from '../domain/events';
import { signatureHeader } from '../core/signing';
import { dropDatabase, prepareDatabase } from '../db/migrate';
import { createPool, type Pool } from '../db/pool';
import { startDevServer } from '../infra/dev-server';
import { ensureTemporalCli } from '../infra/temporal-cli';
import { freePort } from '../infra/ports';
import { createWorker } from '../worker/worker';
import { startBenchCluster } from './cluster';
import { historyBreakdown } from './history-breakdown';
import { runPool, summarize, type Summary } from './stats';

const EVENTS = Number(process.env.BENCH_EVENTS ?? 400);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 200);
const WARMUP = 20;
const SEQUENTIAL = Number(process.env.BENCH_SEQUENTIAL ?? 30);
const TLS_DIR = path.join(__dirname, '..', 'test', 'fixtures', 'tls');
const SECRET = 'whsec_bench0000000000000000000000000';

interface Receiver {
  url: string;
  arrivals: Map<string, number>;
  close(): Promise<void>;
}

/** Answers 200 at once and notes when each event id first arrived. */
async function startReceiver(): Promise<Receiver> {
  const arrivals = new Map<string, number>();
  const server = https.createServer(
    { cert: readFileSync(path.join(TLS_DIR, 'server.pem')), key: readFileSync(path.join(TLS_DIR, 'server-key.pem')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = /"id":"(evt_[^"]+)"/.exec(Buffer.concat(chunks).toString())?.[1];
        if (id && !arrivals.has(id)) arrivals.set(id, performance.now());
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}');
      });
    },
  );
  server.keepAliveTimeout = 30_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/hooks`,
    arrivals,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

async function plainPostLoop(config: Config, receiver: Receiver, total: number): Promise<Summary> {
  const agent = createHttpAgent(config);
  const latencies: number[] = [];
  const started = performance.now();
  await runPool(total, CONCURRENCY, async (i) => {
    const body = JSON.stringify({ id: `evt_plain${i}`, object: 'event', type: 'parcel.created', data: {} });
    const t0 = performance.now();
    const result = await postWebhook(agent, {
      url: receiver.url,
      body,
      timeoutMs: 10_000,
      allowPrivate: true,
      headers: { 'content-type': 'application/json', 'service-signature': signatureHeader(body, [SECRET], Math.floor(Date.now() / 1000)) },
    });
    if (!result.succeeded) throw new Error(`plain POST failed: ${result.error ?? result.statusCode}`);
    latencies.push(performance.now() - t0);
  });
  const summary = summarize(total, performance.now() - started, latencies);
  await agent.close();
  return summary;
}

interface Phase {
  summary: Summary;
  workflowIds: string[];
}

async function bareTemporal(
  connection: NativeConnection,
  client: Client,
  total: number,
  prefix: string,
  concurrency: number,
): Promise<Phase> {
  const activityStarted = new Map<string, number>();
  const worker = await Worker.create({
    connection,
    taskQueue: `bench-bare-${prefix}`,
    workflowsPath: path.join(__dirname, 'baseline', 'workflows.ts'),
    activities: { noop: async (id: string) => void activityStarted.set(id, performance.now()) },
  });
  const run = worker.run();
  const publishedAt = new Map<string, number>();
  const drive = async (count: number, tag: string) => {
    const started = performance.now();
    await runPool(count, concurrency, async (i) => {
      const id = `${prefix}-${tag}-${i}`;
      publishedAt.set(id, performance.now());
      await client.workflow.execute('bareWorkflow', { taskQueue: `bench-bare-${prefix}`, workflowId: `bare:${id}`, args: [id] });
    });
    return performance.now() - started;
  };
  await drive(WARMUP, 'warm');
  const elapsed = await drive(total, 'run');
  const runIds = [...publishedAt.keys()].filter((id) => id.includes('-run-'));
  const latencies = runIds.map((id) => (activityStarted.get(id) as number) - (publishedAt.get(id) as number));
  worker.shutdown();
  await run;
  return { summary: summarize(total, elapsed, latencies), workflowIds: runIds.map((id) => `bare:${id}`) };
}

async function engine(
  config: Config,
  deps: { pool: Pool; client: Client; connection: NativeConnection },
  receiver: Receiver,
  total: number,
  concurrency: number,
): Promise<Phase & { publishP50Ms: number; historyEvents: number }> {
  const accountId = newId('account');
  await deps.pool.query(`INSERT INTO accounts (id, name, status) VALUES ($1, 'Bench', 'active')`, [accountId]);
  await deps.pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret) VALUES ($1, $2, false, $3, $4)`,
    [newId('endpoint'), accountId, receiver.url, SECRET],
  );
  const worker = await createWorker({ config, connection: deps.connection, pool: deps.pool });
  const run = worker.run();
  const publishDeps = { pool: deps.pool, temporal: deps.client, config };
  const publishedAt = new Map<string, number>();
  const publishMs: number[] = [];
  const drive = async (count: number, tag: string) => {
    const started = performance.now();
    await runPool(count, concurrency, async (i) => {
      const id = `evt_bench${accountId.slice(-6)}${tag}${i}`;
      const t0 = performance.now();
      publishedAt.set(id, t0);
      const data = { parcel: { id: `p-${i}`, parcel_number: `PN${i}`, status: 'CREATED', total_fee: 250, currency: 'KES' } };
      const published = await publishEvent(publishDeps, { accountId, livemode: false, type: 'parcel.created', data, id });
      if (tag === 'run') publishMs.push(performance.now() - t0);
      await deps.client.workflow.getHandle(published.workflowId as string).result();
    });
    return performance.now() - started;
  };
  await drive(WARMUP, 'warm');
  const elapsed = await drive(total, 'run');
  const runIds = [...publishedAt.keys()].filter((id) => /run\d+$/.test(id));
  const latencies = runIds.map((id) => (receiver.arrivals.get(id) as number) - (publishedAt.get(id) as number));
  const history = await deps.client.workflow.getHandle(`event:${runIds[0]}`).fetchHistory();
  worker.shutdown();
  await run;
  return {
    summary: summarize(total, elapsed, latencies),
    workflowIds: runIds.map((id) => `event:${id}`),
    publishP50Ms: summarize(publishMs.length, 1, publishMs).p50Ms,
    historyEvents: history.events?.length ?? 0,
  };
}

async function bareHistoryLength(client: Client, prefix: string): Promise<number> {
  const history = await client.workflow.getHandle(`bare:${prefix}-run-0`).fetchHistory();
  return history.events?.length ?? 0;
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const runId = `bench${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/pw_${runId}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pw-bench-'));
  const log = (m: string) => process.stderr.write(`${m}\n`);
  const dev = process.argv.includes('--cluster')
    ? await startBenchCluster(runId, log)
    : await startDevServer({ cliPath: await ensureTemporalCli({ log }), port: await freePort(), dbFile: path.join(dataDir, 'temporal.sqlite') });
  const temporal = 'settings' in dev ? dev.settings : { server: 'temporal server start-dev (CLI 1.5.1, server 1.29.1)', historyShards: 1, persistence: 'sqlite (file, WAL)' };
  await prepareDatabase(databaseUrl);
  const receiver = await startReceiver();
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    TEMPORAL_ADDRESS: dev.address,
    TEMPORAL_TASK_QUEUE: `bench-engine-${runId}`,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_CA_FILE: path.join(TLS_DIR, 'ca.pem'),
    LOG_LEVEL: 'silent',
  });
  const connection = await NativeConnection.connect({ address: dev.address });
  const clientConnection = await Connection.connect({ address: dev.address });
  const client = new Client({ connection: clientConnection });
  const pool = createPool(databaseUrl, 20);
  try {
    process.stderr.write(`events ${EVENTS}, concurrency ${CONCURRENCY}, ${os.cpus().length} cores\n`);
    const plain = await plainPostLoop(config, receiver, EVENTS * 25);
    process.stderr.write(`plain POST: ${JSON.stringify(plain)}\n`);
    // Throughput at CONCURRENCY in flight, then latency one at a time (under saturation latency is queueing).
    const bare = await bareTemporal(connection, client, EVENTS, `${runId}-load`, CONCURRENCY);
    process.stderr.write(`bare Temporal: ${JSON.stringify(bare.summary)}\n`);
    const eng = await engine(config, { pool, client, connection }, receiver, EVENTS, CONCURRENCY);
    process.stderr.write(`engine: ${JSON.stringify(eng.summary)}\n`);
    const bareIdle = await bareTemporal(connection, client, SEQUENTIAL, `${runId}-idle`, 1);
    const engIdle = await engine(config, { pool, client, connection }, receiver, SEQUENTIAL, 1);
    const result = {
      temporal,
      events: EVENTS,
      concurrency: CONCURRENCY,
      plainPost: plain,
      throughput: {
        bareTemporal: { ...bare.summary, historyEvents: await bareHistoryLength(client, `${runId}-load`) },
        engine: { ...eng.summary, publishP50Ms: eng.publishP50Ms, historyEvents: eng.historyEvents },
      },
      unloadedLatency: {
        bareTemporalStartToActivity: bareIdle.summary,
        enginePublishToFirstAttempt: { ...engIdle.summary, publishP50Ms: engIdle.publishP50Ms },
      },
      whereTimeGoesUnloadedP50Ms: {
        bareTemporal: await historyBreakdown(client, bareIdle.workflowIds),
        engine: await historyBreakdown(client, engIdle.workflowIds),
      },
      ratios: {
        engineVsBareTemporalRate: Math.round((eng.summary.perSecond / bare.summary.perSecond) * 100) / 100,
        engineVsPlainPostRate: Math.round((eng.summary.perSecond / plain.perSecond) * 1000) / 1000,
        engineVsBareUnloadedP50Latency: Math.round((engIdle.summary.p50Ms / bareIdle.summary.p50Ms) * 100) / 100,
      },
    };
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  } finally {
    await pool.end();
    await clientConnection.close();
    await connection.close();
    await receiver.close();
    await dev.stop();
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
