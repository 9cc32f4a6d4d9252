import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { addBenchAccount, publishBenchEvent, within, type BenchContext, type EngineVariant } from '../engine';
import { peakRate, startReceiver, type Receiver } from '../receiver';
import { runPool } from '../stats';
import { startWorkerProcess, type WorkerHeap } from '../worker-process';
import { workflowTaskDurations, type WorkflowTaskDurations } from '../workflow-tasks';

export interface BacklogResult {
  events: number;
  /** The first retry's delay: every event waits this long in a durable timer after its failed first attempt. */
  firstRetryDelaySeconds: number;
  publishSeconds: number;
  /**
   * The worker process's resident set (VmRSS), MB: idle (started, warmed by a few deliveries, nothing waiting),
   * the highest of the samples taken every 500 ms while the backlog is published, waits and drains, and after the
   * drain once settled. The worker runs in a process of its own, as `parcel-webhooks worker`.
   */
  rssIdleMb: number;
  rssPeakMb: number;
  rssAfterMb: number;
  /**
   * With every event of the backlog waiting in backoff: read at the end of the wait, shortly before the first retry
   * timers fire, the burst of publishing long over. The figure the flat-memory rule is about.
   */
  rssWaitingMb: number;
  /** The same, every SETTLE_MS through the wait from the end of the burst: how soon the worker gives back what it took. */
  rssWaitingSeriesMb: number[];
  /** The library preloaded into the worker (BENCH_WORKER_PRELOAD, e.g. jemalloc), when one was. */
  workerPreload?: string;
  /**
   * V8 heaps of the worker process idle, once the backlog's first attempts have failed, at the end of its wait
   * (with rssWaitingMb), and after the drain.
   */
  heapMb: { idle: WorkerHeap; backlog: WorkerHeap; waiting: WorkerHeap; after: WorkerHeap };
  maxCachedWorkflows: number;
  /** From the endpoint's recovery until the last event arrived. */
  recoveredToAllDeliveredSeconds: number;
  /** The most requests the recovered endpoint received in one second, and the mean over the drain. */
  receiverPeakPerSecond: number;
  receiverMeanPerSecond: number;
  /** How long the worker held the workflow tasks of a sample of the backlog's events, the drain's included. */
  workflowTasks: WorkflowTaskDurations;
  heapSnapshots?: string[];
}

/** Deliveries that warm the worker (workflow thread, connections, prepared statements) before "idle" is read. */
const WARM_UP_EVENTS = 20;
const SAMPLE_MS = 500;
/** Time for a worker to settle (timers, sockets, the last workflow tasks) before a figure is read. */
const SETTLE_MS = 10_000;
/** rssWaitingMb is read this long before the first retry timers are due. */
const WAITING_READ_BEFORE_RETRY_S = 15;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function untilRequests(receiver: Receiver, count: number, ms: number, what: string): Promise<void> {
  await within(
    (async () => {
      while (receiver.requests < count) await pause(200);
    })(),
    ms,
    what,
  );
}

/**
 * `events` events to one endpoint that answers 500: every first attempt fails and the event waits in backoff.
 * Once all of them wait, the endpoint recovers; the retries deliver them. The worker's memory must stay flat
 * (its cache is bounded, the waiting workflows live on the server) and the endpoint's peak rate is reported.
 */
