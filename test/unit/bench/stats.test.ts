import { describe, expect, it } from 'vitest';
import { p50p99, summarize } from '../../../bench/stats';

describe('bench stats', () => {
  it('gives p50 and p99 of unsorted durations, to a tenth of a millisecond', () => {
    const durations = Array.from({ length: 100 }, (_, i) => 100 - i + 0.04);
    expect(p50p99(durations)).toEqual({ p50Ms: 50, p99Ms: 99 });
    expect(p50p99([3.26])).toEqual({ p50Ms: 3.3, p99Ms: 3.3 });
  });

  it('summarizes a window with the same percentiles', () => {
    const latencies = [5, 1, 4, 2, 3];
    expect(summarize(40, 20_000, latencies)).toEqual({ count: 40, seconds: 20, perSecond: 2, ...p50p99(latencies) });
    expect(summarize(40, 20_000, latencies).p50Ms).toBe(3);
  });
});
