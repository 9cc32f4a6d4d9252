/**
 * `npm run chaos`: a few hundred events through the real API, worker, Temporal (the dev server, or with
 * --cluster the full server on Postgres) and Postgres on loopback while the worker is SIGKILLed (with
 * --workers N, one of N workers every 10 s, traffic through two APIs), Temporal is down for 18 s and Postgres
 * is unreachable for 10 s;
 * then the receivers' log is compared with the attempt records (see reconcile.ts for the definitions).
 * Exit code 0 when every figure is zero (duplicates explained by a killed worker aside), 1 when not,
 * 2 when the harness itself failed, 130 on SIGINT.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { parseArgs, USAGE } from './args';
import { describePlan, planFaults, runFaults, type FaultRecord } from './faults';
import { createMerchant, lifecycleCall } from './merchant';
import { apiLauncher, Supervisor, workerLauncher, type ServiceEntries } from './processes';
import { reconcile } from './reconcile';
import { subscribes, startReceivers } from './receivers';
import { operatorPublish, type OperatorPublish } from './operator';
import { connectTemporal, readEngineRecords, waitForQuietHealth, waitUntilFinished } from './records';
import { formatReport } from './report';
import { createRng } from './rng';
import { Cleanup, killStrayChildren, log, sleep } from './runtime';
import { ClusterTemporal, DevTemporal, type ChaosTemporal } from './temporal';
import { planEvents, runTraffic } from './traffic';
import {
  buildProduct,
  cachedCliPath,
  dropDatabase,
  ensureTemporalCli,
  ensureTemporalServer,
  FIXTURES,
  freePort,
  prepareDatabase,
  startTcpProxy,
} from './wiring';

/** Short ladder and timeout so whole ladders fit in the run: 6 attempts over 11 s of waits. */
const RETRY_DELAYS = '1s,2s,2s,3s,3s';
const LADDER_LENGTH = RETRY_DELAYS.split(',').length + 1;
/** Headroom over the slow endpoint's 2.5 s on a busy 2-core machine, where a post can take seconds to arrive. */
const DELIVERY_TIMEOUT_MS = 5_000;
const FAILING_THRESHOLD = 3;
/** Operator publishes through the CLI while Temporal is down, this long into the outage. */
const OPERATOR_PUBLISH_DELAYS_MS = [2_000, 9_000];
/** Events are published over this span; the faults are placed in it. */
const TRAFFIC_SPAN_MS = 110_000;
/** Ladders end within a minute on a quiet machine; a machine loaded by other runs needs more. */
const SETTLE_TIMEOUT_MS = 240_000;
/**
 * Several workers killed every 10 s leave more behind them: the workflow tasks each dead worker held time out, and
 * its cached workflows wait out the sticky timeout and are replayed elsewhere.
 */
const SEVERAL_WORKERS_EXTRA_SETTLE_MS = 120_000;
const HARD_LIMIT_MS = 15 * 60_000;

/** The binary may be being built by another process right now (a `.build-*` folder beside it): wait for it, bounded. */
async function temporalCli(): Promise<string> {
  if (process.env.TEMPORAL_CLI) return ensureTemporalCli();
  const cached = cachedCliPath();
  const building = () =>
    existsSync(path.dirname(cached)) && readdirSync(path.dirname(cached)).some((name) => name.startsWith('.build-'));
  for (let waited = 0; waited < 300_000 && !existsSync(cached) && building(); waited += 5_000) {
    if (waited === 0) log(`another process is building the Temporal CLI at ${cached}: waiting for it (up to 5 min)`);
    await sleep(5_000);
  }
  return ensureTemporalCli({ log });
}

