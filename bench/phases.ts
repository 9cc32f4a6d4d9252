import path from 'node:path';
import { Client } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { createHttpAgent, postWebhook } from '../src/infra/http-client';
import { signatureHeader } from '../src/core/signing';
import { startEngine, SECRET, within, type BenchContext, type EngineVariant, engineConfig } from './engine';
import { costMeters, type Costs, type MeteredServer } from './meters';
import type { Receiver } from './receiver';
import { eventsInFlight, perDelivery, runSteady, type Summary } from './stats';
import { actionsInHistory } from './temporal-actions';
import { historyBreakdown } from './history-breakdown';
import { allClosed, Completions } from './completions';

export interface Steady {
  warmupMs: number;
  windowMs: number;
}

export interface PhaseResult extends Costs {
  summary: Summary;
  historyEvents?: number;
  /** Billable actions in the history of one measured workflow (bench/temporal-actions.ts), a cross-check of the counter. */
  historyActions?: number;
  /** Median server-side time of each step, from history timestamps (unloaded phases only). */
  whereTimeGoesP50Ms?: Record<string, number>;
}

export const DELIVERY_DEADLINE_MS = 120_000;

/** The signed POST of a delivery attempt, of a body naming `id`; throws unless the receiver answered 2xx. */
export async function postSigned(agent: ReturnType<typeof createHttpAgent>, url: string, id: string): Promise<void> {
  const body = JSON.stringify({ id, object: 'event', type: 'parcel.created', data: {} });
  const result = await postWebhook(agent, {
    url,
    body,
    timeoutMs: 10_000,
    allowPrivate: true,
    headers: {
      'content-type': 'application/json',
      'service-signature': signatureHeader(body, [SECRET], Math.floor(Date.now() / 1000)),
    },
  });
  if (!result.succeeded) throw new Error(`POST to ${url} failed: ${result.error ?? result.statusCode}`);
}

/** The cost of HTTP alone: the same signed POST, the same receiver and agent, no Temporal, no database. */
export async function plainPostPhase(
  ctx: BenchContext,
  server: MeteredServer,
  receiver: Receiver,
  steady: Steady,
  concurrency: number,
): Promise<PhaseResult> {
  const agent = createHttpAgent(engineConfig(ctx, 'unused'));
  const meters = costMeters(server, ctx.pool);
  try {
    const summary = await runSteady(
      { ...steady, concurrency },
      async (i) => {
        const t0 = performance.now();
        // Not an evt_ id: the receiver keeps the arrival of every event id for the rest of the run, and nobody waits
        // for these; thousands a second would sit in the heap of the process that also hosts the worker.
        await postSigned(agent, receiver.url('/plain'), `plain_${i}`);
        return performance.now() - t0;
      },
      meters,
    );
    return { summary, ...meters.costs() };
  } finally {
    await agent.close();
  }
}

/**
 * Bare Temporal's worker: `bareWorkflow` runs one activity, `bareFanOutWorkflow` one per endpoint side by side;
 * each activity makes the same signed POST to the receiver as a delivery attempt and notes when it began, by
 * the id it was given.
 */
export async function startBareWorker(
  ctx: BenchContext,
  taskQueue: string,
  bareBundle: { code: string },
  receiver: Receiver,
) {
  const activityStarted = new Map<string, number>();
  const completions = new Completions();
  const agent = createHttpAgent(engineConfig(ctx, 'unused'));
  const worker = await Worker.create({
    connection: ctx.connection,
    taskQueue,
    workflowBundle: bareBundle,
    activities: {
      async post(id: string) {
        activityStarted.set(id, performance.now());
        // Not an evt_ id: the receiver keeps the arrival of every event id for the rest of the run.
        await postSigned(agent, receiver.url('/bare'), `bare_${id}`);
      },
    },
    sinks: completions.sinks,
  });
  const run = worker.run();
  const running = run.finally(() => agent.close());
  return { worker, running, activityStarted, completions };
}

/**
 * The cost of Temporal alone, started with the client and awaited: `bareWorkflow`, one activity posting to the
 * receiver (latency: start -> the activity began); or `emptyWorkflow`, which does nothing, the least a workflow
 * per event can cost on this server (latency: start -> completed).
 */
