import { afterEach, describe, expect, it } from 'vitest';
import {
  attemptOutcome,
  fillHours,
  hourWindow,
  LATENCY_BUCKETS,
  latencyBucket,
  oneResponse,
  percentile,
  totalsOf,
  utcHourStart,
} from '../../../src/core/delivery-stats';

/** The charts' arithmetic (src/core/delivery-stats.ts): UTC hours, empty hours, outcomes and latency percentiles. */
describe('delivery stats', () => {
  const zone = process.env.TZ;
  afterEach(() => {
    if (zone === undefined) delete process.env.TZ;
    else process.env.TZ = zone;
  });

  it('puts an instant in the UTC hour it falls in: the last millisecond before the hour and the hour itself', () => {
    expect(utcHourStart(new Date('2026-11-25T10:59:59.999Z')).toISOString()).toBe('2026-11-25T10:00:00.000Z');
    expect(utcHourStart(new Date('2026-11-25T11:00:00.000Z')).toISOString()).toBe('2026-11-25T11:00:00.000Z');
    // Written with an offset, it is still the UTC hour: 16:29 in India is 10:59 UTC.
    expect(utcHourStart(new Date('2026-11-25T16:29:59+05:30')).toISOString()).toBe('2026-11-25T10:00:00.000Z');
  });

  it('ignores the server process time zone, even a half-hour one', () => {
    for (const tz of ['UTC', 'Asia/Kolkata', 'America/St_Johns', 'Pacific/Chatham']) {
      process.env.TZ = tz;
      expect(utcHourStart(new Date('2026-11-25T10:45:00Z')).toISOString(), tz).toBe('2026-11-25T10:00:00.000Z');
      const window = hourWindow(new Date('2026-11-25T10:45:00Z'), 24);
      expect(
        window.every((hour) => hour.getUTCMinutes() === 0 && hour.getUTCSeconds() === 0),
        tz,
      ).toBe(true);
    }
  });

  it('a window is the current hour and the ones before it, oldest first', () => {
    const window = hourWindow(new Date('2026-11-25T10:45:00Z'), 24);
    expect(window).toHaveLength(24);
    expect(window[0]?.toISOString()).toBe('2026-11-24T11:00:00.000Z');
    expect(window[23]?.toISOString()).toBe('2026-11-25T10:00:00.000Z');
    const week = hourWindow(new Date('2026-11-25T00:00:00Z'), 168);
    expect(week[0]?.toISOString()).toBe('2026-11-18T01:00:00.000Z');
    expect(week[167]?.toISOString()).toBe('2026-11-25T00:00:00.000Z');
  });

  it('fills hours without attempts with zeros and keeps the counts found', () => {
    const window = hourWindow(new Date('2026-11-25T10:45:00Z'), 4);
    const hours = fillHours(window, [
      { hour: new Date('2026-11-25T08:00:00Z'), succeeded: 5, failed: 2, abandoned: 1 },
    ]);
    expect(
      hours.map((row) => [row.hour.toISOString().slice(11, 16), row.succeeded, row.failed, row.abandoned]),
    ).toEqual([
      ['07:00', 0, 0, 0],
      ['08:00', 5, 2, 1],
      ['09:00', 0, 0, 0],
      ['10:00', 0, 0, 0],
    ]);
    expect(totalsOf(hours)).toEqual({ succeeded: 5, failed: 2, abandoned: 1, attempts: 8, successRate: 5 / 8 });
    expect(totalsOf(fillHours(window, [])).successRate).toBeNull();
  });

  it('counts a failed last attempt as abandoned and any other failure as retried', () => {
    expect(attemptOutcome(true, true)).toBe('succeeded');
    expect(attemptOutcome(false, false)).toBe('failed');
    expect(attemptOutcome(false, true)).toBe('abandoned');
  });

  it('reads percentiles from the response-time histogram', () => {
    expect(latencyBucket(0)).toBe(1);
    expect(latencyBucket(24)).toBe(1);
    expect(latencyBucket(25)).toBe(2);
    expect(latencyBucket(9_999)).toBe(LATENCY_BUCKETS - 1);
    expect(latencyBucket(10_000)).toBe(LATENCY_BUCKETS);
    expect(oneResponse(3)).toEqual(Array.from({ length: LATENCY_BUCKETS }, (_, i) => (i === 2 ? 1 : 0)));
    // 90 answers in 100..150 ms and 10 in 1000..1500 ms.
    const histogram = new Array<number>(LATENCY_BUCKETS).fill(0);
    histogram[latencyBucket(120) - 1] = 90;
    histogram[latencyBucket(1200) - 1] = 10;
    const p50 = percentile(histogram, 0.5) as number;
    const p95 = percentile(histogram, 0.95) as number;
    expect(p50).toBeGreaterThanOrEqual(100);
    expect(p50).toBeLessThan(150);
    expect(p95).toBeGreaterThanOrEqual(1000);
    expect(p95).toBeLessThan(1500);
    expect(percentile(new Array<number>(LATENCY_BUCKETS).fill(0), 0.5)).toBeNull();
  });
});
