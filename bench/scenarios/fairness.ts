import { createPool } from '../../src/db/pool';
import { publishBenchEvent, startEngine, within, type BenchContext, type EngineVariant } from '../engine';
import { runOpenLoop } from '../open-loop';
import { startReceiver } from '../receiver';
import { p50p99, runPool } from '../stats';
import { workflowTaskDurations, type WorkflowTaskDurations } from '../workflow-tasks';

export interface FairnessResult {
  /** Account A's backlog, queued to an endpoint that answers every request after slowAnswerMs. */
  noisyEvents: number;
  slowAnswerMs: number;
  /** Account B's publish rate to its fast endpoint, and how long it publishes in each window. */
  quietRatePerSecond: number;
  quietWindowMs: number;
  /** B's p99 from publish to POST alone, then while A's backlog drains, and their ratio (goal: at most 2). */
  quietUnloadedP99Ms: number;
  quietP99Ms: number;
  quietP99VsUnloaded: number;
  /** A's deliveries per second while B publishes beside it. */
  noisyDeliveriesPerSecond: number;
  /** How long the worker held the workflow tasks of a sample of A's events. */
  workflowTasks: WorkflowTaskDurations;
}

const SLOW_MS = 2_000;
const QUIET_RATE = 5;
/** A's backlog publishes this many at once (its events are stored faster than the endpoint drains them). */
const PUBLISH_LANES = 16;
/** B's window starts once A's endpoint has this many posts open or answered: the backlog is draining. */
const DRAINING_AT = 50;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Two merchants: A keeps `events` events queued to an endpoint answering after 2 s, B publishes 5 a second to a
 * fast one. B's publish-to-arrival is measured alone, then while A's backlog drains, in the same run; A's drain
 * rate over B's window says A still gets its share of the worker.
 */
export async function fairnessScenario(
  ctx: BenchContext,
  events: number,
  windowMs: number,
  variant: EngineVariant,
): Promise<FairnessResult> {
  const fast = await startReceiver();
  const slow = await startReceiver({ delayMs: SLOW_MS });
  const engine = await startEngine(ctx, variant);
  // Both accounts publish through a pool of their own, as through the API's process in production: the worker's
  // pool serves the worker alone, and A's publishing lanes do not queue B's attempts behind them.
  const apiPool = createPool(ctx.databaseUrl);
  const publish = (accountId: string, eventId: string) => publishBenchEvent(apiPool, accountId, eventId);
  try {
    const quiet = await engine.addAccount([fast.url()]);
    const noisy = await engine.addAccount([slow.url()]);
    const quietWindow = async (phase: string): Promise<number[]> => {
      const latencies: Array<Promise<number>> = [];
      await runOpenLoop({ ratePerSecond: QUIET_RATE, durationMs: windowMs }, (i) =>
        latencies.push(
          (async () => {
            const id = `evt_quiet_${phase}_${quiet.slice(-8)}_${i}`;
            const t0 = performance.now();
            await publish(quiet, id);
            return (await within(fast.waitFor(id), 300_000, id)) - t0;
          })(),
        ),
      );
      return Promise.all(latencies);
    };
    const alone = await quietWindow('alone');

    const tag = noisy.slice(-8);
    const ids = Array.from({ length: events }, (_, i) => `evt_noisy_${tag}_${i}`);
    const arrived = Promise.all(ids.map((id) => slow.waitFor(id)));
    const published = runPool(events, PUBLISH_LANES, (i) => publish(noisy, ids[i] as string));
    await within(
      (async () => {
        while (slow.requests < DRAINING_AT) await pause(100);
      })(),
      300_000,
      'the backlog starting to drain',
    );
    const before = slow.requests;
    const t0 = performance.now();
    const beside = await quietWindow('beside');
    const noisyDeliveriesPerSecond =
      Math.round(((slow.requests - before) / ((performance.now() - t0) / 1000)) * 10) / 10;
    await published;
    await within(arrived, events * SLOW_MS + 600_000, 'the backlog');

    const quietUnloadedP99Ms = p50p99(alone).p99Ms;
    const quietP99Ms = p50p99(beside).p99Ms;
    return {
      noisyEvents: events,
      slowAnswerMs: SLOW_MS,
      quietRatePerSecond: QUIET_RATE,
      quietWindowMs: windowMs,
      quietUnloadedP99Ms,
      quietP99Ms,
      quietP99VsUnloaded: Math.round((quietP99Ms / quietUnloadedP99Ms) * 100) / 100,
      noisyDeliveriesPerSecond,
      workflowTasks: await workflowTaskDurations(
        ctx.client,
        ids.map((id) => `event:${id}`),
      ),
    };
  } finally {
    await engine.stop();
    await apiPool.end();
    await fast.close();
    await slow.close();
  }
}