export async function bareTemporalPhase(
  ctx: BenchContext,
  server: MeteredServer,
  receiver: Receiver,
  steady: Steady,
  concurrency: number,
  bareBundle: { code: string },
  workflowType: 'bareWorkflow' | 'emptyWorkflow' = 'bareWorkflow',
): Promise<PhaseResult> {
  const prefix = workflowType === 'bareWorkflow' ? 'bare' : 'empty';
  const taskQueue = `bench-${prefix}-${ctx.runId}-${concurrency}-${Math.random().toString(36).slice(2, 6)}`;
  const { worker, running, activityStarted, completions } = await startBareWorker(ctx, taskQueue, bareBundle, receiver);
  const meters = costMeters(server, ctx.pool);
  const measuredIds: string[] = [];
  try {
    const summary = await runSteady(
      { ...steady, concurrency },
      async (i) => {
        const id = `${taskQueue}-${i}`;
        const workflowId = `${prefix}:${id}`;
        const t0 = performance.now();
        const args = workflowType === 'bareWorkflow' ? [id] : [];
        await ctx.client.workflow.start(workflowType, { taskQueue, workflowId, args });
        meters.workflowLived(await within(completions.waitFor(workflowId), DELIVERY_DEADLINE_MS, id));
        measuredIds.push(workflowId);
        if (workflowType === 'emptyWorkflow') return performance.now() - t0;
        const began = activityStarted.get(id) as number;
        activityStarted.delete(id);
        return began - t0;
      },
      meters,
    );
    await allClosed(ctx.client, taskQueue, workflowType, completions);
    return { summary, ...meters.costs(), ...(await historyFacts(ctx, measuredIds, concurrency === 1)) };
  } finally {
    worker.shutdown();
    await running;
  }
}

/**
 * Bare Temporal's fan-out: one workflow per event running one activity per endpoint side by side, each posting to
 * the receiver; `concurrency` deliveries (event x endpoint) in flight. Latency: start -> the last activity began.
 */
export async function bareFanOutPhase(
  ctx: BenchContext,
  server: MeteredServer,
  receiver: Receiver,
  steady: Steady,
  concurrency: number,
  endpoints: number,
  bareBundle: { code: string },
): Promise<PhaseResult> {
  const taskQueue = `bench-bare-fan-${ctx.runId}-${Math.random().toString(36).slice(2, 6)}`;
  const { worker, running, activityStarted, completions } = await startBareWorker(ctx, taskQueue, bareBundle, receiver);
  const meters = costMeters(server, ctx.pool, endpoints);
  const measuredIds: string[] = [];
  try {
    const summary = await runSteady(
      { ...steady, concurrency: eventsInFlight(concurrency, endpoints) },
      async (i) => {
        const id = `${taskQueue}-${i}`;
        const t0 = performance.now();
        await ctx.client.workflow.start('bareFanOutWorkflow', {
          taskQueue,
          workflowId: `bare-fan:${id}`,
          args: [id, endpoints],
        });
        meters.workflowLived(await within(completions.waitFor(`bare-fan:${id}`), DELIVERY_DEADLINE_MS, id));
        measuredIds.push(`bare-fan:${id}`);
        const began = Array.from({ length: endpoints }, (_, n) => activityStarted.get(`${id}/${n}`) as number);
        for (let n = 0; n < endpoints; n++) activityStarted.delete(`${id}/${n}`);
        return Math.max(...began) - t0;
      },
      meters,
    );
    await allClosed(ctx.client, taskQueue, 'bareFanOutWorkflow', completions);
    return {
      summary: perDelivery(summary, endpoints),
      ...meters.costs(),
      ...(await historyFacts(ctx, measuredIds, false)),
    };
  } finally {
    worker.shutdown();
    await running;
  }
}

/**
 * Temporal's floor for the engine's unloaded latency: one at a time, a workflow started eagerly over the worker's
 * own connection (as the engine's dispatcher starts deliveries) whose first workflow task makes the same signed
 * POST as a delivery attempt, as a local activity; timed from the start call to the POST's arrival. No database
 * and no outbox: the part of publish-to-first-attempt that a workflow per event costs on this server whatever
 * the engine does.
 */
export async function bareEagerPhase(
  ctx: BenchContext,
  server: MeteredServer,
  receiver: Receiver,
  steady: Steady,
  eagerBundle: { code: string },
): Promise<PhaseResult> {
  const taskQueue = `bench-eager-${ctx.runId}-${Math.random().toString(36).slice(2, 6)}`;
  const agent = createHttpAgent(engineConfig(ctx, 'unused'));
  const post = (eventId: string) => postSigned(agent, receiver.url('/eager'), eventId);
  const completions = new Completions();
  const worker = await Worker.create({
    connection: ctx.connection,
    taskQueue,
    workflowBundle: eagerBundle,
    activities: { post },
    sinks: completions.sinks,
  });
  const running = worker.run();
  // Eager start needs the worker's connection (the SDK refuses it on another one).
  const client = new Client({ connection: ctx.connection });
  const meters = costMeters(server, ctx.pool);
  const measuredIds: string[] = [];
  const idPrefix = `evt_${taskQueue.replace(/\W/g, '')}_`;
  try {
    const summary = await runSteady(
      { ...steady, concurrency: 1 },
      async (i) => {
        const eventId = `${idPrefix}${i}`;
        const t0 = performance.now();
        const handle = await client.workflow.start('eagerPostWorkflow', {
          taskQueue,
          workflowId: `bare-eager:${eventId}`,
          args: [eventId],
          requestEagerStart: true,
        });
        const arrived = await within(
          receiver.waitFor(eventId, '/eager'),
          DELIVERY_DEADLINE_MS,
          `arrival of ${eventId}`,
        );
        meters.workflowLived(
          await within(completions.waitFor(handle.workflowId), DELIVERY_DEADLINE_MS, `workflow of ${eventId}`),
        );
        measuredIds.push(handle.workflowId);
        return arrived - t0;
      },
      meters,
    );
    await allClosed(ctx.client, taskQueue, 'eagerPostWorkflow', completions);
    return { summary, ...meters.costs(), ...(await historyFacts(ctx, measuredIds, false)) };
  } finally {
    worker.shutdown();
    await running;
    await agent.close();
  }
}

