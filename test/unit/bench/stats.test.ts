import { describe, expect, it } from 'vitest';
import { eventsInFlight, p50p99, perDelivery, spreadOver, summarize } from '../../../bench/stats';

describe('bench stats', () => {
  it('gives p50 and p99 of unsorted durations, to a tenth of a millisecond', () => {
    const durations = Array.from({ length: 100 }, (_, i) => 100 - i + 0.04);
    expect(p50p99(durations)).toEqual({ p50Ms: 50, p99Ms: 99 });
    expect(p50p99([3.26])).toEqual({ p50Ms: 3.3, p99Ms: 3.3 });
  });

  it('spreads one figure over the rounds picked, leaving out a round without it', () => {
    const rounds = [
      { on: true, rate: 10 },
      { on: false, rate: 40 },
      { on: true, rate: 30 },
      { on: true, rate: NaN },
      { on: true, rate: 20 },
    ];
    expect(
      spreadOver(
        rounds,
        (r) => r.on,
        (r) => r.rate,
      ),
    ).toEqual({ median: 20, min: 10, max: 30, spreadPct: 100 });
    expect(
      spreadOver(
        rounds,
        (r) => !r.on,
        (r) => r.rate,
      ).median,
    ).toBe(40);
    expect(
      spreadOver(
        rounds,
        () => false,
        (r) => r.rate,
      ).median,
    ).toBeNaN();
  });

  it('summarizes a window with the same percentiles', () => {
    const latencies = [5, 1, 4, 2, 3];
    expect(summarize(40, 20_000, latencies)).toEqual({ count: 40, seconds: 20, perSecond: 2, ...p50p99(latencies) });
    expect(summarize(40, 20_000, latencies).p50Ms).toBe(3);
  });

  it('restates a fan-out window in deliveries: count and rate times the endpoints, latencies per event', () => {
    const events = summarize(40, 20_000, [5, 1, 4, 2, 3]);
    expect(perDelivery(events, 5)).toEqual({ ...events, count: 200, perSecond: 10 });
    expect(perDelivery(events, 1)).toEqual(events);
  });

  it('holds the deliveries in flight as events of that many endpoints, at least one', () => {
    expect(eventsInFlight(200, 5)).toBe(40);
    expect(eventsInFlight(200, 1)).toBe(200);
    expect(eventsInFlight(3, 5)).toBe(1);
  });
});
