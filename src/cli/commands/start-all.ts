import path from 'node:path';
import { Client } from '@temporalio/client';
import { DefaultLogger, type NativeConnection, type Worker } from '@temporalio/worker';
import { startApi, type RunningApi } from '../../api/server';
import { createWorker, ensureRetentionSchedule, runWorker } from '../../worker/worker';
import { prepareDatabase } from '../../db/migrate';
import { createPool, type Pool } from '../../db/pool';
import { startTracing, tracePool } from '../../infra/tracing';
import { operationalState } from '../../domain/operational-state';
import { unsafeSettingWarnings, withLocalEncryptionKey, type Config } from '../../infra/config';
import { localKeyPath } from '../../infra/local-encryption-key';
import { watchDatabaseState, watchPool } from '../../infra/metrics';
import { serveMetrics } from '../../infra/metrics-server';
import { ensureSearchAttributes } from '../../infra/search-attributes';
import { connectNativeWithBackoff } from '../../infra/temporal';
import { installTemporalRuntime } from '../../infra/temporal-runtime';
import { loadTemporalTooling, type DevServerModule, type TemporalCliModule } from '../temporal-tooling';

const say = (msg: string) => process.stdout.write(`${msg}\n`);

type DevServer = Awaited<ReturnType<DevServerModule['startDevServer']>>;
type LocalTemporal = TemporalCliModule & DevServerModule;

/** The checkout's dev-server tooling, loaded before anything starts so an install without it fails first. */
function loadLocalTemporal(): LocalTemporal {
  const need = { command: '`start` without TEMPORAL_ADDRESS', otherwise: 'set TEMPORAL_ADDRESS to a Temporal cluster' };
  return { ...loadTemporalTooling('temporal-cli', need), ...loadTemporalTooling('dev-server', need) };
}

/** The Temporal dev server (its CLI built on first use) for a run without TEMPORAL_ADDRESS. */
async function startLocalTemporal(tooling: LocalTemporal, config: Config): Promise<DevServer> {
  const cliPath = await tooling.ensureTemporalCli({ cliPath: config.temporal.cliPath, log: say });
  return tooling.startDevServer({
    cliPath,
    port: config.temporal.devPort,
    uiPort: config.temporal.uiPort,
    dbFile: path.resolve(config.dataDir, 'temporal.sqlite'),
    namespace: config.temporal.namespace,
  });
}

/**
 * The whole service on one machine: database, the Temporal dev server unless TEMPORAL_ADDRESS is set,
 * a worker and the API. SIGINT/SIGTERM stop them in reverse order and leave no process behind.
 */
export async function startAll(given: Config): Promise<void> {
  // Development without WEBHOOK_SECRET_ENCRYPTION_KEYS: a local key, made on the first start under PARCEL_DATA_DIR
  // (later starts, and every CLI command, find it there already).
  const config = withLocalEncryptionKey(given, { create: true });
  if (given.webhook.secretEncryptionKeys.length === 0) {
    say(`secrets      made a local encryption key in ${localKeyPath(config.dataDir)} (kept for later starts)`);
  }
  for (const line of unsafeSettingWarnings(config)) process.stderr.write(`${line}\n`);
  const localTemporal = config.temporal.address ? undefined : loadLocalTemporal();
  const applied = await prepareDatabase(config.databaseUrl);
  say(`database ready (${applied.length} migration(s) applied)`);

  let devServer: DevServer | undefined;
  let address = config.temporal.address;
  if (localTemporal) {
    devServer = await startLocalTemporal(localTemporal, config);
    address = devServer.address;
  }
  const effective: Config = { ...config, temporal: { ...config.temporal, address } };

  // We own shutdown order, so the SDK must not react to signals on its own; its bundler chatter stays out.
  const temporalMetrics = await installTemporalRuntime(
    config.metrics,
    { shutdownSignals: [], logger: new DefaultLogger('WARN') },
    say,
  );
  // One process, one service name for its spans (OTEL_* unset: nothing starts).
  const tracing = startTracing(config, 'parcel-webhooks');
  const stopping = new AbortController();
  const stop = () => stopping.abort(new Error('stopped'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);

  // The API first: its Temporal client connects lazily, so it answers (and /readyz says why it is not ready)
  // while an external Temporal is still unreachable and the worker below waits for it.
  let api: RunningApi;
  try {
    api = await startApi(effective);
  } catch (err) {
    await devServer?.stop();
    throw err;
  }
  say(`API          ${api.url}  (docs: ${api.url}/docs)`);
  // One page for the whole process: the API's requests and pool (its plugin), the worker's, the SDK's.
  const metrics = await serveMetrics({ metrics: config.metrics, temporalUrl: temporalMetrics, warn: say });
  say(`Metrics      ${metrics?.url ?? '(off)'}`);

  let connection: NativeConnection | undefined;
  let pool: Pool | undefined;
  let worker: Worker | undefined;
  let running: Promise<void> | undefined;
  try {
    connection = await connectNativeWithBackoff(effective, { address, log: say, signal: stopping.signal });
    const workerPool = createPool(config.databaseUrl);
    pool = workerPool;
    tracePool(workerPool);
    watchPool('worker', workerPool);
    watchDatabaseState(() => operationalState(workerPool));
    await ensureSearchAttributes(connection, config.temporal.namespace, say);
    worker = await createWorker({ config: effective, connection, pool });
    await ensureRetentionSchedule(new Client({ connection, namespace: config.temporal.namespace }), effective, say);
    const run = runWorker(worker, { config: effective, connection, pool: workerPool, log: say });
    running = run;
    say(`Temporal     ${address}  namespace ${config.temporal.namespace}, task queue ${config.temporal.taskQueue}`);
    say(`Temporal UI  ${devServer?.uiUrl ?? '(external cluster: see its own UI)'}`);
    say('Ctrl-C stops everything.');
    await new Promise<void>((resolve) => {
      if (stopping.signal.aborted) return resolve();
      stopping.signal.addEventListener('abort', () => resolve(), { once: true });
      run.catch(() => resolve());
    });
  } catch (err) {
    // Ctrl-C while waiting for Temporal is a normal stop; anything else is reported once everything is down.
    if (!stopping.signal.aborted) {
      await shutdown();
      throw err;
    }
  }
  await shutdown();

  async function shutdown(): Promise<void> {
    say('stopping...');
    await api.close().catch(() => undefined);
    await metrics?.close();
    if (worker?.getState() === 'RUNNING') worker.shutdown();
    await running?.catch(() => undefined);
    await connection?.close().catch(() => undefined);
    await pool?.end().catch(() => undefined);
    await devServer?.stop();
    await tracing?.shutdown();
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    say('stopped.');
  }
}
