import { describe, expect, it } from 'vitest';
import {
  clearlySaturated,
  curvePoint,
  highestRateWithinP99,
  rateLadder,
  runOpenLoop,
  saturated,
  scheduledOffsetMs,
  sendsIn,
  type Clock,
  type CurvePoint,
} from '../../../bench/open-loop';

/** A clock that only moves when the loop sleeps: by the sleep, plus `lateMs` for a wake-up that comes late. */
function fakeClock(lateMs: (sleep: number) => number = () => 0): Clock & { sleeps: number[] } {
  let now = 1_000;
  const sleeps: number[] = [];
  return {
    sleeps,
    now: () => now,
    async sleep(ms) {
      sleeps.push(ms);
      now += ms + lateMs(sleeps.length);
    },
  };
}

const point = (offeredPerSecond: number, achievedPerSecond: number, p99Ms: number): CurvePoint => ({
  offeredPerSecond,
  achievedPerSecond,
  p50Ms: p99Ms / 2,
  p99Ms,
  measured: 100,
  notArrived: 0,
});

describe('bench/open-loop: the rate ladder', () => {
  it('climbs from 10/s in fine steps through the hundreds, then by 1-1.2-1.5-2-3-4-6-8 per decade, up to the cap', () => {
    expect(rateLadder(200)).toEqual([10, 20, 40, 60, 80, 100, 120, 150, 200]);
    expect(rateLadder(2_500)).toEqual([
      10, 20, 40, 60, 80, 100, 120, 150, 200, 300, 400, 600, 800, 1000, 1200, 1500, 2000,
    ]);
    expect(rateLadder(10)).toEqual([10]);
  });
});

describe('bench/open-loop: the open-loop scheduler', () => {
  it('schedules send i at i/rate seconds and makes every send due before the end', () => {
    expect(scheduledOffsetMs(0, 40)).toBe(0);
    expect(scheduledOffsetMs(3, 40)).toBe(75);
    expect(sendsIn(1_000, 40)).toBe(40);
    expect(sendsIn(1_010, 40)).toBe(41);
    expect(sendsIn(500, 3)).toBe(2);
  });

  it('sends at the clock times of the schedule, sleeping exactly until the next one is due', async () => {
    const clock = fakeClock();
    const sent: Array<[number, number, number]> = [];
    const { began, sent: count } = await runOpenLoop({ ratePerSecond: 40, durationMs: 200, clock }, (i, at) =>
      sent.push([i, at, clock.now()]),
    );
    expect(began).toBe(1_000);
    expect(count).toBe(8);
    expect(sent).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => [i, 1_000 + i * 25, 1_000 + i * 25]));
    expect(clock.sleeps).toEqual([25, 25, 25, 25, 25, 25, 25]);
  });

  it('does not wait for earlier sends: a send that never finishes delays nothing', async () => {
    const clock = fakeClock();
    const times: number[] = [];
    await runOpenLoop({ ratePerSecond: 10, durationMs: 500, clock }, (_i, at) => {
      times.push(at);
      void new Promise(() => undefined);
    });
    expect(times).toEqual([1_000, 1_100, 1_200, 1_300, 1_400]);
  });

  it('after a late wake-up sends everything due at once, each stamped with its scheduled time, and catches up', async () => {
    // The second sleep wakes 95 ms late (a busy event loop): sends 2 to 5 are due by then.
    const clock = fakeClock((n) => (n === 2 ? 95 : 0));
    const sent: Array<[number, number, number]> = [];
    await runOpenLoop({ ratePerSecond: 40, durationMs: 200, clock }, (i, at) => sent.push([i, at, clock.now()]));
    expect(sent.map(([i, at]) => [i, at])).toEqual([0, 1, 2, 3, 4, 5, 6, 7].map((i) => [i, 1_000 + i * 25]));
    // Sent at 1,145: the latency of send 2 is measured from 1,050, not from when it went out.
    expect(sent.filter(([, , actual]) => actual === 1_145).map(([i]) => i)).toEqual([2, 3, 4, 5]);
    expect(sent.at(-1)).toEqual([7, 1_175, 1_175]);
  });
});

