/**
 * The engine as it ships measured beside its two baselines, in one run on one machine, with the same receiver:
 *   plain-post   a plain signed POST loop (the cost of HTTP alone);
 *   bare-*       bare Temporal: a workflow whose activity makes the same signed POST (the cost of Temporal alone);
 *   engine-*     publish -> deliverEvent -> check, sign, POST, record, one endpoint per event;
 * each as `*-load` (BENCH_CONCURRENCY in flight: deliveries/s) and `*-idle` (one at a time: latency), and both as
 * `*-fanout-load` (every event to BENCH_FANOUT_ENDPOINTS endpoints; bare Temporal runs one activity per endpoint).
 * The engine's phases keep the name of its shipped configuration, `all` (engine-load/all), so result keys stay put.
 * These steady phases run BENCH_REPS times, interleaved, each a warm-up then a measured window, and are reported as
 * medians with their spread. Then the scenarios, once each: publish-api, fan-out, slow-receiver, fairness, backlog, ordering,
 * rate-limit, charts, curve, large-tables, workers (one worker process against three), tracing (a worker process
 * with OpenTelemetry off and on).
 * `baseline` picks the set the performance docs quote (bench-config.ts BASELINE); `curve` has a file of its own.
 * Knobs: bench/bench-config.ts. Results: bench/results/<date>.json (table: bench/baseline-table.ts; plot: bench/plot.ts).
 * With `--cluster`, the full Temporal server on PostgreSQL (bench/cluster.ts) instead of the dev server, on fresh
 * databases too (its CPU, persistence requests and actions are not metered there).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { dropDatabase, prepareDatabase } from '../src/db/migrate';
import { createPool } from '../src/db/pool';
import { ensureTemporalCli } from '../temporal-tools/temporal-cli';
import { freePort } from '../temporal-tools/ports';
import { benchConfig } from './bench-config';
import { startBenchCluster } from './cluster';
import { startBenchServer } from './dev-server';
import { bundleBenchWorkflows, bundleEngine, SHIPPED, type BenchContext } from './engine';
import { cost, ratios } from './figures';
import { machineInfo } from './machine';
import {
  BARE_WORKFLOWS,
  bareEagerPhase,
  bareFanOutPhase,
  bareTemporalPhase,
  EAGER_WORKFLOWS,
  engineFanOutPhase,
  enginePhase,
  plainPostPhase,
  type PhaseResult,
} from './phases';
import { startReceiver } from './receiver';
import { backlogScenario } from './scenarios/backlog';
import { bodyParsingScenario } from './scenarios/body-parsing';
import { chartsScenario } from './scenarios/charts';
import { curveScenario } from './scenarios/curve';
import { fairnessScenario } from './scenarios/fairness';
import { fanOutScenario } from './scenarios/fan-out';
import { largeTablesScenario } from './scenarios/large-tables';
import { orderingScenario } from './scenarios/ordering';
import { publishApiScenario } from './scenarios/publish-api';
import { rateLimitScenario } from './scenarios/rate-limit';
import { slowReceiverScenario } from './scenarios/slow-receiver';
import { tracingScenario } from './scenarios/tracing';
import { workersScenario } from './scenarios/workers';
import { aggregate } from './stats';

const settings = benchConfig(process.argv.slice(2).filter((a) => a !== '--cluster'));

/**
 * Where a run's results go unless BENCH_OUT says: the baseline to `bench/results/baseline.json` and the curve alone
 * to `curve.json` (the files the performance docs cite), anything else to `<date>.json`; `-cluster` on the full server.
 */
function defaultOut(startedAt: Date, cluster: boolean): string {
  const name = settings.baseline
    ? 'baseline'
    : settings.phases?.length === 1 && settings.phases[0] === 'curve'
      ? 'curve'
      : startedAt.toISOString().slice(0, 10);
  return path.join(__dirname, 'results', `${name}${cluster ? '-cluster' : ''}.json`);
}

