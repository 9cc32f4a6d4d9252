import { describe, expect, it } from 'vitest';
import {
  baselineTables,
  CLOUD_USD_PER_MILLION_ACTIONS,
  spliceTables,
  TABLES_END,
  TABLES_START,
} from '../../../bench/baseline-table';
import { cost, medianAt, ratios, type SteadyResults } from '../../../bench/figures';

const s = (median: number) => ({ median, min: median * 0.9, max: median * 1.1 });
const phase = (perSecond: number, p50Ms: number, cpuTotalMs: number, actions: number, historyActions?: number) => ({
  median: {
    summary: { perSecond: s(perSecond), p50Ms: s(p50Ms), p99Ms: s(p50Ms * 3) },
    cpuMsPerDelivery: {
      benchMs: s(cpuTotalMs / 2),
      temporalMs: s(cpuTotalMs / 3),
      postgresMs: s(cpuTotalMs / 6),
      totalMs: s(cpuTotalMs),
    },
    actionsPerDelivery: { total: s(actions), byType: {} },
    ...(historyActions === undefined ? {} : { historyActions: s(historyActions) }),
  },
});

const steady: SteadyResults = {
  'plain-post': phase(7000, 0.5, 0.14, 0),
  'bare-load': phase(50, 900, 30, 2, 2),
  'engine-load/all': phase(80, 700, 24, 1, 1),
  'empty-load': phase(100, 400, 12, 1, 1),
  'bare-fanout-load': phase(100, 1000, 20, 1.2, 6),
  'engine-fanout-load/all': phase(250, 600, 8, 0.2, 1),
  'bare-idle': phase(15, 50, 40, 2),
  'bare-eager-idle': phase(100, 6, 20, 2),
  'engine-idle/all': phase(200, 4, 20, 1),
};

describe('bench/figures: the engine against bare Temporal, in one run', () => {
  it('reads the median of a folded number, and nothing where there is none', () => {
    expect(medianAt(steady, 'bare-load', ['summary', 'perSecond'])).toBe(50);
    expect(medianAt(steady, 'bare-load', ['summary', 'nothing'])).toBeUndefined();
    expect(medianAt(steady, 'no-such-phase', ['summary', 'perSecond'])).toBeUndefined();
  });

  it('divides rates and unloaded latencies by bare Temporal, the fan-out by the bare fan-out', () => {
    const r = ratios(steady);
    expect(r.all).toEqual({
      deliveriesPerSecondVsBareTemporal: 1.6,
      deliveriesPerSecondVsEmptyWorkflow: 0.8,
      deliveriesPerSecondVsPlainPost: 0.011,
      unloadedP50VsBareTemporal: 0.08,
      unloadedP50VsTemporalEagerFloor: 0.667,
    });
    expect(r.fanOut).toEqual({ deliveriesPerSecondVsBareTemporal: 2.5 });
  });

  it('leaves out a ratio whose phase did not run', () => {
    const { 'bare-fanout-load': _gone, ...rest } = steady;
    expect(ratios(rest).fanOut).toEqual({});
    expect(cost(rest, 5).cpuPerDeliveryVsBareFanOut).toBeUndefined();
  });

  it('gives CPU per delivery against bare Temporal, and actions per delivery from the counter and from one history', () => {
    const c = cost(steady, 5);
    expect(c.cpuPerDeliveryVsBare).toBe(0.8);
    expect(c.cpuPerDeliveryVsBareFanOut).toBe(0.4);
    expect(c.actionsPerDelivery).toEqual({ engine: 1, bare: 2, engineFanOut: 0.2, bareFanOut: 1.2 });
    // One history is one event: a fan-out's holds its five deliveries.
    expect(c.historyActionsPerDelivery).toEqual({ engine: 1, bare: 2, engineFanOut: 0.2, bareFanOut: 1.2 });
  });
});

describe('bench/baseline-table: the tables the docs quote', () => {
  const file = {
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:18:00.000Z',
    machine: { cores: 2, cpuModel: 'Test CPU' },
    settings: { reps: 3, phaseMs: 15_000, warmupMs: 5_000, concurrency: 200, fanOutEndpoints: 5 },
    steady,
    ratios: ratios(steady),
    cost: cost(steady, 5),
    scenarios: {
      ordering: {
        parcels: 20,
        eventsPerParcel: 5,
        inversions: 0,
        unorderedInversions: 29,
        orderedPerSecond: 15.6,
        unorderedPerSecond: 47.9,
      },
    },
  };

  it('puts each phase in a row with its ratio, CPU and actions', () => {
    const md = baselineTables(file);
    expect(md).toContain('2 cores (Test CPU)');
    expect(md).toContain('the whole run 18 minutes');
    expect(md).toMatch(
      /\| \*\*engine\*\* \(publish -> the POST arrives\) \| 80 \(72-88\) \| \*\*1\.6x\*\* \| 12 \/ 8 \/ 4 = \*\*24\*\* \| 1 \| 4 \/ 12 \|/,
    );
    expect(md).toMatch(
      /\| \*\*engine, fan-out\*\* \(every event to 5 endpoints\) \| 250 \(225-275\) \| \*\*2\.5x\*\* \|/,
    );
    expect(md).toContain('`cost.cpuPerDeliveryVsBare`): **0.8**');
    expect(md).toContain(
      '| order per parcel (`ordering`) | 20 parcels x 5 events: 0 inversions ordered (29 unordered)',
    );
  });

  it('prices a million deliveries at the published price per action', () => {
    const md = baselineTables(file);
    expect(md).toContain(`| **engine**, one endpoint per event | 1 | $${CLOUD_USD_PER_MILLION_ACTIONS} |`);
    expect(md).toContain('| bare Temporal, 5 activities | 1.2 | $60 |');
  });

  it('marks what a file lacks instead of failing', () => {
    const md = baselineTables({ steady: {} });
    expect(md).toContain('| **engine** (publish -> the POST arrives) | - | - | - | - | - |');
    expect(md).not.toContain('| scenario |');
  });

  it('replaces the tables between the markers, and only there', () => {
    const doc = `# Doc\n\nbefore\n${TABLES_START}\nold table\n${TABLES_END}\nafter\n`;
    expect(spliceTables(doc, '| new |\n')).toBe(`# Doc\n\nbefore\n${TABLES_START}\n| new |\n${TABLES_END}\nafter\n`);
    expect(spliceTables(spliceTables(doc, 'a\n'), 'a\n')).toBe(spliceTables(doc, 'a\n'));
    expect(() => spliceTables('# Doc without markers\n', 'a\n')).toThrow(/markers/);
    expect(() => spliceTables(`${TABLES_END}\n${TABLES_START}\n`, 'a\n')).toThrow(/markers/);
  });
});
