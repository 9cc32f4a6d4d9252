import path from 'node:path';
import { inject } from 'vitest';
import { testDatabaseUrl } from './database';
import { FIXTURES, uniqueTaskQueue } from './env';
import { startApiProcess, type WorkerProcess } from './worker-process';

/**
 * The environment an API and a worker process share when they export traces to `otlpUrl`: this run's database
 * and Temporal, loopback receivers allowed, a short ladder, and spans leaving each process a tenth of a second
 * after they end (so a process killed rather than stopped has sent its spans).
 */
export function tracedEnv(otlpUrl: string, label: string, retryDelays: string): Record<string, string> {
  return {
    DATABASE_URL: testDatabaseUrl(),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: uniqueTaskQueue(label),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
    DELIVERY_RETRY_DELAYS: retryDelays,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl,
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
}

/** An API process exporting OTLP JSON as `api-under-test`, and the address it listens on. */
export async function startTracedApi(
  env: Record<string, string>,
  internalToken: string,
): Promise<{ api: WorkerProcess; url: string }> {
  const api = await startApiProcess(
    {
      ...env,
      PORT: '0',
      HOST: '127.0.0.1',
      INTERNAL_API_TOKEN: internalToken,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'api-under-test',
    },
    300_000,
  );
  const url = /api: listening on (http:\/\/[^\s,]+)/.exec(api.output.join(''))?.[1] as string;
  return { api, url };
}