async function main(cleanup: Cleanup): Promise<number> {
  const parsed = parseArgs(process.argv.slice(2));
  if (parsed === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const { seed, events: eventCount } = parsed;
  const rng = createRng(seed);
  const runId = `chaos${seed}_${Date.now().toString(36)}`;
  const deadline = Date.now() + HARD_LIMIT_MS;
  const several = parsed.workers > 1 ? `, ${parsed.workers} workers and 2 APIs` : '';
  const repeat = `--seed ${seed}${parsed.cluster ? ' --cluster' : ''}${parsed.workers > 1 ? ` --workers ${parsed.workers}` : ''}`;
  log(
    `seed ${seed}, ${eventCount} events over ${TRAFFIC_SPAN_MS / 1000} s, ladder ${RETRY_DELAYS}, timeout ${DELIVERY_TIMEOUT_MS / 1000} s${several} (repeat with ${repeat})`,
  );

  // Postgres: a fresh database, and a proxy in front of it for the API and the worker.
  const databaseUrl = new URL(
    process.env.CHAOS_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres',
  );
  databaseUrl.pathname = `/pw_${runId}`;
  const directUrl = databaseUrl.toString();
  await prepareDatabase(directUrl);
  cleanup.add('database', () => dropDatabase(directUrl));
  log(`database ${databaseUrl.pathname.slice(1)} migrated`);
  const pool = new pg.Pool({ connectionString: directUrl, max: 3 });
  pool.on('error', () => undefined);
  cleanup.add('harness pool', () => pool.end());
  const proxy = await startTcpProxy({ host: databaseUrl.hostname, port: Number(databaseUrl.port || 5432) });
  cleanup.add('postgres proxy', () => proxy.close());
  const proxiedUrl = new URL(directUrl);
  proxiedUrl.hostname = '127.0.0.1';
  proxiedUrl.port = String(proxy.port);

  // Temporal of our own that the outage can stop and start with its state: the dev server on a file database,
  // or the full server on databases of its own.
  const dir = mkdtempSync(path.join(tmpdir(), 'pw-chaos-'));
  // A run that failed (1) or whose harness failed (2) keeps the servers' files and logs to read; a passing or
  // interrupted one leaves nothing behind.
  cleanup.add('temporary files', async () => {
    if (exitCode === 1 || exitCode === 2) log(`temporary files (Temporal's database or logs) kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  });
  let temporal: ChaosTemporal;
  if (parsed.cluster) {
    const install = await ensureTemporalServer({ log });
    // Several workers: twice the one-machine tool's pool of 5 per service (48 connections at most, under
    // Postgres's 100 beside the services' own). A restart finds every running workflow's timers and tasks due at
    // once; with 5 the restarted server's persistence calls kept missing their deadlines and retrying.
    const maxConns = parsed.workers > 1 ? { default: 10, visibility: 2 } : undefined;
    const cluster = new ClusterTemporal({
      databaseUrl: directUrl,
      prefix: runId,
      install,
      dir,
      ...(maxConns ? { maxConns } : {}),
    });
    cleanup.add('temporal databases', () => cluster.dropDatabases());
    await cluster.createDatabases();
    temporal = cluster;
  } else {
    temporal = new DevTemporal({
      cliPath: await temporalCli(),
      port: await freePort(),
      dbFile: path.join(dir, 'temporal.sqlite'),
    });
  }
  await temporal.start();
  cleanup.add('temporal', () => temporal.close());
  cleanup.onStart(() => temporal.refuseRestarts());
  log(temporal.describe());

  const receivers = await startReceivers(seed, DELIVERY_TIMEOUT_MS);
  cleanup.add('receivers', () => receivers.close());

  const token = randomBytes(24).toString('hex');
  const env: Record<string, string> = {
    DATABASE_URL: proxiedUrl.toString(),
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_TASK_QUEUE: `chaos-${runId}`,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
    DELIVERY_RETRY_DELAYS: RETRY_DELAYS,
    DELIVERY_TIMEOUT: `${DELIVERY_TIMEOUT_MS / 1000}s`,
    ENDPOINT_FAILING_THRESHOLD: String(FAILING_THRESHOLD),
    METRICS_PORT: '0',
    LOG_LEVEL: 'warn',
  };
  // With several workers, two API processes too: the outbox and the task queue are shared on both sides. They run
  // from the build, as production does: a worker killed every 10 s must come back in seconds, not spend them in
  // webpack (a worker run from the sources bundles its workflows at every start).
  const apiCount = parsed.workers > 1 ? 2 : 1;
  let entries: ServiceEntries = { kind: 'source' };
  if (parsed.workers > 1) {
    log('npm run build: the services run from dist/, with the prebuilt workflow bundle');
    entries = { kind: 'built', ...(await buildProduct()) };
  }
  const apis: Supervisor[] = [];
  const apiUrls: string[] = [];
  for (let i = 1; i <= apiCount; i++) {
    const apiPort = await freePort();
    apiUrls.push(`http://127.0.0.1:${apiPort}`);
    const apiEnv = {
      ...env,
      PORT: String(apiPort),
      HOST: '127.0.0.1',
      INTERNAL_API_TOKEN: token,
      API_RATE_LIMIT_PER_MINUTE: '100000',
    };
    const api = new Supervisor(
      'api',
      apiLauncher(apiEnv, apiPort, entries),
      deadline,
      apiCount > 1 ? `api-${i}` : 'api',
    );
    cleanup.add(api.label, () => api.stop());
    apis.push(api);
  }
  const workers = Array.from({ length: parsed.workers }, (_, i) => {
    const worker = new Supervisor(
      'worker',
      workerLauncher(env, entries),
      deadline,
      parsed.workers > 1 ? `worker-${i + 1}` : 'worker',
    );
    cleanup.add(worker.label, () => worker.stop());
    return worker;
  });
  await Promise.all([...apis, ...workers].map((p) => p.ensureRunning()));
  const notRunning = [...apis, ...workers].filter((p) => !p.pid).map((p) => p.label);
  if (notRunning.length) throw new Error(`${notRunning.join(', ')} did not start`);
  const apiUrl = apiUrls[0] as string;

  const merchant = await createMerchant({ databaseUrl: directUrl, apiUrl, receivers, seed });
  log(`account ${merchant.accountId}: ${merchant.endpoints.map((e) => `${e.profile.name}=${e.id}`).join(', ')}`);

  const events = planEvents(rng.fork('traffic'), seed, eventCount, TRAFFIC_SPAN_MS);
  const plan = planFaults(rng.fork('faults'), TRAFFIC_SPAN_MS, parsed.workers);
  log(`fault plan: ${describePlan(plan)}`);

  const operatorRng = rng.fork('operator');
  const operator: OperatorPublish[] = [];
  const duringTemporalOutage = async () => {
    await Promise.all(
      OPERATOR_PUBLISH_DELAYS_MS.map(async (delay) => {
        await sleep(delay);
        operator.push(await operatorPublish({ env, accountId: merchant.accountId, rng: operatorRng, seed }));
      }),
    );
  };

  const trafficStartedAt = Date.now();
  log('traffic starts');
  let faults: FaultRecord[] = [];
  // The paused endpoint is resumed mid-run, while traffic and faults go on (the API may be the one restarting).
  const resumes = merchant.endpoints
    .filter((e) => e.profile.pausedForMs !== undefined)
    .map(async (e) => {
      await sleep(e.profile.pausedForMs as number);
      e.resumeAskedAt = Date.now();
      await lifecycleCall(apiUrl, merchant.key, e.id, 'resume');
      log(`resumed ${e.profile.name} (${e.id})`);
    });
  const [published] = await Promise.all([
    runTraffic({ apiUrls, token, accountId: merchant.accountId, events }),
    runFaults(plan, { workers, temporal, proxy, duringTemporalOutage }, trafficStartedAt, () => cleanup.started).then(
      (records) => {
        faults = records;
      },
    ),
  ]);
  await Promise.all(resumes);
  log(`traffic done: ${published.filter((p) => p.acceptedAt !== undefined).length}/${events.length} accepted`);

  const client = await connectTemporal(temporal.address);
  cleanup.add('harness temporal client', () => client.connection.close());
  const meantFor = (type: string) => merchant.endpoints.filter((e) => subscribes(e.profile, type)).map((e) => e.id);
  const expected = new Map<string, string[]>();
  for (const p of published) if (p.acceptedAt !== undefined) expected.set(p.event.id, meantFor(p.event.type));
  for (const o of operator) if (o.eventId) expected.set(o.eventId, meantFor(o.type));
  const settle = await waitUntilFinished({
    pool,
    client,
    accountId: merchant.accountId,
    expected,
    ladderLength: LADDER_LENGTH,
    timeoutMs: SETTLE_TIMEOUT_MS + (parsed.workers > 1 ? SEVERAL_WORKERS_EXTRA_SETTLE_MS : 0),
    quietMs: 30_000,
  });
  log(`settled: ${settle.reason}`);

  const health = await waitForQuietHealth(
    pool,
    client,
    merchant.accountId,
    merchant.endpoints.map((e) => e.id),
  );
  const processEvents = [...workers, ...apis, temporal].flatMap((p) => p.events).sort((a, b) => a.at - b.at);
  const records = await readEngineRecords(pool, client, merchant.accountId);
  const report = reconcile({
    ladderLength: LADDER_LENGTH,
    timeoutMs: DELIVERY_TIMEOUT_MS,
    failingThreshold: FAILING_THRESHOLD,
    endpoints: merchant.endpoints,
    published,
    operator,
    health,
    received: receivers.log,
    records,
    faults,
    processEvents,
    settle,
  });
  const scheduledKills = plan.filter((f) => f.kind === 'worker_kill' && f.worker !== undefined).length;
  process.stdout.write(
    formatReport(report, { seed, faults, ladder: RETRY_DELAYS, timeoutMs: DELIVERY_TIMEOUT_MS, scheduledKills }),
  );
  if (parsed.out) {
    const full = {
      seed,
      temporal: temporal.describe(),
      events: eventCount,
      workers: parsed.workers,
      apis: apiUrls.length,
      ladder: RETRY_DELAYS,
      timeoutMs: DELIVERY_TIMEOUT_MS,
      plan,
      faults,
      report,
      published,
      received: receivers.log,
      storedEvents: records.events,
      attempts: records.attempts,
      workflows: Object.fromEntries(records.workflows ?? []),
      health,
      processEvents,
    };
    writeFileSync(parsed.out, `${JSON.stringify(full, null, 2)}\n`);
    log(`full result written to ${parsed.out}`);
  }
  return report.passed ? 0 : 1;
}

const cleanup = new Cleanup();
let exiting = false;
/** The code the run exits with, once known: cleanup keeps the temporary files of a run that did not pass. */
let exitCode: number | undefined;
const exit = (code: number) => {
  if (exiting) return;
  exiting = true;
  exitCode = code;
  void cleanup.run().finally(() => {
    const stray = killStrayChildren();
    if (stray.length) log(`killed stray child processes: ${stray.join(', ')}`);
    process.exit(code);
  });
};
// Ctrl-C reaches the whole process group, and tsx relays it once more: a repeat must not end the run mid-cleanup
// (every cleanup step is bounded, and so is the run).
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    if (exiting) return;
    log(`${signal}: stopping every process started`);
    exit(130);
  });
}
setTimeout(() => {
  log(`the run passed its hard limit of ${HARD_LIMIT_MS / 60_000} min: stopping`);
  exit(2);
}, HARD_LIMIT_MS).unref();

main(cleanup).then(
  (code) => {
    log('stopping every process started');
    exit(code);
  },
  (err) => {
    // Once stopping (Ctrl-C, hard limit), a fault refused mid-way is expected, not a failure of the harness.
    if (!cleanup.started) log(`harness failure: ${(err as Error).stack ?? String(err)}`);
    exit(2);
  },
);
