/**
 * The headline figures of a run, from the medians of its steady phases: the engine against bare Temporal (and the
 * plain POST loop) in the same run, and what a delivery costs in CPU and in Temporal Cloud's billable actions.
 * Pure: delivery.ts writes them into the result file, bench/baseline-table.ts reads them back.
 */
import type { Spread } from './stats';

/** The steady phases of a result file: each phase's repetitions folded into medians (bench/stats.ts aggregate). */
export type SteadyResults = Record<string, { median: unknown }>;

/** The phases the figures compare. The engine's keep the name of the shipped configuration, `all`. */
export const PHASE = {
  plain: 'plain-post',
  bareLoad: 'bare-load',
  engineLoad: 'engine-load/all',
  emptyLoad: 'empty-load',
  bareFanOut: 'bare-fanout-load',
  engineFanOut: 'engine-fanout-load/all',
  bareIdle: 'bare-idle',
  eagerFloorIdle: 'bare-eager-idle',
  engineIdle: 'engine-idle/all',
} as const;

/** The Spread of a number at `path` in a phase's folded repetitions, if any. */
export function spreadAt(steady: SteadyResults, phase: string, path: string[]): Spread | undefined {
  let node: unknown = steady[phase]?.median;
  for (const key of path) node = node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined;
  return node && typeof node === 'object' && typeof (node as Spread).median === 'number' ? (node as Spread) : undefined;
}

/** The median of a number at `path` in a phase's folded repetitions, if any and finite. */
export function medianAt(steady: SteadyResults, phase: string, path: string[]): number | undefined {
  const median = spreadAt(steady, phase, path)?.median;
  return median !== undefined && Number.isFinite(median) ? median : undefined;
}

const round3 = (n: number) => Math.round(n * 1000) / 1000;
const ratio = (a: number | undefined, b: number | undefined) =>
  a !== undefined && b !== undefined && b > 0 ? round3(a / b) : undefined;
const defined = <T extends Record<string, number | undefined>>(o: T) =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Record<string, number>;

export interface Ratios {
  /** The engine as shipped, one endpoint per event. */
  all: Record<string, number>;
  /** Every event to several endpoints, deliveries = event x endpoint. */
  fanOut: Record<string, number>;
}

export function ratios(steady: SteadyResults): Ratios {
  const rate = (phase: string) => medianAt(steady, phase, ['summary', 'perSecond']);
  const p50 = (phase: string) => medianAt(steady, phase, ['summary', 'p50Ms']);
  return {
    all: defined({
      deliveriesPerSecondVsBareTemporal: ratio(rate(PHASE.engineLoad), rate(PHASE.bareLoad)),
      deliveriesPerSecondVsEmptyWorkflow: ratio(rate(PHASE.engineLoad), rate(PHASE.emptyLoad)),
      deliveriesPerSecondVsPlainPost: ratio(rate(PHASE.engineLoad), rate(PHASE.plain)),
      unloadedP50VsBareTemporal: ratio(p50(PHASE.engineIdle), p50(PHASE.bareIdle)),
      unloadedP50VsTemporalEagerFloor: ratio(p50(PHASE.engineIdle), p50(PHASE.eagerFloorIdle)),
    }),
    fanOut: defined({ deliveriesPerSecondVsBareTemporal: ratio(rate(PHASE.engineFanOut), rate(PHASE.bareFanOut)) }),
  };
}

export interface Cost {
  /** The engine's CPU per delivery (bench process, Temporal server, Postgres) over bare Temporal's, under load. */
  cpuPerDeliveryVsBare?: number;
  /** The same with every event to several endpoints, against bare Temporal's workflow with as many activities. */
  cpuPerDeliveryVsBareFanOut?: number;
  /** CPU ms per delivery under load, all processes. */
  cpuMsPerDelivery: Record<string, number>;
  /**
   * Temporal Cloud's billable actions per delivery, each delivery a first-try success: the server's `action`
   * counter over the measured window of each load phase, divided by the deliveries completed in it.
   */
  actionsPerDelivery: { engine?: number; bare?: number; engineFanOut?: number; bareFanOut?: number };
  /** The billable events of one measured workflow's history, per delivery: a cross-check of the counter. */
  historyActionsPerDelivery: { engine?: number; bare?: number; engineFanOut?: number; bareFanOut?: number };
  actionsCountedFrom: string;
}

export function cost(steady: SteadyResults, fanOutEndpoints: number): Cost {
  const cpu = (phase: string) => medianAt(steady, phase, ['cpuMsPerDelivery', 'totalMs']);
  const actions = (phase: string) => medianAt(steady, phase, ['actionsPerDelivery', 'total']);
  const history = (phase: string, deliveriesPerWorkflow: number) => {
    const events = medianAt(steady, phase, ['historyActions']);
    return events === undefined ? undefined : Math.round((events / deliveriesPerWorkflow) * 100) / 100;
  };
  const loads = {
    engine: PHASE.engineLoad,
    bare: PHASE.bareLoad,
    engineFanOut: PHASE.engineFanOut,
    bareFanOut: PHASE.bareFanOut,
  };
  return {
    ...defined({
      cpuPerDeliveryVsBare: ratio(cpu(PHASE.engineLoad), cpu(PHASE.bareLoad)),
      cpuPerDeliveryVsBareFanOut: ratio(cpu(PHASE.engineFanOut), cpu(PHASE.bareFanOut)),
    }),
    cpuMsPerDelivery: defined(Object.fromEntries(Object.entries(loads).map(([k, phase]) => [k, cpu(phase)]))),
    actionsPerDelivery: defined(Object.fromEntries(Object.entries(loads).map(([k, phase]) => [k, actions(phase)]))),
    historyActionsPerDelivery: defined({
      engine: history(PHASE.engineLoad, 1),
      bare: history(PHASE.bareLoad, 1),
      engineFanOut: history(PHASE.engineFanOut, fanOutEndpoints),
      bareFanOut: history(PHASE.bareFanOut, fanOutEndpoints),
    }),
    actionsCountedFrom:
      "the dev server's `action` counter (service_name frontend), read before and after each load phase's measured window",
  };
}
