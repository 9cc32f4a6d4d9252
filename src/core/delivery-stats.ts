/**
 * Delivery statistics per endpoint and UTC hour: how attempts ended and how fast receivers answered. Kept as the
 * attempts are recorded (db/delivery-attempts.ts) and read by the charts (domain/delivery-stats.ts). Pure
 * arithmetic here: the hour an instant falls in, the hours of a window, the latency histogram's buckets and the
 * percentiles read from it.
 */

export const HOUR_MS = 3_600_000;

/** How one attempt ended, as the charts count it. */
export type AttemptOutcomeKind = 'succeeded' | 'failed' | 'abandoned';

/** A failed attempt with no attempt after it ends its delivery: abandoned. Any other failure is retried. */
export function attemptOutcome(succeeded: boolean, finalAttempt: boolean): AttemptOutcomeKind {
  if (succeeded) return 'succeeded';
  return finalAttempt ? 'abandoned' : 'failed';
}

/**
 * Upper bounds (exclusive, ms) of the response-time buckets; one more bucket holds everything from the last bound
 * up, which the 10-second answer limit keeps near it. Spaced closer where receivers usually answer.
 */
export const LATENCY_BOUNDS_MS = [
  25, 50, 75, 100, 150, 200, 300, 400, 500, 750, 1000, 1500, 2000, 3000, 5000, 7500, 10_000,
] as const;
export const LATENCY_BUCKETS = LATENCY_BOUNDS_MS.length + 1;

/** The 1-based histogram bucket (a Postgres array subscript) a response time falls in. */
export function latencyBucket(durationMs: number): number {
  const index = LATENCY_BOUNDS_MS.findIndex((bound) => durationMs < bound);
  return (index === -1 ? LATENCY_BOUNDS_MS.length : index) + 1;
}

/** A histogram holding one response in `bucket`. */
export function oneResponse(bucket: number): number[] {
  return Array.from({ length: LATENCY_BUCKETS }, (_, index) => (index + 1 === bucket ? 1 : 0));
}

/**
 * The response time under which a `fraction` of the responses fall, interpolated inside its bucket (so it is an
 * estimate, within the bucket's width). Null without responses.
 */
export function percentile(histogram: readonly number[], fraction: number): number | null {
  const total = histogram.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = fraction * total;
  let below = 0;
  for (let index = 0; index < histogram.length; index += 1) {
    const count = histogram[index] ?? 0;
    if (count > 0 && below + count >= rank) {
      const lower = index === 0 ? 0 : (LATENCY_BOUNDS_MS[index - 1] as number);
      const upper = LATENCY_BOUNDS_MS[index] ?? lower;
      return Math.round(lower + ((rank - below) / count) * (upper - lower));
    }
    below += count;
  }
  return LATENCY_BOUNDS_MS[LATENCY_BOUNDS_MS.length - 1] as number;
}

export function addHistograms(into: number[], more: readonly number[]): number[] {
  for (let index = 0; index < more.length; index += 1) into[index] = (into[index] ?? 0) + (more[index] ?? 0);
  return into;
}

/** The start of the UTC hour `instant` falls in: 10:59:59.999Z is in 10:00Z, 11:00:00Z starts 11:00Z. */
export function utcHourStart(instant: Date): Date {
  return new Date(Math.floor(instant.getTime() / HOUR_MS) * HOUR_MS);
}

/** The `hours` UTC hours that end with the one `now` is in, oldest first: the current hour counts as one. */
export function hourWindow(now: Date, hours: number): Date[] {
  const last = utcHourStart(now).getTime();
  return Array.from({ length: hours }, (_, index) => new Date(last - (hours - 1 - index) * HOUR_MS));
}

export interface HourCounts {
  /** Start of the UTC hour. */
  hour: Date;
  succeeded: number;
  failed: number;
  abandoned: number;
}

/** Every hour of the window, in order, with the counts found for it and zeros for an hour without attempts. */
export function fillHours(window: readonly Date[], found: readonly HourCounts[]): HourCounts[] {
  const byHour = new Map(found.map((row) => [utcHourStart(row.hour).getTime(), row]));
  return window.map((hour) => {
    const row = byHour.get(hour.getTime());
    return { hour, succeeded: row?.succeeded ?? 0, failed: row?.failed ?? 0, abandoned: row?.abandoned ?? 0 };
  });
}

export interface OutcomeTotals {
  succeeded: number;
  failed: number;
  abandoned: number;
  attempts: number;
  /** Succeeded attempts over all attempts, 0..1; null without attempts. */
  successRate: number | null;
}

export function totalsOf(hours: readonly Omit<HourCounts, 'hour'>[]): OutcomeTotals {
  const sum = (pick: (row: Omit<HourCounts, 'hour'>) => number) => hours.reduce((total, row) => total + pick(row), 0);
  const succeeded = sum((row) => row.succeeded);
  const failed = sum((row) => row.failed);
  const abandoned = sum((row) => row.abandoned);
  const attempts = succeeded + failed + abandoned;
  return { succeeded, failed, abandoned, attempts, successRate: attempts === 0 ? null : succeeded / attempts };
}
