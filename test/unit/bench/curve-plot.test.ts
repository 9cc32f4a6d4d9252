import { describe, expect, it } from 'vitest';
import { plotCurve } from '../../../bench/curve-plot';
import type { CurveResult } from '../../../bench/scenarios/curve';

const point = (offeredPerSecond: number, achievedPerSecond: number, p50Ms: number, p99Ms: number) => ({
  offeredPerSecond,
  achievedPerSecond,
  p50Ms,
  p99Ms,
  measured: 100,
  notArrived: 0,
});

const curve: CurveResult = {
  engineRateAtP99Under100Ms: 80,
  bareRateAtP99Under100Ms: 20,
  engineWorkflowsUnfinished: 0,
  points: {
    engine: [
      point(10, 10, 3, 9),
      point(20, 20, 3, 10),
      point(40, 40, 4, 20),
      point(80, 79, 8, 90),
      point(100, 70, 900, 3_000),
    ],
    bare: [point(10, 10, 50, 80), point(20, 20, 55, 95), point(40, 30, 700, 2_500)],
    plainPost: [point(10, 10, 1, 2), point(100, 100, 1, 3), point(1_000, 998, 2, 8)],
  },
  settings: {
    stepSeconds: 10,
    warmupSeconds: 3,
    maxRate: 20_000,
    engineVariant: 'all',
    headlineP99Ms: 100,
    saturatedBelowAchievedShare: 0.9,
    saturatedAboveP99Ms: 2_000,
  },
};

describe('bench/curve-plot: the latency curve as an SVG', () => {
  it('draws p99 and p50 of every system against the offered rate on log axes, with the headline and the 100 ms line', () => {
    const svg = plotCurve({
      startedAt: '2026-01-02T00:00:00.000Z',
      machine: { cores: 2, cpuModel: 'Test CPU' },
      scenarios: { curve },
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('2026-01-02: 2 cores (Test CPU), open loop, 10 s per rate after 3 s warm-up');
    expect(svg).toContain('Highest rate with p99 at or under 100 ms: engine 80/s, bare Temporal 20/s (4.0x)');
    // Two lines (p99 and p50) per system, one mark per point and per percentile.
    expect(svg.match(/<path /g)).toHaveLength(6);
    expect(svg.match(/<circle [^>]*><title>/g)).toHaveLength(2 * (5 + 3 + 3));
    expect(svg).toContain('<title>engine as shipped at 80/s offered: 79/s achieved, p50 8.0 ms, p99 90.0 ms</title>');
    // The saturated steps are hollow: engine at 100/s, bare Temporal at 40/s, each twice.
    expect(svg.match(/fill="#fff" stroke="#(3b6ea5|d9822b)" stroke-width="1.5"><title>/g)).toHaveLength(4);
    expect(svg).toContain('>100 ms<');
    expect(svg).not.toMatch(/NaN|undefined|Infinity/);
  });

  it('places the x axis logarithmically: 10, 100 and 1,000 per second are evenly spaced', () => {
    const svg = plotCurve({ scenarios: { curve } });
    const tickX = (label: string) =>
      Number(
        new RegExp(`<text x="([\\d.]+)" y="[\\d.]+" [^>]*text-anchor="middle" fill="#555">${label}<`).exec(svg)?.[1],
      );
    const [x10, x100, x1000] = [tickX('10'), tickX('100'), tickX('1000')];
    expect(x100 - x10).toBeGreaterThan(100);
    expect(x1000 - x100).toBeCloseTo(x100 - x10, 6);
  });

  it('draws a step whose latency is endless (null in JSON) on the top edge, saying so', () => {
    const endless = { ...point(40, 2, 0, 0), p50Ms: null, p99Ms: null, notArrived: 380 } as unknown as ReturnType<
      typeof point
    >;
    const svg = plotCurve({
      scenarios: { curve: { ...curve, points: { ...curve.points, bare: [...curve.points.bare, endless] } } },
    });
    expect(svg).toContain(
      '<title>bare Temporal at 40/s offered: 2/s achieved, p50 endless, p99 endless, 380 never arrived</title>',
    );
    expect(svg).toMatch(
      /<circle cx="[\d.]+" cy="64" r="3" fill="#fff" stroke="#d9822b" stroke-width="1.5"><title>bare Temporal at 40\/s offered: 2\/s/,
    );
    expect(svg).not.toMatch(/NaN|undefined|Infinity/);
  });

  it('refuses a result file without a curve', () => {
    expect(() => plotCurve({})).toThrow(/scenarios\.curve/);
  });
});