/** The dev server (metered: its process and its Prometheus endpoint) or the full server on Postgres (not). */
type BenchServerLike = {
  address: string;
  pid?: number;
  metricsUrl?: string;
  args?: string[];
  goEnv?: Record<string, string | undefined>;
  settings?: unknown;
  stop(): Promise<void>;
};
const log = (message: string) => process.stderr.write(`[${new Date().toISOString().slice(11, 19)}] ${message}\n`);

function selected(name: string): boolean {
  const group =
    name.startsWith('engine-') || name.startsWith('bare-') || name === 'plain-post' || name === 'empty-load'
      ? 'steady'
      : 'scenarios';
  return !settings.phases || settings.phases.some((p) => p === name || p === group || name.startsWith(`${p}/`));
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const runId = `b${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  const databaseUrl = `postgres://postgres@127.0.0.1:5432/pw_${runId}`;
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'pw-bench-'));
  const cliPath = await ensureTemporalCli({ log });
  const cluster = process.argv.includes('--cluster');
  const server: BenchServerLike = cluster
    ? await startBenchCluster(runId, log)
    : await startBenchServer({
        cliPath,
        port: await freePort(),
        metricsPort: await freePort(),
        dbFile: path.join(dataDir, 'temporal.sqlite'),
        dynamicConfig: settings.temporalConfig,
        log,
      });
  await prepareDatabase(databaseUrl);
  const pool = createPool(databaseUrl, 20);
  const receiver = await startReceiver();
  const connection = await NativeConnection.connect({ address: server.address });
  const clientConnection = await Connection.connect({ address: server.address });
  const client = new Client({ connection: clientConnection });
  const startedAt = new Date();
  try {
    const machine = await machineInfo(cliPath, pool);
    log(
      `${machine.cores} cores (${machine.cpuModel}), load ${machine.loadAverageStart.join(' ')}; phases ${settings.phaseMs / 1000} s after ${settings.warmupMs / 1000} s warm-up, ${settings.reps} reps${settings.baseline ? ' (baseline)' : ''}`,
    );
    const ctx: BenchContext = {
      serverAddress: server.address,
      databaseUrl,
      connection,
      client,
      pool,
      engineBundle: await bundleEngine(),
      runId,
    };
    const bareBundle = await bundleBenchWorkflows(BARE_WORKFLOWS);
    // Built when the floor's phase first runs, once per run.
    let eagerBundle: Promise<{ code: string }> | undefined;
    const eagerCode = () => (eagerBundle ??= bundleBenchWorkflows(EAGER_WORKFLOWS));
    const steady = { warmupMs: settings.warmupMs, windowMs: settings.phaseMs };
    const C = settings.concurrency;

    const E = settings.fanOutEndpoints;
    const phases: Array<[string, () => Promise<PhaseResult>]> = [
      ['plain-post', () => plainPostPhase(ctx, server, receiver, steady, C)],
      ['bare-load', () => bareTemporalPhase(ctx, server, receiver, steady, C, bareBundle)],
      ['engine-load/all', () => enginePhase(ctx, server, receiver, steady, C, SHIPPED)],
      ['empty-load', () => bareTemporalPhase(ctx, server, receiver, steady, C, bareBundle, 'emptyWorkflow')],
      ['bare-fanout-load', () => bareFanOutPhase(ctx, server, receiver, steady, C, E, bareBundle)],
      ['engine-fanout-load/all', () => engineFanOutPhase(ctx, server, receiver, steady, C, E, SHIPPED)],
      ['bare-idle', () => bareTemporalPhase(ctx, server, receiver, steady, 1, bareBundle)],
      ['bare-eager-idle', async () => bareEagerPhase(ctx, server, receiver, steady, await eagerCode())],
      ['engine-idle/all', () => enginePhase(ctx, server, receiver, steady, 1, SHIPPED)],
    ];
    const reps: Record<string, PhaseResult[]> = {};
    for (let rep = 1; rep <= settings.reps; rep++) {
      for (const [name, run] of phases) {
        if (!selected(name)) continue;
        const result = await run();
        (reps[name] ??= []).push(result);
        log(
          `rep ${rep} ${name}: ${result.summary.perSecond}/s p50 ${result.summary.p50Ms} ms p99 ${result.summary.p99Ms} ms, CPU ${result.cpuMsPerDelivery.totalMs} ms, writes ${result.persistencePerDelivery.writes}, actions ${result.actionsPerDelivery.total}`,
        );
      }
    }
    const steadyResults = Object.fromEntries(
      Object.entries(reps).map(([name, r]) => [name, { median: aggregate(r), reps: r }]),
    );

    const scenarios: Record<string, unknown> = {};
    const scenario = async (name: string, run: () => Promise<unknown>) => {
      if (!selected(name)) return;
      log(`scenario ${name}...`);
      scenarios[name] = await run();
      log(`scenario ${name}: ${JSON.stringify(scenarios[name])}`);
    };
    await scenario('publish-api', async () => ({
      loaded: await publishApiScenario(ctx, server, steady, 32),
      unloaded: await publishApiScenario(ctx, server, steady, 1),
    }));
    await scenario('fan-out', () => fanOutScenario(ctx, receiver, settings.fanOut, settings.reps, SHIPPED));
    await scenario('slow-receiver', () => slowReceiverScenario(ctx, settings.phaseMs, settings.slowRate, SHIPPED));
    await scenario('fairness', () => fairnessScenario(ctx, settings.fairnessEvents, settings.phaseMs, SHIPPED));
    await scenario('backlog', () =>
      backlogScenario(ctx, settings.backlogEvents, C, SHIPPED, { heapSnapshots: settings.heapSnapshots, log }),
    );
    await scenario('ordering', () => orderingScenario(ctx, SHIPPED));
    await scenario('rate-limit', () =>
      settings.rateLimitEvents === undefined
        ? rateLimitScenario(ctx, SHIPPED)
        : rateLimitScenario(ctx, SHIPPED, settings.rateLimitEvents),
    );
    await scenario('charts', () => chartsScenario(ctx, settings.chartAttempts, log));
    await scenario('curve', () => curveScenario(ctx, receiver, bareBundle, SHIPPED, settings.curve, log));
    await scenario('large-tables', () => largeTablesScenario(ctx, settings.largeScale, log));
    await scenario('workers', () => workersScenario(ctx, steady, C, settings.reps, log));
    await scenario('tracing', () => tracingScenario(ctx, steady, C, settings.reps, log));
    await scenario('body-parsing', () => bodyParsingScenario(ctx));

    const result = {
      startedAt: startedAt.toISOString(),
      finishedAt: new Date().toISOString(),
      machine: { ...machine, loadAverageEnd: os.loadavg().map((l) => Math.round(l * 100) / 100) },
      server:
        'settings' in server
          ? server.settings
          : {
              kind: 'temporal server start-dev (CLI 1.5.1, server 1.29.1; SQLite file, WAL, one history shard)',
              args: server.args,
              env: server.goEnv,
            },
      settings,
      steady: steadyResults,
      ratios: ratios(steadyResults),
      cost: cost(steadyResults, settings.fanOutEndpoints),
      scenarios,
    };
    const json = `${JSON.stringify(result, null, 2)}\n`;
    const out = settings.out ?? defaultOut(startedAt, cluster);
    if (out !== '-') {
      mkdirSync(path.dirname(out), { recursive: true });
      writeFileSync(out, json);
    }
    process.stdout.write(json);
  } finally {
    await pool.end();
    await clientConnection.close();
    await connection.close();
    await receiver.close();
    await server.stop();
    await dropDatabase(databaseUrl);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  process.stderr.write(`bench: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
