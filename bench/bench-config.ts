/**
 * The benchmark's knobs, read once (the bench is a tool, not the product, so it reads its own environment).
 *   BENCH_PHASES         comma list of phases (plain-post, bare-load, engine-load/all, empty-load, bare-fanout-load, engine-fanout-load/all,
 *                        bare-idle, bare-eager-idle, engine-idle/all, steady, scenarios, baseline, or a scenario name;
 *                        default: every phase and scenario); see main() in delivery.ts. Also given as arguments.
 *   BENCH_PHASE_SECONDS  measured window of each steady phase (default 30; 15 in the baseline)
 *   BENCH_WARMUP_SECONDS warm-up before each window, not counted (default 5)
 *   BENCH_REPS           repetitions of the steady phases (default 3)
 *   BENCH_CONCURRENCY    deliveries in flight in the load phases, fan-out included (default 200)
 *   BENCH_FANOUT_ENDPOINTS endpoints per event in the fan-out steady phases (default 5)
 *   BENCH_BACKLOG_EVENTS events waiting in backoff in the backlog scenario (default 10000; 2000 in the baseline)
 *   BENCH_RATE_LIMIT_EVENTS events queued in the rate-limit scenario (default: the scenario's own; 3000 in the baseline)
 *   BENCH_LARGE_SCALE    size of the large-tables scenario, 1 = 10,000,000 attempts (default 1; 0.25 in the baseline)
 *   BENCH_CHART_ATTEMPTS attempts the charts scenario generates (default 10,000,000; 2,000,000 in the baseline)
 *   BENCH_FANOUT         endpoints in the fan-out scenario (default 100)
 *   BENCH_SLOW_RATE      events/s to each of the slow and fast receivers (default 8)
 *   BENCH_WORKER_PRELOAD a shared library preloaded into the worker processes only (LD_PRELOAD), e.g. /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 (default: none)
 *   BENCH_HEAP_SNAPSHOTS directory for the backlog scenario's heap snapshots of the worker process, idle and with the backlog waiting (default: none)
 *   BENCH_CURVE_STEP_SECONDS    measured window of each offered rate of the curve scenario (default 10)
 *   BENCH_CURVE_WARMUP_SECONDS  warm-up at that rate before its window, not counted (default 3)
 *   BENCH_CURVE_MAX_RATE        the highest offered rate per second the curve's ladder climbs to (default 20000)
 *   BENCH_TRACING_SAMPLER, BENCH_TRACING_SAMPLER_ARG  the sampler of the tracing scenario's traced worker (default always_on)
 *   BENCH_TEMPORAL_CONFIG extra dynamic config for the dev server, `key=value` pairs separated by spaces (default: none)
 *   BENCH_OUT            result file (default bench/results/<date>.json, <date>-cluster.json with --cluster; "-" for stdout only)
 */

/**
 * The baseline (`npm run bench -- baseline`): every steady phase and the scenarios the performance docs quote from
 * one file, sized to finish in about 20 minutes on a 2-core machine. The latency curve has a file of its own
 * (`npm run bench -- curve`): its ladder alone takes about as long.
 */
export const BASELINE = {
  phases: ['steady', 'ordering', 'rate-limit', 'charts', 'backlog', 'large-tables'],
  phaseSeconds: 15,
  backlogEvents: 2_000,
  rateLimitEvents: 3_000,
  largeScale: 0.25,
  chartAttempts: 2_000_000,
};

