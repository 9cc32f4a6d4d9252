export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export interface Summary {
  count: number;
  seconds: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

export function summarize(count: number, elapsedMs: number, latenciesMs: number[]): Summary {
  return {
    count,
    seconds: Math.round(elapsedMs) / 1000,
    perSecond: Math.round((count / (elapsedMs / 1000)) * 10) / 10,
    ...p50p99(latenciesMs),
  };
}

/** p50 and p99 of durations in ms, to a tenth of a millisecond. */
export function p50p99(durationsMs: number[]): { p50Ms: number; p99Ms: number } {
  const sorted = [...durationsMs].sort((a, b) => a - b);
  const tenth = (ms: number) => Math.round(ms * 10) / 10;
  return { p50Ms: tenth(percentile(sorted, 50)), p99Ms: tenth(percentile(sorted, 99)) };
}

/** Runs task(i) for i in [0, total) with at most `concurrency` in flight. */
export async function runPool(total: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(concurrency, total) }, async () => {
    while (next < total) {
      const i = next++;
      await task(i);
    }
  });
  await Promise.all(lanes);
}

export interface Window {
  /** Called when the warm-up ends and the measured window begins (start meters here). */
  onStart?(): Promise<void>;
  /** Called when the window closes, before in-flight tasks drain (read meters here). */
  onEnd?(completed: number): Promise<void>;
}

/**
 * A closed loop: `concurrency` lanes each run task(i) back to back for warm-up + window. Only tasks completed
 * inside the window count, and only those started inside it give a latency, so the figures describe the
 * steady state, not the ramp-up or the drain. task resolves with its latency in ms (or undefined for none).
 */
export async function runSteady(
  options: { warmupMs: number; windowMs: number; concurrency: number },
  task: (i: number) => Promise<number | undefined>,
  window: Window = {},
): Promise<Summary> {
  const began = performance.now();
  const windowStart = began + options.warmupMs;
  const windowEnd = windowStart + options.windowMs;
  let next = 0;
  let completed = 0;
  const latencies: number[] = [];
  let started: Promise<void> = Promise.resolve();
  let ended: Promise<void> | undefined;
  const end = () => (ended ??= started.then(() => window.onEnd?.(completed)));
  const startTimer = setTimeout(() => {
    started = window.onStart?.() ?? Promise.resolve();
  }, options.warmupMs);
  const endTimer = setTimeout(() => void end(), options.warmupMs + options.windowMs);
  const lane = async () => {
    while (performance.now() < windowEnd) {
      const t0 = performance.now();
      const latency = await task(next++);
      const t1 = performance.now();
      if (t1 >= windowStart && t1 <= windowEnd) {
        completed += 1;
        if (t0 >= windowStart && latency !== undefined) latencies.push(latency);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, lane));
  } finally {
    clearTimeout(startTimer);
    clearTimeout(endTimer);
  }
  // The last lane may finish before a late timer fires: the window still closes exactly once.
  await end();
  return summarize(completed, options.windowMs, latencies);
}

export interface Spread {
  median: number;
  min: number;
  max: number;
  /** (max - min) / median, in percent. */
  spreadPct: number;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

export function spread(values: number[]): Spread {
  if (values.length === 0) return { median: NaN, min: NaN, max: NaN, spreadPct: NaN };
  const m = median(values);
  const min = Math.min(...values);
  const max = Math.max(...values);
  const round = (n: number) => Math.round(n * 100) / 100;
  return {
    median: round(m),
    min: round(min),
    max: round(max),
    spreadPct: m === 0 ? 0 : Math.round(((max - min) / m) * 1000) / 10,
  };
}

/**
 * The spread of one figure over the rounds that `keep` picks. A round without the figure (NaN: no delivery both
 * started and ended in its window has a latency) is left out, not counted as a zero.
 */
export function spreadOver<T>(rounds: T[], keep: (round: T) => boolean, pick: (round: T) => number): Spread {
  return spread(rounds.filter(keep).map(pick).filter(Number.isFinite));
}

/**
 * The repetitions of one phase folded into one object of the same shape: every number becomes its median, min,
 * max and spread over the repetitions; other values are taken from the first.
 */
export function aggregate(reps: unknown[]): unknown {
  const first = reps[0];
  if (typeof first === 'number')
    return spread(reps.filter((r): r is number => typeof r === 'number' && Number.isFinite(r)));
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return first;
  const keys = new Set(reps.flatMap((r) => (r && typeof r === 'object' ? Object.keys(r) : [])));
  return Object.fromEntries(
    [...keys].map((k) => [
      k,
      aggregate(reps.map((r) => (r as Record<string, unknown>)[k]).filter((v) => v !== undefined)),
    ]),
  );
}

/** Events in flight for `deliveries` deliveries in flight when each event goes to `endpoints` endpoints (at least one). */
export function eventsInFlight(deliveries: number, endpoints: number): number {
  return Math.max(1, Math.round(deliveries / Math.max(1, endpoints)));
}

/** A summary of events, each `endpoints` deliveries, restated in deliveries (count and rate; latencies stay per event). */
export function perDelivery(summary: Summary, endpoints: number): Summary {
  return {
    ...summary,
    count: summary.count * endpoints,
    perSecond: Math.round(summary.perSecond * endpoints * 10) / 10,
  };
}
