import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AttemptResult } from '../core/delivery-contract';

/**
 * The process's Prometheus metrics: one registry, the names operators alert on, and the
 * few functions call sites use to move them. Labels take values from closed sets only (event kinds, error kinds,
 * route patterns, status codes), never an id: every label value is a series kept forever by Prometheus.
 * Workflow code never records here (it is replayed); activities, the API and publishing do.
 */

export const registry = new Registry();

// Delivery attempts take up to DELIVERY_TIMEOUT (60 s at most); most answers come within a second.
const ATTEMPT_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 60];
// API requests are one or two SQL statements; seconds mean something is waiting (pool, Temporal).
const HTTP_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

const eventsPublished = new Counter({
  name: 'parcel_webhooks_events_published_total',
  help: 'Events stored for delivery (a re-publish of a known id is not counted).',
  labelNames: ['type', 'livemode'] as const,
  registers: [registry],
});

const deliveryAttempts = new Counter({
  name: 'parcel_webhooks_delivery_attempts_total',
  help: 'POSTs to endpoints by outcome; error is the failure kind (timeout, tls, http_5xx, ...) or none.',
  labelNames: ['outcome', 'error'] as const,
  registers: [registry],
});

const deliveryAttemptDuration = new Histogram({
  name: 'parcel_webhooks_delivery_attempt_duration_seconds',
  help: 'Time from sending a POST to its answer or failure.',
  labelNames: ['outcome'] as const,
  buckets: ATTEMPT_BUCKETS,
  registers: [registry],
});

const deliveriesAbandoned = new Counter({
  name: 'parcel_webhooks_deliveries_abandoned_total',
  help: 'Deliveries that used every attempt of their ladder without a success.',
  registers: [registry],
});

const httpRequests = new Counter({
  name: 'parcel_webhooks_http_requests_total',
  help: 'API requests answered, by route pattern (unmatched for unknown URLs) and status code.',
  labelNames: ['method', 'route', 'status_code'] as const,
  registers: [registry],
});

const httpRequestDuration = new Histogram({
  name: 'parcel_webhooks_http_request_duration_seconds',
  help: 'API request latency, by route pattern.',
  labelNames: ['method', 'route', 'status_code'] as const,
  buckets: HTTP_BUCKETS,
  registers: [registry],
});

export function countPublished(type: string, livemode: boolean): void {
  eventsPublished.inc({ type, livemode: String(livemode) });
}

/** A status that failed the attempt says only its class: every code would be a series (only a 2xx succeeds). */
export function attemptErrorLabel(result: Pick<AttemptResult, 'succeeded' | 'statusCode' | 'error'>): string {
  if (result.error !== null) return result.error;
  if (result.succeeded) return 'none';
  const statusClass = Math.floor((result.statusCode ?? 0) / 100);
  return statusClass >= 1 && statusClass <= 5 ? `http_${statusClass}xx` : 'http_other';
}

export function observeAttempt(result: Pick<AttemptResult, 'succeeded' | 'statusCode' | 'error' | 'durationMs'>): void {
  const outcome = result.succeeded ? 'succeeded' : 'failed';
  deliveryAttempts.inc({ outcome, error: attemptErrorLabel(result) });
  deliveryAttemptDuration.observe({ outcome }, result.durationMs / 1000);
}

export function countAbandoned(): void {
  deliveriesAbandoned.inc();
}

export function observeHttpRequest(request: {
  method: string;
  route: string;
  statusCode: number;
  seconds: number;
}): void {
  const labels = { method: request.method, route: request.route, status_code: String(request.statusCode) };
  httpRequests.inc(labels);
  httpRequestDuration.observe(labels, request.seconds);
}

// ---- Read at scrape time -------------------------------------------------------------------------------------

/** What pg.Pool exposes, structurally, so infra/ needs nothing from db/. */
export interface PoolStats {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max?: number };
}

const pools = new Map<string, PoolStats>();

function poolGauge(name: string, help: string, read: (pool: PoolStats) => number): Gauge<'pool'> {
  return new Gauge({
    name,
    help,
    labelNames: ['pool'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [label, pool] of pools) this.set({ pool: label }, read(pool));
    },
  });
}