export async function backlogScenario(
  ctx: BenchContext,
  events: number,
  concurrency: number,
  variant: EngineVariant,
  options: { heapSnapshots?: string; log?: (line: string) => void } = {},
): Promise<BacklogResult> {
  const log = options.log ?? (() => undefined);
  // Long enough that publishing (about 40-80 events/s on an idle 2-core machine, half that on a busy one) ends
  // before the first timers fire.
  const firstRetryDelaySeconds = Math.max(30, Math.ceil(events / 20));
  const receiver = await startReceiver({ status: 200 });
  const worker = await startWorkerProcess(ctx, {
    ...variant,
    env: { ...variant.env, DELIVERY_RETRY_DELAYS: `${firstRetryDelaySeconds}s,30s,30s,30s,1m,1m` },
  });
  const snapshots: string[] = [];
  const snapshot = async (name: string) => {
    if (!options.heapSnapshots) return;
    mkdirSync(options.heapSnapshots, { recursive: true });
    snapshots.push(...(await worker.snapshot(path.join(options.heapSnapshots, `${ctx.runId}-backlog-${name}`))));
  };
  let sampler: NodeJS.Timeout | undefined;
  try {
    const accountId = await addBenchAccount(ctx.pool, [receiver.url()]);
    const tag = accountId.slice(-8);
    const warm = Array.from({ length: WARM_UP_EVENTS }, (_, i) => `evt_warm_${tag}_${i}`);
    await runPool(warm.length, 4, (i) => publishBenchEvent(ctx.pool, accountId, warm[i] as string));
    await within(Promise.all(warm.map((id) => receiver.waitFor(id))), 120_000, 'warm-up deliveries');
    await pause(SETTLE_MS);
    const idleHeap = await worker.heap();
    const rssIdleMb = worker.rssMb();
    await snapshot('idle');
    log(`backlog: worker idle ${rssIdleMb} MB RSS, heaps ${JSON.stringify(idleHeap)}`);

    let rssPeakMb = rssIdleMb;
    sampler = setInterval(() => (rssPeakMb = Math.max(rssPeakMb, worker.rssMb())), SAMPLE_MS);
    receiver.behaviour.status = 500;
    const requestsBefore = receiver.requests;
    const t0 = performance.now();
    await runPool(events, concurrency, (i) => publishBenchEvent(ctx.pool, accountId, `evt_backlog_${tag}_${i}`));
    // Every first attempt has failed once the receiver has answered that many requests.
    await untilRequests(receiver, requestsBefore + events, events * 500 + 120_000, 'first attempts of the backlog');
    const publishSeconds = (performance.now() - t0) / 1000;
    log(
      `backlog: ${events} waiting after ${Math.round(publishSeconds)} s, worker ${worker.rssMb()} MB RSS (peak so far ${rssPeakMb} MB)`,
    );
    // Read while every event still waits: the first timer fires firstRetryDelaySeconds after its failed attempt.
    const backlogHeap = await worker.heap();
    await snapshot('backlog');
    log(`backlog: heaps with the backlog waiting ${JSON.stringify(backlogHeap)}`);
    // Read at the end of the wait, just before the first timers fire (the first attempt failed as publishing
    // began): a backoff lasts minutes to hours, and this is what the worker holds through it, the burst of
    // publishing long over.
    const waitEndsAt = t0 + (firstRetryDelaySeconds - WAITING_READ_BEFORE_RETRY_S) * 1000;
    const rssWaitingSeriesMb: number[] = [];
    while (performance.now() + SETTLE_MS <= waitEndsAt) {
      await pause(SETTLE_MS);
      rssWaitingSeriesMb.push(worker.rssMb());
    }
    log(
      `backlog: ${events} waiting in backoff, every ${SETTLE_MS / 1000} s: worker ${rssWaitingSeriesMb.join(', ')} MB RSS`,
    );
    await pause(Math.max(0, waitEndsAt - performance.now()));
    const rssWaitingMb = worker.rssMb();
    const waitingHeap = await worker.heap();
    log(
      `backlog: ${events} waiting in backoff, the first retries ${WAITING_READ_BEFORE_RETRY_S} s away: worker ${rssWaitingMb} MB RSS, heaps ${JSON.stringify(waitingHeap)}`,
    );
    receiver.behaviour.status = 200;
    const recovered = performance.now();
    const arrivals = await within(
      Promise.all(Array.from({ length: events }, (_, i) => receiver.waitFor(`evt_backlog_${tag}_${i}`))),
      (firstRetryDelaySeconds + 600) * 1000 + events * 500,
      'delivery of the backlog',
    );
    await pause(SETTLE_MS);
    clearInterval(sampler);
    sampler = undefined;
    const afterHeap = await worker.heap();
    const rssAfterMb = worker.rssMb();
    const drainSeconds = (Math.max(...arrivals) - recovered) / 1000;
    const firstRetry = Math.min(...arrivals);
    return {
      events,
      firstRetryDelaySeconds,
      publishSeconds: Math.round(publishSeconds * 10) / 10,
      rssIdleMb,
      rssPeakMb,
      rssAfterMb,
      rssWaitingMb,
      rssWaitingSeriesMb,
      ...(worker.preload ? { workerPreload: worker.preload } : {}),
      heapMb: { idle: idleHeap, backlog: backlogHeap, waiting: waitingHeap, after: afterHeap },
      maxCachedWorkflows: idleHeap.maxCachedWorkflows,
      recoveredToAllDeliveredSeconds: Math.round(drainSeconds * 10) / 10,
      receiverPeakPerSecond: peakRate(receiver, recovered),
      receiverMeanPerSecond: Math.round((events / ((Math.max(...arrivals) - firstRetry) / 1000)) * 10) / 10,
      workflowTasks: await workflowTaskDurations(
        ctx.client,
        Array.from({ length: events }, (_, i) => `event:evt_backlog_${tag}_${i}`),
      ),
      ...(snapshots.length > 0 ? { heapSnapshots: snapshots } : {}),
    };
  } finally {
    if (sampler) clearInterval(sampler);
    await worker.stop();
    await receiver.close();
  }
}
