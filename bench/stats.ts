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
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  return {
    count,
    seconds: Math.round(elapsedMs) / 1000,
    perSecond: Math.round((count / (elapsedMs / 1000)) * 10) / 10,
    p50Ms: Math.round(percentile(sorted, 50)),
    p99Ms: Math.round(percentile(sorted, 99)),
  };
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
