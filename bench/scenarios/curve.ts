import { createHttpAgent } from '../../src/infra/http-client';
import { engineConfig, startEngine, within, type BenchContext, type EngineVariant } from '../engine';
import {
  clearlySaturated,
  curvePoint,
  HEADLINE_P99_MS,
  highestRateWithinP99,
  rateLadder,
  runOpenLoop,
  saturated,
  SATURATED_ACHIEVED_SHARE,
  SATURATED_P99_MS,
  type CurvePoint,
  type Sent,
} from '../open-loop';
import { DELIVERY_DEADLINE_MS, postSigned, startBareWorker } from '../phases';
import type { Receiver } from '../receiver';

/**
 * The latency curve: open-loop load at fixed offered rates, from 10 per second up past saturation, for three
 * systems on one server, interleaved rate by rate (every system at 10/s, then every system at 20/s, ...) so a
 * drift of the shared machine's load falls on all three alike:
 *   engine     the engine as it ships: publish -> the first attempt arrives at the receiver;
 *   bare       bare Temporal, as the bare phases measure it: start -> its activity begins;
 *   plainPost  the plain signed POST loop: the POST sent -> its answer back.
 * Each step is a warm-up then a measured window at one rate; every send of the step is then awaited (a
 * workflow to its completion) before the next step, so a backlog never spills into the next rate. A system's
 * ladder stops once it is clearly saturated: two steps in a row (bench/open-loop.ts).
 */

export interface CurveResult {
  engineRateAtP99Under100Ms: number | null;
  bareRateAtP99Under100Ms: number | null;
  points: { engine: CurvePoint[]; bare: CurvePoint[]; plainPost: CurvePoint[] };
  /** Engine workflows not completed within 120 s of their send (their first attempt had arrived). */
  engineWorkflowsUnfinished: number;
  settings: {
    stepSeconds: number;
    warmupSeconds: number;
    maxRate: number;
    engineVariant: string;
    headlineP99Ms: number;
    saturatedBelowAchievedShare: number;
    saturatedAboveP99Ms: number;
  };
}

type SystemName = keyof CurveResult['points'];

/** One system under test: send(id) starts one delivery and resolves with its arrival time, once it is done. */
interface System {
  name: SystemName;
  send(id: string): Promise<number>;
  stop(): Promise<void>;
}

async function engineSystem(
  ctx: BenchContext,
  receiver: Receiver,
  variant: EngineVariant,
  counts: { unfinished: number },
): Promise<System> {
  const engine = await startEngine(ctx, variant);
  const accountId = await engine.addAccount([receiver.url('/curve')]);
  const tag = accountId.slice(-8);
  return {
    name: 'engine',
    async send(id) {
      const eventId = `evt_curve_${tag}_${id}`;
      await engine.publish(accountId, eventId);
      const arrived = await within(receiver.waitFor(eventId, '/curve'), DELIVERY_DEADLINE_MS, `arrival of ${eventId}`);
      // The first attempt arrived: that is the measure. Its workflow is awaited only to drain the step; on an
      // overloaded machine an attempt can finish as lost and wait out a retry delay, which is counted, not fatal.
      await within(engine.completed(eventId), DELIVERY_DEADLINE_MS, `workflow of ${eventId}`).catch(
        () => void (counts.unfinished += 1),
      );
      return arrived;
    },
    stop: () => engine.stop(),
  };
}

