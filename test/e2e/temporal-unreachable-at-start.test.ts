import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildServer } from '../../src/api/server';
import { createPool, type Pool } from '../../src/db/pool';
import { startDevServer, type DevServer } from '../../temporal-tools/dev-server';
import { freePort } from '../../temporal-tools/ports';
import { attemptsOf, createEndpoint, parcel } from '../helpers/delivery';
import { FIXTURES, testConfig, uniqueTaskQueue } from '../helpers/env';
import { createAccount } from '../helpers/fixtures';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { testDatabaseUrl } from '../helpers/database';

const TOKEN = 'internal-token-for-tests-0123456789';

/**
 * A worker and an API started while Temporal is unreachable wait for it (the worker logs each
 * retry on a bounded backoff, the API says not ready on /readyz), then carry on once it is up, without a restart.
 * Meanwhile the API accepts events (publishing only stores them), and the worker's outbox dispatcher
 * starts them once it runs.
 * Temporal is a private dev server started only once both are waiting.
 */
describe('started while Temporal is unreachable', () => {
  let devServer: DevServer | undefined;
  let worker: WorkerProcess | undefined;
  let app: FastifyInstance | undefined;
  let pool: Pool;
  let receiver: Receiver;

  beforeAll(async () => {
    pool = createPool(testDatabaseUrl());
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await app?.close();
    await worker?.stop();
    await devServer?.stop();
    await receiver?.close();
    await pool?.end();
  });

  it('waits with a logged backoff, reports not ready, accepts events, and delivers them once Temporal is up', async () => {
    const port = await freePort();
    const address = `127.0.0.1:${port}`;
    const env = {
      DATABASE_URL: testDatabaseUrl(),
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TASK_QUEUE: uniqueTaskQueue('late-temporal'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
      DELIVERY_RETRY_DELAYS: '10ms',
      INTERNAL_API_TOKEN: TOKEN,
    };
    worker = await startWorkerProcess(env, 60_000, { ready: false });
    // Two logged retries: it neither exited at once nor gave up.
    await worker.waitForOutput(`Temporal at ${address} unreachable (attempt 2`, 30_000);
    expect(worker.alive()).toBe(true);

    app = await buildServer({ config: testConfig(env) }, { logger: false });
    const notReady = await app.inject({ url: '/readyz' });
    expect(notReady.statusCode).toBe(503);
    expect(notReady.json()).toEqual({ status: 'unavailable', checks: { postgres: 'ok', temporal: 'unavailable' } });

    // An event published while Temporal is down is accepted (stored in the outbox), not refused.
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/late` });
    const published = await app.inject({
      method: 'POST',
      url: '/internal/v1/events',
      headers: { authorization: `Bearer ${TOKEN}` },
      payload: { account_id: accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    });
    expect(published.statusCode).toBe(201);
    const { rows } = await pool.query('SELECT dispatched_at FROM events WHERE id = $1', [published.json().id]);
    expect(rows[0].dispatched_at).toBeNull();
    expect(receiver.at('/late')).toHaveLength(0);

    devServer = await startDevServer({ cliPath: inject('temporalCli'), port });
    await worker.waitForOutput('worker: polling task queue', 60_000);
    await waitFor(async () => (await app!.inject({ url: '/readyz' })).statusCode === 200, {
      timeoutMs: 30_000,
      intervalMs: 500,
      what: '/readyz to turn ready',
    });

    await waitFor(async () => (await attemptsOf(pool, endpoint.id)).length === 1, {
      timeoutMs: 30_000,
      what: 'the delivery',
    });
    expect(receiver.at('/late')).toHaveLength(1);
  }, 180_000);
});
