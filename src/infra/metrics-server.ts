import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Config } from './config';
import { collectProcessMetrics, registry } from './metrics';

/**
 * The metrics page of a service process: `GET /metrics` on METRICS_HOST:METRICS_PORT (unset: the first free port
 * from 9464 on), our registry followed by
 * the Temporal SDK's own worker metrics (infra/temporal-runtime.ts), fetched from its exporter at scrape time,
 * so one scrape target per process holds both. Its own small server, not a route of the API: the worker has no
 * HTTP server, and the API's auth, rate limit and request metrics must not apply to the scraper.
 */

/** The SDK's page is on loopback; a slow one must not make the whole scrape miss Prometheus' timeout. */
const TEMPORAL_FETCH_TIMEOUT_MS = 2_000;

export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

export interface ServeMetricsOptions {
  metrics: Config['metrics'];
  /** The SDK's exporter page, when this process runs a worker and the exporter could bind. */
  temporalUrl?: string;
  /** A port that cannot be bound is reported here and the process carries on without metrics. */
  warn(message: string): void;
}

async function temporalPage(url: string): Promise<string> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(TEMPORAL_FETCH_TIMEOUT_MS) });
    if (!response.ok) return `# temporal SDK metrics unavailable: HTTP ${response.status}\n`;
    return await response.text();
  } catch (err) {
    return `# temporal SDK metrics unavailable: ${(err as Error).message}\n`;
  }
}

async function page(temporalUrl: string | undefined): Promise<string> {
  const [ours, temporal] = await Promise.all([registry.metrics(), temporalUrl ? temporalPage(temporalUrl) : '']);
  return temporal ? `${ours.trimEnd()}\n${temporal}` : ours;
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * METRICS_PORT, or with it unset the first free of it and the next ports (several workers and an API on one host
 * each get a page). False, warned, when none can be bound: the process goes on without metrics.
 */
async function listenOnFirstFree(server: Server, options: ServeMetricsOptions): Promise<boolean> {
  const { port, host, nextPortsToTry = 0 } = options.metrics;
  const last = Math.min(65535, port + nextPortsToTry);
  for (let candidate = port; candidate <= last; candidate += 1) {
    try {
      await listen(server, candidate, host);
      return true;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE' && candidate < last) continue;
      const tried = last > port ? `${port}-${last}` : String(port);
      options.warn(
        `metrics: cannot listen on ${host}:${tried} (${code ?? (err as Error).message}); this process serves no metrics`,
      );
      return false;
    }
  }
  return false;
}

/** undefined when disabled (METRICS_PORT=0) or when the port cannot be bound (warned, never fatal). */
export async function serveMetrics(options: ServeMetricsOptions): Promise<MetricsServer | undefined> {
  const { port, host } = options.metrics;
  if (port === 0) return undefined;
  collectProcessMetrics();
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found: the metrics are at /metrics\n');
      return;
    }
    page(options.temporalUrl).then(
      (body) => response.writeHead(200, { 'content-type': registry.contentType }).end(body),
      (err: Error) => response.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics: ${err.message}\n`),
    );
  });
  if (!(await listenOnFirstFree(server, options))) return undefined;
  // A scraper's keep-alive connection must not hold the process open at shutdown.
  server.unref();
  const bound = (server.address() as AddressInfo).port;
  const shownHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
  return {
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${bound}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