async function bareSystem(ctx: BenchContext, bareBundle: { code: string }, receiver: Receiver): Promise<System> {
  const taskQueue = `bench-curve-bare-${ctx.runId}`;
  const { worker, running, activityStarted, completions } = await startBareWorker(ctx, taskQueue, bareBundle, receiver);
  return {
    name: 'bare',
    async send(id) {
      const workflowId = `bare-curve:${ctx.runId}:${id}`;
      await ctx.client.workflow.start('bareWorkflow', { taskQueue, workflowId, args: [id] });
      await within(completions.waitFor(workflowId), DELIVERY_DEADLINE_MS, id);
      const began = activityStarted.get(id) as number;
      activityStarted.delete(id);
      return began;
    },
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}

function plainPostSystem(ctx: BenchContext, receiver: Receiver): System {
  const agent = createHttpAgent(engineConfig(ctx, 'unused'));
  return {
    name: 'plainPost',
    async send(id) {
      // Not an evt_ id, as in the plain-post phase: the receiver would keep every arrival for the whole run.
      await within(postSigned(agent, receiver.url('/curve-plain'), `plain_${id}`), DELIVERY_DEADLINE_MS, `POST ${id}`);
      return performance.now();
    },
    stop: () => agent.close(),
  };
}

let steps = 0;

/** One rate for one system: warm-up and window at that rate, then every send awaited. */
async function step(
  system: System,
  rate: number,
  warmupMs: number,
  windowMs: number,
  log: (message: string) => void,
): Promise<CurvePoint> {
  const sends: Array<Promise<Sent>> = [];
  let failures = 0;
  const failed = (err: unknown) => {
    if (failures++ === 0) log(`curve ${system.name} at ${rate}/s: a send failed: ${(err as Error).message ?? err}`);
    return Infinity;
  };
  // Ids unique to the step: a repeated event id is a duplicate publish, which the engine rightly ignores.
  const stepId = steps++;
  const { began } = await runOpenLoop({ ratePerSecond: rate, durationMs: warmupMs + windowMs }, (i, scheduledAt) => {
    // A send that fails or whose first attempt has not arrived within the deadline never arrives: it counts in the
    // point (and its latency as endless), where an overloaded machine's failures belong, instead of ending the run.
    sends.push(
      system.send(`${stepId}_${rate}_${i}`).then(
        (arrivedAt) => ({ scheduledAt, arrivedAt }),
        (err: unknown) => ({ scheduledAt, arrivedAt: failed(err) }),
      ),
    );
  });
  return curvePoint(rate, began + warmupMs, began + warmupMs + windowMs, await Promise.all(sends));
}

export async function curveScenario(
  ctx: BenchContext,
  receiver: Receiver,
  bareBundle: { code: string },
  variant: EngineVariant,
  options: { stepMs: number; warmupMs: number; maxRate: number },
  log: (message: string) => void,
): Promise<CurveResult> {
  const points: CurveResult['points'] = { engine: [], bare: [], plainPost: [] };
  const systems: System[] = [];
  const counts = { unfinished: 0 };
  try {
    systems.push(
      await engineSystem(ctx, receiver, variant, counts),
      await bareSystem(ctx, bareBundle, receiver),
      plainPostSystem(ctx, receiver),
    );
    const ladder = rateLadder(options.maxRate);
    // A fresh worker spends its first seconds loading workflow code and warming the JIT: one unrecorded step at
    // the lowest rate, so the first point measures the system, not its start.
    for (const system of systems) {
      const primed = await step(system, ladder[0] as number, 0, options.warmupMs + options.stepMs, log);
      log(
        `curve ${system.name} primed at ${primed.offeredPerSecond}/s: p50 ${primed.p50Ms} ms, p99 ${primed.p99Ms} ms`,
      );
    }
    let climbing = [...systems];
    for (const rate of ladder) {
      if (climbing.length === 0) break;
      for (const system of climbing) {
        const point = await step(system, rate, options.warmupMs, options.stepMs, log);
        points[system.name].push(point);
        log(
          `curve ${system.name} at ${rate}/s: ${point.achievedPerSecond}/s achieved, p50 ${point.p50Ms} ms, p99 ${point.p99Ms} ms${saturated(point) ? ', saturated' : ''}`,
        );
      }
      climbing = climbing.filter((s) => !clearlySaturated(points[s.name]));
    }
  } finally {
    for (const system of systems) await system.stop();
  }
  return {
    engineRateAtP99Under100Ms: highestRateWithinP99(points.engine),
    bareRateAtP99Under100Ms: highestRateWithinP99(points.bare),
    points,
    engineWorkflowsUnfinished: counts.unfinished,
    settings: {
      stepSeconds: options.stepMs / 1000,
      warmupSeconds: options.warmupMs / 1000,
      maxRate: options.maxRate,
      engineVariant: variant.name,
      headlineP99Ms: HEADLINE_P99_MS,
      saturatedBelowAchievedShare: SATURATED_ACHIEVED_SHARE,
      saturatedAboveP99Ms: SATURATED_P99_MS,
    },
  };
}