/** The engine: publish -> deliverEvent -> check, sign, POST, record; one endpoint per event. */
export async function enginePhase(
  ctx: BenchContext,
  server: MeteredServer,
  receiver: Receiver,
  steady: Steady,
  concurrency: number,
  variant: EngineVariant,
): Promise<PhaseResult> {
  const engine = await startEngine(ctx, variant);
  const meters = costMeters(server, ctx.pool);
  const measuredIds: string[] = [];
  try {
    const accountId = await engine.addAccount([receiver.url('/engine')]);
    const tag = accountId.slice(-8);
    const summary = await runSteady(
      { ...steady, concurrency },
      async (i) => {
        const eventId = `evt_${tag}_${variant.name.replace(/\W/g, '')}_${concurrency}_${i}`;
        const t0 = performance.now();
        await engine.publish(accountId, eventId);
        const arrived = await within(
          receiver.waitFor(eventId, '/engine'),
          DELIVERY_DEADLINE_MS,
          `arrival of ${eventId}`,
        );
        meters.workflowLived(await within(engine.completed(eventId), DELIVERY_DEADLINE_MS, `workflow of ${eventId}`));
        measuredIds.push(`event:${eventId}`);
        return arrived - t0;
      },
      meters,
    );
    await engine.allClosed();
    return { summary, ...meters.costs(), ...(await historyFacts(ctx, measuredIds, concurrency === 1)) };
  } finally {
    await engine.stop();
  }
}

/**
 * The engine's fan-out: every event to `endpoints` endpoints of one account, `concurrency` deliveries (event x
 * endpoint) in flight. Latency: publish -> the last endpoint's first attempt arrived.
 */
export async function engineFanOutPhase(
  ctx: BenchContext,
  server: MeteredServer,
  receiver: Receiver,
  steady: Steady,
  concurrency: number,
  endpoints: number,
  variant: EngineVariant,
): Promise<PhaseResult> {
  const engine = await startEngine(ctx, variant);
  const meters = costMeters(server, ctx.pool, endpoints);
  const measuredIds: string[] = [];
  try {
    const paths = Array.from({ length: endpoints }, (_, n) => `/engine-fan/${n}`);
    const accountId = await engine.addAccount(paths.map((p) => receiver.url(p)));
    const tag = accountId.slice(-8);
    const summary = await runSteady(
      { ...steady, concurrency: eventsInFlight(concurrency, endpoints) },
      async (i) => {
        const eventId = `evt_${tag}_fan${endpoints}_${i}`;
        const t0 = performance.now();
        await engine.publish(accountId, eventId);
        const arrivals = await within(
          Promise.all(paths.map((p) => receiver.waitFor(eventId, p))),
          DELIVERY_DEADLINE_MS,
          `arrivals of ${eventId}`,
        );
        meters.workflowLived(await within(engine.completed(eventId), DELIVERY_DEADLINE_MS, `workflow of ${eventId}`));
        measuredIds.push(`event:${eventId}`);
        return Math.max(...arrivals) - t0;
      },
      meters,
    );
    await engine.allClosed();
    return {
      summary: perDelivery(summary, endpoints),
      ...meters.costs(),
      ...(await historyFacts(ctx, measuredIds, false)),
    };
  } finally {
    await engine.stop();
  }
}

/** History length and billable actions of a measured workflow and, unloaded, where the time went step by step. */
async function historyFacts(
  ctx: BenchContext,
  ids: string[],
  breakdown: boolean,
): Promise<Pick<PhaseResult, 'historyEvents' | 'historyActions' | 'whereTimeGoesP50Ms'>> {
  if (ids.length === 0) return {};
  const history = await ctx.client.workflow.getHandle(ids[0] as string).fetchHistory();
  return {
    historyEvents: history.events?.length ?? 0,
    historyActions: actionsInHistory(history.events ?? []),
    ...(breakdown ? { whereTimeGoesP50Ms: await historyBreakdown(ctx.client, ids.slice(0, 50)) } : {}),
  };
}

export const BARE_WORKFLOWS = path.join(__dirname, 'baseline', 'workflows.ts');
export const EAGER_WORKFLOWS = path.join(__dirname, 'baseline', 'eager-workflows.ts');
