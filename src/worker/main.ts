import { Client } from '@temporalio/client';
import { createPool } from '../db/pool';
import { operationalState } from '../domain/operational-state';
import { checkSecretsSealed } from '../domain/secret-reencryption';
import { loadConfigOrExit, unsafeSettingWarnings } from '../infra/config';
import { createHttpAgent } from '../infra/http-client';
import { watchDatabaseState, watchPool } from '../infra/metrics';
import { serveMetrics } from '../infra/metrics-server';
import { ensureSearchAttributes } from '../infra/search-attributes';
import { connectNativeWithBackoff, requireTemporalAddress } from '../infra/temporal';
import { installTemporalRuntime } from '../infra/temporal-runtime';
import { startTracing, tracePool } from '../infra/tracing';
import { ensureRetentionSchedule } from './retention-schedule';
import { createWorker, runWorker } from './worker';

const log = (line: string) => process.stderr.write(`worker: ${line}\n`);

/** SIGINT/SIGTERM before Temporal answered: stop waiting, and exit as a clean stop. */
const waiting = new AbortController();

/**
 * Production entry point of the worker: `node dist/worker/main.js`. Started while Temporal is unreachable, it
 * waits for it (logging each retry) instead of exiting; SIGINT/SIGTERM end the wait, or drain and stop the worker.
 */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  for (const line of unsafeSettingWarnings(config)) process.stderr.write(`${line}\n`);
  const warn = (line: string) => process.stderr.write(`${line}\n`);
  // Before the first connection: the SDK's metrics exporter is part of its runtime.
  const temporalMetrics = await installTemporalRuntime(config.metrics, {}, warn);
  // Before the pool and the worker, which install their spans only when it runs (OTEL_* unset: nothing starts).
  const tracing = startTracing(config, 'parcel-webhooks-worker');
  // Served while Temporal is still awaited: that is when an operator most needs the page.
  const pool = createPool(config.databaseUrl);
  tracePool(pool);
  watchPool('worker', pool);
  await checkSecretsSealed(pool, config.webhook.secretEncryptionKeys);
  watchDatabaseState(() => operationalState(pool));
  const metrics = await serveMetrics({ metrics: config.metrics, temporalUrl: temporalMetrics, warn });
  if (metrics) process.stdout.write(`worker: metrics on ${metrics.url}\n`);
  const stopWaiting = () => waiting.abort(new Error('stopped while waiting for Temporal'));
  process.once('SIGINT', stopWaiting);
  process.once('SIGTERM', stopWaiting);
  const connection = await connectNativeWithBackoff(config, { log, signal: waiting.signal });
  // From here the SDK's runtime owns SIGINT/SIGTERM: it drains the worker, and run() resolves.
  process.off('SIGINT', stopWaiting);
  process.off('SIGTERM', stopWaiting);
  const http = createHttpAgent(config);
  try {
    await ensureSearchAttributes(connection, config.temporal.namespace, warn);
    const worker = await createWorker({ config, connection, pool, http });
    await ensureRetentionSchedule(new Client({ connection, namespace: config.temporal.namespace }), config, log);
    process.stdout.write(
      `worker: polling task queue ${config.temporal.taskQueue} on ${requireTemporalAddress(config)}\n`,
    );
    await runWorker(worker, { config, connection, pool, log });
  } finally {
    await metrics?.close();
    await http.close();
    await pool.end();
    await connection.close();
    await tracing?.shutdown();
  }
}

main().catch((err) => {
  log((err as Error).message);
  // Asked to stop before Temporal came back: a clean stop, not a failure.
  process.exit(waiting.signal.aborted ? 0 : 1);
});
