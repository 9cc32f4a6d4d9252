import { readFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool';
import { freePort } from '../../temporal-tools/ports';
import { createEndpoint, parcel, publishOverHttp } from '../helpers/delivery';
import { FIXTURES, uniqueTaskQueue } from '../helpers/env';
import { createAccount, createApiKey } from '../helpers/fixtures';
import { freeMetricsPort, scrape, valueOf, type Sample } from '../helpers/prometheus';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';
import { startApiProcess, startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { testDatabaseUrl } from '../helpers/database';

/**
 * The production entry points (src/api/server.ts, src/worker/main.ts) as separate processes, each with its own
 * METRICS_PORT: one event delivered to an HTTPS receiver on two endpoints (one answers 200, one 503 until its
 * delivery is abandoned and the endpoint marked failing), then both pages are scraped.
 */
describe('metrics pages of the api and worker processes', () => {
  const token = 'metrics-test-internal-token-0123456789';
  const processes: WorkerProcess[] = [];
  let pool: Pool;
  let receiver: Receiver;
  let apiUrl: string;
  let apiMetrics: string;
  let workerMetrics: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    pool = createPool(testDatabaseUrl());
    receiver = await startReceiver();
    receiver.script('/fail', { status: 503 });
    env = {
      DATABASE_URL: testDatabaseUrl(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: uniqueTaskQueue('metrics'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
      DELIVERY_RETRY_DELAYS: '200ms',
      DELIVERY_TIMEOUT: '2s',
      ENDPOINT_FAILING_THRESHOLD: '1',
      INTERNAL_API_TOKEN: token,
    };
    const [apiPort, apiMetricsPort, workerMetricsPort] = [
      await freePort(),
      await freeMetricsPort(),
      await freeMetricsPort(),
    ];
    apiUrl = `http://127.0.0.1:${apiPort}`;
    apiMetrics = `http://127.0.0.1:${apiMetricsPort}/metrics`;
    workerMetrics = `http://127.0.0.1:${workerMetricsPort}/metrics`;
    const started = await Promise.all([
      startApiProcess({ ...env, PORT: String(apiPort), METRICS_PORT: String(apiMetricsPort) }),
      startWorkerProcess({ ...env, METRICS_PORT: String(workerMetricsPort) }),
    ]);
    processes.push(...started);
  });

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop()));
    await receiver?.close();
    await pool?.end();
  });

  it(
    'counts publishing, attempts, abandonments and requests by route, with no id in any label',
    { timeout: 90_000 },
    async () => {
      const accountId = await createAccount(pool);
      const ok = await createEndpoint(pool, { accountId, url: `${receiver.url}/ok` });
      const failing = await createEndpoint(pool, { accountId, url: `${receiver.url}/fail` });
      const { key } = await createApiKey(pool, { accountId });

      const published = await publishOverHttp(apiUrl, token, {
        account_id: accountId,
        livemode: false,
        type: 'parcel.delivered',
        data: { parcel: parcel() },
      });
      expect(published.status).toBe(201);
      const eventId = ((await published.json()) as { id: string }).id;
      expect(
        (await fetch(`${apiUrl}/v1/webhooks/${ok.id}`, { headers: { authorization: `Bearer ${key}` } })).status,
      ).toBe(200);
      expect((await fetch(`${apiUrl}/no/such/route/${eventId}`)).status).toBe(404);

      await waitFor(
        async () => {
          const { rows } = await pool.query<{ status: string }>('SELECT status FROM webhook_endpoints WHERE id = $1', [
            failing.id,
          ]);
          return receiver.at('/ok').length === 1 && receiver.at('/fail').length === 2 && rows[0]?.status === 'failing';
        },
        { timeoutMs: 45_000, intervalMs: 200, what: 'one success, two failures and the failing mark' },
      );

      const api = await scrape(apiMetrics);
      expect(
        valueOf(api, 'parcel_webhooks_events_published_total', { type: 'parcel.delivered', livemode: 'false' }),
      ).toBe(1);
      const publish = { method: 'POST', route: '/internal/v1/events', status_code: '201' };
      expect(valueOf(api, 'parcel_webhooks_http_requests_total', publish)).toBe(1);
      expect(valueOf(api, 'parcel_webhooks_http_request_duration_seconds_count', publish)).toBe(1);
      expect(
        valueOf(api, 'parcel_webhooks_http_requests_total', { route: '/v1/webhooks/:id', status_code: '200' }),
      ).toBe(1);
      expect(valueOf(api, 'parcel_webhooks_http_requests_total', { route: 'unmatched', status_code: '404' })).toBe(1);
      expect(valueOf(api, 'parcel_webhooks_db_pool_max_connections', { pool: 'api' })).toBe(10);

      // The abandonment is counted once its supervisor is told, a moment before the mark lands; wait for it.
      const worker = await waitFor(
        async () => {
          const samples = await scrape(workerMetrics);
          return valueOf(samples, 'parcel_webhooks_deliveries_abandoned_total') === 1 ? samples : undefined;
        },
        { timeoutMs: 10_000, what: 'the abandonment on the worker page' },
      );
      expect(valueOf(worker, 'parcel_webhooks_delivery_attempts_total', { outcome: 'succeeded', error: 'none' })).toBe(
        1,
      );
      expect(valueOf(worker, 'parcel_webhooks_delivery_attempts_total', { outcome: 'failed', error: 'http_5xx' })).toBe(
        2,
      );
      expect(valueOf(worker, 'parcel_webhooks_delivery_attempt_duration_seconds_count')).toBe(3);
      // Other test files share the database: at least ours is failing.
      expect(valueOf(worker, 'parcel_webhooks_endpoints_failing', { livemode: 'false' })).toBeGreaterThanOrEqual(1);
      expect(worker.some((s) => s.name === 'parcel_webhooks_outbox_pending_events')).toBe(true);
      expect(worker.some((s) => s.name === 'parcel_webhooks_outbox_oldest_pending_age_seconds')).toBe(true);
      expect(valueOf(worker, 'parcel_webhooks_db_pool_connections', { pool: 'worker' })).toBeGreaterThanOrEqual(1);
      expect(worker.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
      // The Temporal SDK's worker metrics, merged onto the same page.
      expect(
        valueOf(worker, 'temporal_worker_task_slots_available', { worker_type: 'ActivityWorker' }),
      ).toBeGreaterThan(0);
      expect(worker.some((s) => s.name.startsWith('temporal_workflow_task_schedule_to_start_latency'))).toBe(true);
      // Every SDK metric the example alerts and dashboard read (deploy/) is one this worker exports.
      const deploy = path.join(__dirname, '..', '..', 'deploy');
      const read = ['prometheus/alerts.yml', 'grafana/parcel-webhooks.json']
        .map((file) => readFileSync(path.join(deploy, file), 'utf8'))
        .flatMap((text) => [...text.matchAll(/temporal_[a-z_]+/g)].map((m) => m[0]));
      const exported = new Set(worker.map((s) => s.name));
      expect([...new Set(read)].filter((name) => !exported.has(name))).toEqual([]);

      // Bounded cardinality: no label value is one of our ids, and neither page names this event or endpoint.
      const ids = [eventId, ok.id, failing.id, accountId];
      const offending = (samples: Sample[]) =>
        samples
          .flatMap((s) => Object.values(s.labels))
          .filter(
            (value) =>
              /\b(evt|we|dlv|acct|key|req|ntf)_[A-Za-z0-9]{6,}/.test(value) || ids.some((id) => value.includes(id)),
          );
      expect(offending(api)).toEqual([]);
      expect(offending(worker)).toEqual([]);
    },
  );

  it(
    'a METRICS_PORT already taken is a warning: the process serves its API all the same',
    { timeout: 60_000 },
    async () => {
      const busy = net.createServer();
      await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
      const busyPort = (busy.address() as net.AddressInfo).port;
      const apiPort = await freePort();
      try {
        const api = await startApiProcess({ ...env, PORT: String(apiPort), METRICS_PORT: String(busyPort) });
        processes.push(api);
        expect(api.output.join('')).toMatch(
          new RegExp(`metrics: cannot listen on 127\\.0\\.0\\.1:${busyPort} \\(EADDRINUSE\\)`),
        );
        expect(api.output.join('')).not.toContain('metrics on');
        expect((await fetch(`http://127.0.0.1:${apiPort}/healthz`)).status).toBe(200);
      } finally {
        busy.close();
      }
    },
  );
});