export interface BenchConfig {
  phases: string[] | undefined;
  phaseMs: number;
  warmupMs: number;
  reps: number;
  concurrency: number;
  backlogEvents: number;
  /** Events of the rate-limit scenario; undefined leaves the scenario's own default. */
  rateLimitEvents: number | undefined;
  /** Size of the large-tables scenario (1 = full). */
  largeScale: number;
  /** Endpoints per event in the fan-out steady phases. */
  fanOutEndpoints: number;
  /** The phases asked for included `baseline`. */
  baseline: boolean;
  heapSnapshots: string | undefined;
  fanOut: number;
  slowRate: number;
  /** Account A's backlog in the fairness scenario (BENCH_FAIRNESS_EVENTS). */
  fairnessEvents: number;
  /** Attempts the charts scenario generates (BENCH_CHART_ATTEMPTS). */
  chartAttempts: number;
  curve: { stepMs: number; warmupMs: number; maxRate: number };
  /** Dynamic config the dev server gets on top of its own (BENCH_TEMPORAL_CONFIG). */
  temporalConfig: Record<string, string>;
  out: string | undefined;
}

function dynamicConfigOf(raw: string | undefined): Record<string, string> {
  const pairs = (raw ?? '').split(/\s+/).filter(Boolean);
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at <= 0) throw new Error(`BENCH_TEMPORAL_CONFIG takes key=value pairs, got "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got "${raw}"`);
  return value;
}

export function benchConfig(argv: string[] = process.argv.slice(2)): BenchConfig {
  // Phases may also be given as arguments: `npm run bench -- engine-load engine-idle`.
  const listed = (argv.length > 0 ? argv : process.env.BENCH_PHASES?.split(','))?.map((p) => p.trim()).filter(Boolean);
  const baseline = listed?.includes('baseline') ?? false;
  const phases = listed?.flatMap((p) => (p === 'baseline' ? BASELINE.phases : [p]));
  const rateLimitEvents = process.env.BENCH_RATE_LIMIT_EVENTS?.trim()
    ? num('BENCH_RATE_LIMIT_EVENTS', 0)
    : baseline
      ? BASELINE.rateLimitEvents
      : undefined;
  const largeScale = num('BENCH_LARGE_SCALE', baseline ? BASELINE.largeScale : 1);
  if (!(largeScale > 0))
    throw new Error(`BENCH_LARGE_SCALE must be a positive number, got "${process.env.BENCH_LARGE_SCALE}"`);
  return {
    phases,
    baseline,
    phaseMs: num('BENCH_PHASE_SECONDS', baseline ? BASELINE.phaseSeconds : 30) * 1000,
    warmupMs: num('BENCH_WARMUP_SECONDS', 5) * 1000,
    reps: Math.max(1, Math.round(num('BENCH_REPS', 3))),
    concurrency: Math.max(1, Math.round(num('BENCH_CONCURRENCY', 200))),
    backlogEvents: Math.round(num('BENCH_BACKLOG_EVENTS', baseline ? BASELINE.backlogEvents : 10_000)),
    rateLimitEvents: rateLimitEvents === undefined ? undefined : Math.max(1, Math.round(rateLimitEvents)),
    largeScale,
    fanOutEndpoints: Math.max(1, Math.round(num('BENCH_FANOUT_ENDPOINTS', 5))),
    heapSnapshots: process.env.BENCH_HEAP_SNAPSHOTS || undefined,
    fanOut: Math.max(1, Math.round(num('BENCH_FANOUT', 100))),
    slowRate: num('BENCH_SLOW_RATE', 8),
    fairnessEvents: Math.max(1, Math.round(num('BENCH_FAIRNESS_EVENTS', 5_000))),
    chartAttempts: Math.round(num('BENCH_CHART_ATTEMPTS', baseline ? BASELINE.chartAttempts : 10_000_000)),
    curve: {
      stepMs: Math.max(1, num('BENCH_CURVE_STEP_SECONDS', 10)) * 1000,
      warmupMs: num('BENCH_CURVE_WARMUP_SECONDS', 3) * 1000,
      maxRate: Math.max(10, num('BENCH_CURVE_MAX_RATE', 20_000)),
    },
    temporalConfig: dynamicConfigOf(process.env.BENCH_TEMPORAL_CONFIG),
    out: process.env.BENCH_OUT,
  };
}
