import { createServer, type Server } from 'node:http';
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { attemptErrorLabel, watchDatabaseState, watchPool } from '../../../src/infra/metrics';
import { serveMetrics, type MetricsServer } from '../../../src/infra/metrics-server';
import { freeMetricsPort, parseSamples, valueOf } from '../../helpers/prometheus';

const servers: Array<{ close(): unknown }> = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function listening(handler: Parameters<typeof createServer>[1]): Promise<{ server: Server; port: number }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({ close: () => new Promise((resolve) => server.close(resolve)) });
  return { server, port: (server.address() as net.AddressInfo).port };
}

async function serve(
  options: { port?: number; nextPortsToTry?: number; temporalUrl?: string; warn?: (msg: string) => void } = {},
): Promise<MetricsServer | undefined> {
  const port = options.port ?? (await freeMetricsPort());
  const metrics = { port, host: '127.0.0.1', nextPortsToTry: options.nextPortsToTry };
  const server = await serveMetrics({
    metrics,
    temporalUrl: options.temporalUrl,
    warn: options.warn ?? (() => undefined),
  });
  if (server) servers.push(server);
  return server;
}

/** Two neighbouring ports, both held by a listener of this test (as other processes' pages would). */
async function takenNeighbours(): Promise<[number, number]> {
  for (let tries = 0; tries < 20; tries += 1) {
    const { port } = await listening((_req, res) => res.end());
    const next = createServer((_req, res) => res.end());
    const bound = await new Promise<boolean>((resolve) => {
      next.once('error', () => resolve(false));
      next.listen(port + 1, '127.0.0.1', () => resolve(true));
    });
    if (!bound) continue;
    servers.push({ close: () => new Promise((resolve) => next.close(resolve)) });
    return [port, port + 1];
  }
  throw new Error('no two neighbouring free ports in 20 tries');
}

describe('metrics page', () => {
  it('METRICS_PORT=0 serves nothing and says nothing', async () => {
    const warnings: string[] = [];
    expect(await serve({ port: 0, warn: (msg) => warnings.push(msg) })).toBeUndefined();
    expect(warnings).toEqual([]);
  });

  it('a port already taken is one warning, not a failure', async () => {
    const { port } = await listening((_req, res) => res.end());
    const warnings: string[] = [];
    expect(await serve({ port, warn: (msg) => warnings.push(msg) })).toBeUndefined();
    expect(warnings).toEqual([
      `metrics: cannot listen on 127.0.0.1:${port} (EADDRINUSE); this process serves no metrics`,
    ]);
  });

  it('with METRICS_PORT unset, a taken port moves the page to the next free one, without a warning', async () => {
    const [first, second] = await takenNeighbours();
    const warnings: string[] = [];
    const server = await serve({ port: first, nextPortsToTry: 3, warn: (msg) => warnings.push(msg) });
    expect(warnings).toEqual([]);
    const port = Number(new URL(server?.url as string).port);
    expect(port).toBeGreaterThan(second);
    expect(port).toBeLessThanOrEqual(first + 3);
    expect((await fetch(server?.url as string)).status).toBe(200);
  });

  it('every port of the range taken is one warning naming the range', async () => {
    const [first] = await takenNeighbours();
    const warnings: string[] = [];
    expect(await serve({ port: first, nextPortsToTry: 1, warn: (msg) => warnings.push(msg) })).toBeUndefined();
    expect(warnings).toEqual([
      `metrics: cannot listen on 127.0.0.1:${first}-${first + 1} (EADDRINUSE); this process serves no metrics`,
    ]);
  });

  it('serves our registry and the Temporal SDK page in the text format, at /metrics only', async () => {
    const sdk = await listening((_req, res) =>
      res.end(
        '# TYPE temporal_worker_task_slots_available gauge\ntemporal_worker_task_slots_available{worker_type="ActivityWorker"} 100\n',
      ),
    );
    const server = await serve({ temporalUrl: `http://127.0.0.1:${sdk.port}/metrics` });
    const response = await fetch(server?.url as string);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    const samples = parseSamples(await response.text());
    expect(valueOf(samples, 'temporal_worker_task_slots_available')).toBe(100);
    expect(samples.some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
    expect((await fetch((server?.url as string).replace('/metrics', '/'))).status).toBe(404);
  });

  it('an SDK page that does not answer leaves a comment, and our metrics still serve', async () => {
    const closed = await freeMetricsPort();
    const server = await serve({ temporalUrl: `http://127.0.0.1:${closed}/metrics` });
    const text = await (await fetch(server?.url as string)).text();
    expect(text).toContain('# temporal SDK metrics unavailable');
    expect(parseSamples(text).length).toBeGreaterThan(10);
  });

  it('reports watched pools and the database state, and no stale state when the read fails', async () => {
    const unwatch = watchPool('unit', { totalCount: 4, idleCount: 1, waitingCount: 2, options: { max: 4 } });
    let fail = false;
    const stopState = watchDatabaseState(async () => {
      if (fail) throw new Error('database down');
      return { failingEndpoints: [{ livemode: true, count: 3 }], outbox: { pending: 5, oldestPendingAgeSeconds: 42 } };
    });
    try {
      const server = await serve();
      let samples = parseSamples(await (await fetch(server?.url as string)).text());
      expect(valueOf(samples, 'parcel_webhooks_db_pool_waiting_requests', { pool: 'unit' })).toBe(2);
      expect(valueOf(samples, 'parcel_webhooks_db_pool_max_connections', { pool: 'unit' })).toBe(4);
      expect(valueOf(samples, 'parcel_webhooks_endpoints_failing', { livemode: 'true' })).toBe(3);
      expect(valueOf(samples, 'parcel_webhooks_outbox_oldest_pending_age_seconds')).toBe(42);
      fail = true;
      await new Promise((resolve) => setTimeout(resolve, 1_100)); // past the one-scrape cache
      samples = parseSamples(await (await fetch(server?.url as string)).text());
      expect(samples.some((s) => s.name === 'parcel_webhooks_outbox_pending_events')).toBe(false);
      expect(valueOf(samples, 'parcel_webhooks_db_pool_waiting_requests', { pool: 'unit' })).toBe(2);
    } finally {
      unwatch();
      stopState();
    }
  });
});

describe('attempt error label', () => {
  it('is the failure kind, or the status class: never the code itself', () => {
    expect(attemptErrorLabel({ succeeded: true, statusCode: 204, error: null })).toBe('none');
    expect(attemptErrorLabel({ succeeded: false, statusCode: 503, error: null })).toBe('http_5xx');
    expect(attemptErrorLabel({ succeeded: false, statusCode: 410, error: null })).toBe('http_4xx');
    expect(attemptErrorLabel({ succeeded: false, statusCode: 302, error: 'redirect' })).toBe('redirect');
    expect(attemptErrorLabel({ succeeded: false, statusCode: null, error: 'timeout' })).toBe('timeout');
    expect(attemptErrorLabel({ succeeded: false, statusCode: 999, error: null })).toBe('http_other');
  });
});
