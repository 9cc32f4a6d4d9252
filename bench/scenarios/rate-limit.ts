import { newId } from '../../src/core/ids';
import { publishEvent } from '../../src/domain/events';
import { SECRET, startEngine, within, type BenchContext, type EngineVariant } from '../engine';
import { startReceiver } from '../receiver';
import { runPool } from '../stats';
import { exampleEvent } from '../../src/core/event-schemas';

/**
 * BENCH_RATE_LIMIT_EVENTS           events queued for the rate-limited endpoint in each run (default 10000)
 * BENCH_RATE_LIMIT                  the endpoint's rate_limit, deliveries per second (default 50)
 * BENCH_RATE_LIMIT_SECOND           the rate_limit of the second run (default 20; 0 skips it)
 * BENCH_RATE_LIMIT_CAPACITY_EVENTS  events queued for an endpoint without a limit, to measure the engine's own
 *                                   drain in the same run (default 2000)
 */
const EVENTS = Number(process.env.BENCH_RATE_LIMIT_EVENTS ?? 10_000);
const LIMIT = Number(process.env.BENCH_RATE_LIMIT ?? 50);
const SECOND_LIMIT = Number(process.env.BENCH_RATE_LIMIT_SECOND ?? 20);
const CAPACITY_EVENTS = Number(process.env.BENCH_RATE_LIMIT_CAPACITY_EVENTS ?? 2_000);

export interface RateLimitResult extends DrainResult {
  /** The engine's own drain of a queue for an endpoint without a limit, measured in the same run. */
  unthrottledPerSecond: number;
  /** drainPerSecond / the lower of the limit and unthrottledPerSecond: 1 is a drain at all the limit allows. */
  drainVsCapacity: number;
  /** The same at the second limit (BENCH_RATE_LIMIT_SECOND), when run. */
  secondLimit?: DrainResult & { drainVsCapacity: number };
  /** The unthrottled queue's drain, as measured. */
  unthrottled: DrainResult;
}

export interface DrainResult {
  events: number;
  /** Events that reached the receiver within the scenario's bound: all of them unless the machine could not keep up. */
  delivered: number;
  /** The endpoint's rate_limit; null for the unthrottled queue. */
  limit: number | null;
  /** Deliveries per clock second over the drain, its first and last seconds left out (they are partial). */
  drainPerSecond: number;
  /** The median second of the same span. */
  medianPerSecond: number;
  /** The most requests the receiver got in one clock second, first and last seconds included. */
  maxInOneSecond: number;
  /** Clock seconds with more requests than the limit. */
  secondsOverLimit: number;
  /** From the worker's start until the last arrival. */
  drainSeconds: number;
  publishSeconds: number;
  /** Requests the receiver got, attempts on record, and of those the failed ones: events, events, 0. */
  requests: number;
  attemptsOnRecord: number;
  failedAttempts: number;
  /** Requests in each clock second of the drain, in order: the shape behind the figures above. */
  perSecond: number[];
}

/** Arrivals (performance.now() of this process) counted per wall-clock second, the receiver's judge of a limit. */
function perClockSecond(arrivals: number[]): Map<number, number> {
  const counts = new Map<number, number>();
  for (const at of arrivals) {
    const second = Math.floor((performance.timeOrigin + at) / 1000);
    counts.set(second, (counts.get(second) ?? 0) + 1);
  }
  return counts;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? 0 : (sorted[Math.floor((sorted.length - 1) / 2)] as number);
}

const ratio = (drain: number, limit: number, capacity: number) =>
  Math.round((drain / Math.min(limit, capacity)) * 1000) / 1000;

/**
 * The queue's drain at LIMIT and at SECOND_LIMIT, each against the engine's own drain of an unthrottled queue
 * measured in the same run (drainVsCapacity): a drain at the limit is 1 when the engine could go faster, and the
 * engine's own pace bounds it when it cannot.
 */
export async function rateLimitScenario(
  ctx: BenchContext,
  variant: EngineVariant,
  events = EVENTS,
  limit = LIMIT,
): Promise<RateLimitResult> {
  const unthrottled = await drainScenario(ctx, variant, CAPACITY_EVENTS, null);
  const first = await drainScenario(ctx, variant, events, limit);
  const second = SECOND_LIMIT > 0 ? await drainScenario(ctx, variant, events, SECOND_LIMIT) : undefined;
  const capacity = unthrottled.drainPerSecond;
  return {
    ...first,
    unthrottledPerSecond: capacity,
    drainVsCapacity: ratio(first.drainPerSecond, limit, capacity),
    ...(second
      ? { secondLimit: { ...second, drainVsCapacity: ratio(second.drainPerSecond, SECOND_LIMIT, capacity) } }
      : {}),
    unthrottled,
  };
}

