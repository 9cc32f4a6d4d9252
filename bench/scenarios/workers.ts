import { WORKFLOW_ID } from '../../src/core/delivery-contract';
import path from 'node:path';
import { addBenchAccount, publishBenchEvent, within, type BenchContext } from '../engine';
import type { Steady } from '../phases';
import { cpuMsOf } from '../proc-cpu';
import { startReceiver, TLS_DIR } from '../receiver';
import { runSteady, spreadOver, type Spread, type Summary } from '../stats';
import { startWorkerService, type WorkerService } from '../worker-service';

/** One measured round: `workers` worker processes on one task queue of their own. */
export interface WorkersRound extends Summary {
  workers: number;
  /** CPU of all the worker processes over the window, per delivery completed in it. */
  workerCpuMsPerDelivery: number;
}

export interface WorkersResult {
  concurrency: number;
  warmupSeconds: number;
  windowSeconds: number;
  /** Medians over the rounds of each size (all rounds are in `rounds`). */
  oneWorkerPerSecond: number;
  threeWorkersPerSecond: number;
  threeVsOne: number;
  oneWorkerP50Ms: number;
  threeWorkersP50Ms: number;
  oneWorkerCpuMsPerDelivery: number;
  threeWorkersCpuMsPerDelivery: number;
  perSecondSpread: { one: Spread; three: Spread };
  rounds: WorkersRound[];
}

const DELIVERY_DEADLINE_MS = 120_000;
const WORKFLOW_POLL_MS = 50;

/**
 * Waits for an event's workflow to complete. Its first attempt may reach the receiver before the workflow exists
 * (the dispatcher posts it beside the start, src/attempt/early.ts), and the worker that started it is another process.
 */
async function completed(ctx: BenchContext, eventId: string): Promise<void> {
  const handle = ctx.client.workflow.getHandle(WORKFLOW_ID.deliverEvent(eventId));
  for (;;) {
    try {
      await handle.result();
      return;
    } catch (err) {
      if ((err as Error).name !== 'WorkflowNotFoundError') throw err;
      await new Promise((resolve) => setTimeout(resolve, WORKFLOW_POLL_MS));
    }
  }
}

/** A round of `workerProcessRounds`: how many worker processes, and what their environment adds. */
export interface RoundPlan {
  workers: number;
  env?: Record<string, string>;
}

/**
 * The same closed loop in every round (publish through the product's path, wait for the POST and for the
 * workflow's end) against `workers` production worker processes (`parcel-webhooks worker`, each in its own
 * process, with the product's defaults and the round's `env`) on a task queue of the round's own. Reports each
 * round's rate and latency, and the worker processes' CPU per delivery over its window (`window` hears when each
 * window opens and closes).
 */
export async function workerProcessRounds(
  ctx: BenchContext,
  steady: Steady,
  concurrency: number,
  plans: RoundPlan[],
  log: (round: WorkersRound, n: number) => void,
  window: { onStart?: () => void; onEnd?: () => void } = {},
): Promise<WorkersRound[]> {
  const receiver = await startReceiver();
  const rounds: WorkersRound[] = [];
  try {
    const accountId = await addBenchAccount(ctx.pool, [receiver.url('/workers')]);
    const tag = accountId.slice(-8);
    for (const [n, plan] of plans.entries()) {
      const env: Record<string, string> = {
        DATABASE_URL: ctx.databaseUrl,
        TEMPORAL_ADDRESS: ctx.serverAddress,
        TEMPORAL_TASK_QUEUE: `bench-${ctx.runId}-workers-${n}`,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_CA_FILE: path.join(TLS_DIR, 'ca.pem'),
        ...plan.env,
      };
      const services: WorkerService[] = [];
      try {
        services.push(...(await Promise.all(Array.from({ length: plan.workers }, () => startWorkerService(env)))));
        const cpu = () => services.reduce((sum, s) => sum + (cpuMsOf(s.pid) ?? 0), 0);
        let cpuAtStart = 0;
        let cpuMs = 0;
        const summary = await runSteady(
          { ...steady, concurrency },
          async (i) => {
            const eventId = `evt_w${tag}_${n}_${i}`;
            const t0 = performance.now();
            await publishBenchEvent(ctx.pool, accountId, eventId);
            const arrived = await within(
              receiver.waitFor(eventId, '/workers'),
              DELIVERY_DEADLINE_MS,
              `arrival of ${eventId}`,
            );
            await within(completed(ctx, eventId), DELIVERY_DEADLINE_MS, `workflow of ${eventId}`);
            return arrived - t0;
          },
          {
            onStart: async () => {
              cpuAtStart = cpu();
              window.onStart?.();
            },
            onEnd: async () => {
              cpuMs = cpu() - cpuAtStart;
              window.onEnd?.();
            },
          },
        );
        const round = {
          workers: plan.workers,
          ...summary,
          workerCpuMsPerDelivery: summary.count ? Math.round((cpuMs / summary.count) * 100) / 100 : 0,
        };
        rounds.push(round);
        log(round, n);
      } finally {
        await Promise.all(services.map((s) => s.stop()));
      }
    }
  } finally {
    await receiver.close();
  }
  return rounds;
}

/**
 * `npm run bench -- --cluster workers`: one worker process against three sharing the task queue and the outbox,
 * alternated (1, 3, 3, 1, ...) in one run so the machine's drift falls on both. On a machine with fewer cores
 * than processes, the three compete for the same CPU as the server and Postgres: the figure is the overhead of
 * sharing (more pollers, a sticky cache per process, outbox claims contended), not a gain.
 */
export async function workersScenario(
  ctx: BenchContext,
  steady: Steady,
  concurrency: number,
  reps: number,
  log: (msg: string) => void,
): Promise<WorkersResult> {
  const sizes = Array.from({ length: reps }, (_, rep) => (rep % 2 === 0 ? [1, 3] : [3, 1])).flat();
  const rounds = await workerProcessRounds(
    ctx,
    steady,
    concurrency,
    sizes.map((workers) => ({ workers })),
    (round, n) =>
      log(
        `workers round ${n + 1}/${sizes.length}: ${round.workers} worker(s) ${round.perSecond}/s p50 ${round.p50Ms} ms, workers' CPU ${round.workerCpuMsPerDelivery} ms per delivery`,
      ),
  );
  const of = (workers: number, pick: (r: WorkersRound) => number) =>
    spreadOver(rounds, (r) => r.workers === workers, pick);
  const one = of(1, (r) => r.perSecond);
  const three = of(3, (r) => r.perSecond);
  return {
    concurrency,
    warmupSeconds: steady.warmupMs / 1000,
    windowSeconds: steady.windowMs / 1000,
    oneWorkerPerSecond: one.median,
    threeWorkersPerSecond: three.median,
    threeVsOne: one.median ? Math.round((three.median / one.median) * 1000) / 1000 : NaN,
    oneWorkerP50Ms: of(1, (r) => r.p50Ms).median,
    threeWorkersP50Ms: of(3, (r) => r.p50Ms).median,
    oneWorkerCpuMsPerDelivery: of(1, (r) => r.workerCpuMsPerDelivery).median,
    threeWorkersCpuMsPerDelivery: of(3, (r) => r.workerCpuMsPerDelivery).median,
    perSecondSpread: { one, three },
    rounds,
  };
}
