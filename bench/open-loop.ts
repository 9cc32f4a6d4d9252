import { percentile } from './stats';

/**
 * The pure parts of the latency curve (bench/scenarios/curve.ts): the ladder of offered rates, an open-loop
 * sender driven by a clock, one point of the curve from what was sent and when it arrived, when a system is
 * saturated, and the headline rule. No I/O here, so a fake clock tests the timing math.
 */

/** A system's ladder stops after a step whose achieved rate is under this share of the offered rate... */
export const SATURATED_ACHIEVED_SHARE = 0.9;
/** ...or whose p99 is over this: latency measured from the schedule only grows once the backlog does. */
export const SATURATED_P99_MS = 2_000;
/** The headline's latency bound: the highest offered rate with a p99 at or under it. */
export const HEADLINE_P99_MS = 100;

/**
 * Offered rates per second, from 10 up to `maxRate`: 10, 20, 40, 60, 80, then 1, 1.2, 1.5, 2, 3, 4, 6 and 8
 * times each power of ten from 100 (100, 120, 150, 200, 300, ..., 1000, 1200, ...). Fine where Temporal
 * saturates (tens to a couple of hundred per second), coarse where only the plain POST loop goes.
 */
export function rateLadder(maxRate: number): number[] {
  const rates = [10, 20, 40, 60, 80];
  for (let decade = 100; decade <= maxRate; decade *= 10) {
    for (const m of [1, 1.2, 1.5, 2, 3, 4, 6, 8]) rates.push(Math.round(decade * m));
  }
  return rates.filter((r) => r <= maxRate);
}

export interface Clock {
  now(): number;
  sleep(ms: number): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
};

/** When the i-th send of an open loop at `ratePerSecond` is due, in ms after the loop began. */
export function scheduledOffsetMs(i: number, ratePerSecond: number): number {
  return (i * 1000) / ratePerSecond;
}

/** The sends an open loop of `durationMs` makes: every one due before the end. */
export function sendsIn(durationMs: number, ratePerSecond: number): number {
  return Math.ceil((durationMs * ratePerSecond) / 1000);
}

/**
 * An open loop: send(i, scheduledAt) for every i due in `durationMs`, each at its time on the clock, whether or
 * not earlier sends have finished. A late wake-up (a busy event loop) sends everything due at once, each with
 * its own scheduled time, so the caller measures latency from the schedule and a stall counts in full (no
 * coordinated omission). send must not block: it starts the work and keeps its promise. Returns when the last
 * send is made, with the loop's start time.
 */
export async function runOpenLoop(
  options: { ratePerSecond: number; durationMs: number; clock?: Clock },
  send: (i: number, scheduledAt: number) => void,
): Promise<{ began: number; sent: number }> {
  const clock = options.clock ?? realClock;
  const total = sendsIn(options.durationMs, options.ratePerSecond);
  const began = clock.now();
  const due = (i: number) => began + scheduledOffsetMs(i, options.ratePerSecond);
  let next = 0;
  while (next < total) {
    const now = clock.now();
    while (next < total && due(next) <= now) {
      send(next, due(next));
      next += 1;
    }
    if (next < total) await clock.sleep(Math.max(0, due(next) - clock.now()));
  }
  return { began, sent: total };
}

/** One send of a step: when it was due and when its first attempt arrived (the clock's time). */
export interface Sent {
  scheduledAt: number;
  arrivedAt: number;
}

export interface CurvePoint {
  offeredPerSecond: number;
  /** Arrivals inside the measured window per second of it. */
  achievedPerSecond: number;
  /** From the scheduled send to the arrival, of the sends scheduled inside the window. */
  p50Ms: number;
  p99Ms: number;
  /** Sends scheduled inside the window (each gave a latency). */
  measured: number;
  /** Of those, the ones that failed or never arrived (latency endless: p99 is null in JSON once over 1%). */
  notArrived: number;
}

const round1 = (n: number) => Math.round(n * 10) / 10;

/** A point of the curve from one step's sends, measured over [windowStart, windowEnd) on the clock. */
export function curvePoint(offeredPerSecond: number, windowStart: number, windowEnd: number, sent: Sent[]): CurvePoint {
  const inWindow = (t: number) => t >= windowStart && t < windowEnd;
  const arrivals = sent.filter((s) => inWindow(s.arrivedAt)).length;
  const measured = sent.filter((s) => inWindow(s.scheduledAt));
  const latencies = measured.map((s) => s.arrivedAt - s.scheduledAt).sort((a, b) => a - b);
  return {
    offeredPerSecond,
    achievedPerSecond: round1(arrivals / ((windowEnd - windowStart) / 1000)),
    p50Ms: round1(percentile(latencies, 50)),
    p99Ms: round1(percentile(latencies, 99)),
    measured: latencies.length,
    notArrived: measured.filter((s) => !Number.isFinite(s.arrivedAt)).length,
  };
}

/** Past what the system sustains at this step: its backlog grew, or its latency is the backlog's. */
export function saturated(point: CurvePoint): boolean {
  return (
    point.achievedPerSecond < SATURATED_ACHIEVED_SHARE * point.offeredPerSecond || !p99AtMost(point, SATURATED_P99_MS)
  );
}

/** An endless p99 is Infinity in the run and null once written to JSON: neither is at most anything. */
const p99AtMost = (point: CurvePoint, ms: number) => typeof point.p99Ms === 'number' && point.p99Ms <= ms;

/**
 * Clearly saturated: the last two steps both were, so one noisy step on a shared machine does not end a ladder
 * and the ladder goes one step past saturation.
 */
export function clearlySaturated(points: CurvePoint[]): boolean {
  return points.length >= 2 && points.slice(-2).every(saturated);
}

/**
 * The headline: the highest offered rate the system sustained (achieved at least 90% of it) with a p99 at or
 * under `p99Ms`; null when no rate did.
 */
export function highestRateWithinP99(points: CurvePoint[], p99Ms = HEADLINE_P99_MS): number | null {
  const within = points.filter(
    (p) => p99AtMost(p, p99Ms) && p.achievedPerSecond >= SATURATED_ACHIEVED_SHARE * p.offeredPerSecond,
  );
  return within.length === 0 ? null : Math.max(...within.map((p) => p.offeredPerSecond));
}