poolGauge(
  'parcel_webhooks_db_pool_max_connections',
  'Connections the pool may open (its max).',
  (p) => p.options.max ?? 10,
);
poolGauge('parcel_webhooks_db_pool_connections', 'Connections the pool holds open, busy or idle.', (p) => p.totalCount);
poolGauge('parcel_webhooks_db_pool_idle_connections', 'Open connections not running a query.', (p) => p.idleCount);
poolGauge(
  'parcel_webhooks_db_pool_waiting_requests',
  'Queries waiting for a connection: the pool is saturated.',
  (p) => p.waitingCount,
);

/** Reports a pool under `label` (api, worker) until the returned function is called. */
export function watchPool(label: string, pool: PoolStats): () => void {
  pools.set(label, pool);
  return () => {
    if (pools.get(label) === pool) pools.delete(label);
  };
}

/** Shared state read from Postgres (domain/operational-state.ts), the same whichever process reports it. */
export interface DatabaseState {
  failingEndpoints: { livemode: boolean; count: number }[];
  outbox: { pending: number; oldestPendingAgeSeconds: number };
}

/** A scrape must answer within Prometheus' timeout (10 s by default) even when Postgres does not. */
const DATABASE_STATE_DEADLINE_MS = 3_000;
/** Every gauge below collects through one read: a scrape costs one round of queries, not one per gauge. */
const DATABASE_STATE_FRESH_MS = 1_000;

let readDatabaseState: (() => Promise<DatabaseState>) | undefined;
let lastRead: { at: number; state: DatabaseState | undefined } | undefined;
let reading: Promise<DatabaseState | undefined> | undefined;

function withDeadline<T>(work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('database state: no answer in time')), DATABASE_STATE_DEADLINE_MS);
  });
  work.catch(() => undefined);
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/** undefined when the read failed or timed out: the gauges then show no sample rather than a stale one. */
async function databaseState(): Promise<DatabaseState | undefined> {
  const read = readDatabaseState;
  if (!read) return undefined;
  if (lastRead && Date.now() - lastRead.at < DATABASE_STATE_FRESH_MS) return lastRead.state;
  reading ??= withDeadline(read())
    .catch(() => undefined)
    .then((state) => {
      lastRead = { at: Date.now(), state };
      reading = undefined;
      return state;
    });
  return reading;
}

new Gauge({
  name: 'parcel_webhooks_endpoints_failing',
  help: 'Enabled endpoints marked failing (read from Postgres; reported by worker processes).',
  labelNames: ['livemode'] as const,
  registers: [registry],
  async collect() {
    const state = await databaseState();
    this.reset();
    for (const { livemode, count } of state?.failingEndpoints ?? []) this.set({ livemode: String(livemode) }, count);
  },
});

new Gauge({
  name: 'parcel_webhooks_outbox_pending_events',
  help: 'Events, and due resend/recover/test deliveries, stored but not yet handed to Temporal (read from Postgres; reported by worker processes).',
  registers: [registry],
  async collect() {
    const state = await databaseState();
    // remove(), not reset(): an unlabelled gauge reset reads 0, which would claim an empty outbox.
    if (state) this.set(state.outbox.pending);
    else this.remove();
  },
});

new Gauge({
  name: 'parcel_webhooks_outbox_oldest_pending_age_seconds',
  help: 'Age of the oldest event (or due resend/recover/test delivery) stored but not yet handed to Temporal; 0 when none waits.',
  registers: [registry],
  async collect() {
    const state = await databaseState();
    // remove(), not reset(): an unlabelled gauge reset reads 0, which would claim an empty outbox.
    if (state) this.set(state.outbox.oldestPendingAgeSeconds);
    else this.remove();
  },
});

/**
 * Makes this process report the shared database state. Only worker processes do (the one that runs `start`
 * included): API replicas would multiply the same series. Several workers report the same values; alert on max().
 */
export function watchDatabaseState(read: () => Promise<DatabaseState>): () => void {
  readDatabaseState = read;
  lastRead = undefined;
  return () => {
    if (readDatabaseState === read) readDatabaseState = undefined;
  };
}

let defaultMetricsOn = false;

/** Node's process metrics (CPU, memory, event loop lag, GC), for service processes only, once. */
export function collectProcessMetrics(): void {
  if (defaultMetricsOn) return;
  defaultMetricsOn = true;
  collectDefaultMetrics({ register: registry });
}
