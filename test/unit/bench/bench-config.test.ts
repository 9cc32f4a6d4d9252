import { afterEach, describe, expect, it, vi } from 'vitest';
import { BASELINE, benchConfig } from '../../../bench/bench-config';

describe('bench/bench-config: the baseline', () => {
  afterEach(() => vi.unstubAllEnvs());

  it('expands `baseline` into the steady phases and its scenarios, at its own sizes', () => {
    const config = benchConfig(['baseline']);
    expect(config.baseline).toBe(true);
    expect(config.phases).toEqual(BASELINE.phases);
    expect(config.phases).not.toContain('curve');
    expect(config.phaseMs).toBe(BASELINE.phaseSeconds * 1000);
    expect(config.backlogEvents).toBe(BASELINE.backlogEvents);
    expect(config.rateLimitEvents).toBe(BASELINE.rateLimitEvents);
    expect(config.largeScale).toBe(BASELINE.largeScale);
    expect(config.chartAttempts).toBe(BASELINE.chartAttempts);
    expect(config.fanOutEndpoints).toBe(5);
  });

  it('lets the environment override a baseline size', () => {
    vi.stubEnv('BENCH_PHASE_SECONDS', '4');
    vi.stubEnv('BENCH_LARGE_SCALE', '0.01');
    const config = benchConfig(['baseline']);
    expect(config.phaseMs).toBe(4000);
    expect(config.largeScale).toBe(0.01);
  });

  it("keeps the full sizes and the scenario's own defaults outside the baseline", () => {
    const config = benchConfig(['curve']);
    expect(config.baseline).toBe(false);
    expect(config.phases).toEqual(['curve']);
    expect(config.phaseMs).toBe(30_000);
    expect(config.rateLimitEvents).toBeUndefined();
    expect(config.largeScale).toBe(1);
  });

  it('refuses a scale that is not positive', () => {
    vi.stubEnv('BENCH_LARGE_SCALE', '0');
    expect(() => benchConfig(['large-tables'])).toThrow(/BENCH_LARGE_SCALE/);
  });
});