/**
 * `events` events queued for one endpoint with rate_limit `limit` (null: none) while no worker runs (stored in
 * the outbox), then a worker starts and lets them go: the receiver should see them drain at the limit, never more
 * in one clock second, every one delivered at its first attempt (a throttled wait is not an attempt).
 */
async function drainScenario(
  ctx: BenchContext,
  variant: EngineVariant,
  events: number,
  limit: number | null,
): Promise<DrainResult> {
  const receiver = await startReceiver();
  const accountId = newId('account');
  const endpointId = newId('endpoint');
  await ctx.pool.query(`INSERT INTO accounts (id, name, status) VALUES ($1, 'Bench', 'active')`, [accountId]);
  await ctx.pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret, rate_limit) VALUES ($1, $2, false, $3, $4, $5)`,
    [endpointId, accountId, receiver.url(), SECRET, limit],
  );
  const tag = accountId.slice(-8);
  const ids = Array.from({ length: events }, (_, i) => `evt_ratelimit_${tag}_${i}`);
  const data = { parcel: { ...exampleEvent('parcel.created').data.parcel, id: 'p_ratelimit' } };
  const t0 = performance.now();
  await runPool(events, 32, (i) =>
    publishEvent({ pool: ctx.pool }, { accountId, livemode: false, type: 'parcel.created', data, id: ids[i] }).then(
      () => undefined,
    ),
  );
  const publishSeconds = (performance.now() - t0) / 1000;

  const started = performance.now();
  const engine = await startEngine(ctx, variant);
  try {
    // Bounded: a machine too loaded to drain in time still reports what it drained (`delivered` < `events`).
    await within(
      Promise.all(ids.map((id) => receiver.waitFor(id))),
      (events / (limit ?? 20)) * 2_000 + 300_000,
      'the drain of the queue',
    ).catch(() => undefined);
    const arrivals = ids.map((id) => receiver.arrivalOf(id)).filter((at): at is number => at !== undefined);
    const counts = perClockSecond(arrivals);
    const seconds = [...counts.keys()].sort((a, b) => a - b);
    const inner = seconds.slice(1, -1);
    const innerCount = inner.reduce((sum, s) => sum + (counts.get(s) ?? 0), 0);
    // A record is written just after its answer: the last ones may land a moment after their arrivals.
    const onRecord = async () =>
      (
        await ctx.pool.query<{ attempts: number; failed: number }>(
          `SELECT count(*)::int AS attempts, count(*) FILTER (WHERE NOT succeeded)::int AS failed FROM delivery_attempts WHERE endpoint_id = $1`,
          [endpointId],
        )
      ).rows;
    let rows = await onRecord();
    for (let waited = 0; (rows[0]?.attempts ?? 0) < arrivals.length && waited < 30_000; waited += 500) {
      await new Promise((resolve) => setTimeout(resolve, 500));
      rows = await onRecord();
    }
    return {
      events,
      delivered: arrivals.length,
      limit,
      drainPerSecond: inner.length === 0 ? 0 : Math.round((innerCount / inner.length) * 10) / 10,
      medianPerSecond: median(inner.map((s) => counts.get(s) ?? 0)),
      maxInOneSecond: Math.max(...counts.values()),
      secondsOverLimit: limit === null ? 0 : [...counts.values()].filter((n) => n > limit).length,
      drainSeconds: Math.round(((Math.max(...arrivals) - started) / 1000) * 10) / 10,
      publishSeconds: Math.round(publishSeconds * 10) / 10,
      requests: receiver.requests,
      attemptsOnRecord: rows[0]?.attempts ?? 0,
      failedAttempts: rows[0]?.failed ?? 0,
      perSecond:
        seconds.length === 0
          ? []
          : Array.from(
              { length: (seconds.at(-1) as number) - (seconds[0] as number) + 1 },
              (_, i) => counts.get((seconds[0] as number) + i) ?? 0,
            ),
    };
  } finally {
    await engine.stop();
    await receiver.close();
  }
}