describe('bench/open-loop: a point of the curve', () => {
  it('takes latency from the scheduled time of sends scheduled in the window, and the achieved rate from arrivals in it', () => {
    const sent = [
      { scheduledAt: 900, arrivedAt: 1_010 }, // warm-up: arrives in the window, no latency counted
      ...Array.from({ length: 98 }, (_, i) => ({ scheduledAt: 1_000 + i * 10, arrivedAt: 1_000 + i * 10 + 5 })),
      { scheduledAt: 1_980, arrivedAt: 2_400 }, // scheduled in the window, arrives after it: the p99
      { scheduledAt: 1_990, arrivedAt: 2_500 },
    ];
    const p = curvePoint(100, 1_000, 2_000, sent);
    expect(p).toEqual({
      offeredPerSecond: 100,
      achievedPerSecond: 99,
      p50Ms: 5,
      p99Ms: 420,
      measured: 100,
      notArrived: 0,
    });
  });

  it('counts a send that never arrived, with an endless latency that a p99 over it shows', () => {
    const sent = [
      ...Array.from({ length: 98 }, (_, i) => ({ scheduledAt: 1_000 + i * 10, arrivedAt: 1_000 + i * 10 + 5 })),
      { scheduledAt: 1_980, arrivedAt: Infinity },
      { scheduledAt: 1_990, arrivedAt: Infinity },
    ];
    const p = curvePoint(100, 1_000, 2_000, sent);
    expect(p).toMatchObject({ achievedPerSecond: 98, p50Ms: 5, p99Ms: Infinity, measured: 100, notArrived: 2 });
    expect(saturated(p)).toBe(true);
    // Written to JSON and read back, the endless p99 is null: still saturated, still over any bound.
    const read = JSON.parse(JSON.stringify({ ...p, achievedPerSecond: 100 })) as CurvePoint;
    expect(read.p99Ms).toBeNull();
    expect(saturated(read)).toBe(true);
    expect(highestRateWithinP99([read])).toBeNull();
  });

  it('is saturated when it achieves under 90% of the offered rate or its p99 passes 2 s', () => {
    expect(saturated(point(100, 95, 1_500))).toBe(false);
    expect(saturated(point(100, 89.9, 50))).toBe(true);
    expect(saturated(point(100, 100, 2_001))).toBe(true);
    expect(saturated(point(100, 100, NaN))).toBe(true);
  });

  it('ends a ladder only when two steps in a row were saturated', () => {
    expect(clearlySaturated([point(10, 10, 20), point(20, 12, 900)])).toBe(false);
    expect(clearlySaturated([point(20, 12, 900), point(40, 40, 30)])).toBe(false);
    expect(clearlySaturated([point(10, 10, 20), point(20, 12, 900), point(40, 13, 3_000)])).toBe(true);
    expect(clearlySaturated([point(10, 3, 5_000)])).toBe(false);
  });
});

describe('bench/open-loop: the highest rate with a p99 at or under 100 ms', () => {
  it('is the highest sustained offered rate whose p99 is at or under 100 ms, even past a noisy step', () => {
    const points = [
      point(10, 10, 20),
      point(20, 20, 100),
      point(40, 40, 130),
      point(60, 59, 90),
      point(80, 60, 95),
      point(100, 60, 4_000),
    ];
    // 80/s kept its p99 under 100 ms but achieved only 60/s: not sustained, not counted.
    expect(highestRateWithinP99(points)).toBe(60);
    expect(highestRateWithinP99(points, 50)).toBe(10);
  });

  it('is null when no rate kept its p99 at or under the bound', () => {
    expect(highestRateWithinP99([point(10, 10, 101)])).toBeNull();
    expect(highestRateWithinP99([])).toBeNull();
  });
});
