import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection, Runtime, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Agent } from 'undici';
import { createActivities } from '../activities';
import { createEarlyAttempts, type EarlyAttempts } from '../attempt';
import type { Config } from '../infra/config';
import { createHttpAgent } from '../infra/http-client';
import { createMailer } from '../infra/mailer';
import type { Pool } from '../db/pool';
import { activeTracing } from '../infra/tracing';
import { startDispatcher, type Dispatcher } from './dispatcher';
import { tracedClientInterceptors, tracedWorkerOptions } from './tracing';

// What a process hosting a worker also sets up (cli/commands/start-all.ts reaches the worker only through here).
export { ensureRetentionSchedule } from './retention-schedule';

/** Prebuilt by `npm run build` next to the compiled worker; absent in development, where we bundle at start. */
const PREBUILT_BUNDLE = path.join(__dirname, '..', 'workflow-bundle.js');
/** The same with Temporal's OpenTelemetry workflow interceptors, loaded when tracing runs (worker/tracing.ts). */
const PREBUILT_TRACED_BUNDLE = path.join(__dirname, '..', 'workflow-bundle-traced.js');

/** workflows/index.ts under tsx and vitest, workflows/index.js once compiled. */
function workflowsEntry(): string {
  const dir = path.join(__dirname, '..', 'workflows');
  const ts = path.join(dir, 'index.ts');
  return existsSync(ts) ? ts : path.join(dir, 'index.js');
}

export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
  pool: Pool;
  taskQueue?: string;
  /** The pooled agent deliveries post through; built from config when absent (the caller then never closes it). */
  http?: Agent;
  /** Test hook: override WorkerOptions (e.g. slots, sticky cache). */
  options?: Partial<WorkerOptions>;
}

/**
 * Slots sized for deliveries, not for CPU work. An attempt the workflow makes is a regular
 * activity, which holds an activity slot for as long as the receiver takes to answer (up to DELIVERY_TIMEOUT): with
 * the SDK's 100, a hundred slow receivers would hold every slot and stall every other retry of the worker
 * (`workerConcurrency`, WORKER_CONCURRENCY). Workflow-task slots (`workerWorkflowTasks`) are as many by
 * default, because the outbox dispatcher's eager starts each take a free one at start time: while the worker has
 * one, the first task skips matching; once none is free, the start goes through matching, which costs the server
 * and the worker more per delivery. Fewer bound how long a task takes on a loaded worker (the rest wait in
 * matching, not half-done in the worker), and cost that throughput (docs/performance.md, "Slots"). A one-endpoint
 * workflow of an earlier release still makes its attempts as local activities, inside its workflow task, which so
 * holds a workflow-task slot while its receiver answers.
 * The sticky cache holds one workflow per activity slot (never fewer than the workflow-task slots). A cached
 * workflow keeps its state in the workflow thread's V8 context and the SDK core's state for its run, and
 * caching pays only for workflows whose next task comes a moment later: an event waiting in backoff sleeps 10 s to
 * 6 h, and when its timer fires the worker replays its short history (about 10 events). So events parked in backoff
 * (10,000 after an endpoint's outage) cost memory up to the slots, never up to their number (docs/performance.md
 * "Memory"; test/integration/workflows/worker-cache.test.ts).
 */
export function deliverySlots({
  workerConcurrency,
  workerWorkflowTasks,
}: Pick<Config['delivery'], 'workerConcurrency' | 'workerWorkflowTasks'>): Partial<WorkerOptions> {
  return {
    maxConcurrentWorkflowTaskExecutions: workerWorkflowTasks,
    maxConcurrentActivityTaskExecutions: workerConcurrency,
    maxConcurrentLocalActivityExecutions: workerConcurrency,
    maxCachedWorkflows: workerConcurrency,
  };
}

/*
 * The Temporal SDK as published: workflow code runs in the SDK's own workflow thread, under its deadlock timeout,
 * with its promise stack traces for the UI's "Call Stack" tab. The product sets only its slots (deliverySlots).
 */
export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const prebuilt = activeTracing() ? PREBUILT_TRACED_BUNDLE : PREBUILT_BUNDLE;
  const workflowSource: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = existsSync(prebuilt)
    ? { workflowBundle: { codePath: prebuilt } }
    : { workflowsPath: workflowsEntry() };
  const http = deps.http ?? createHttpAgent(deps.config);
  const logger = Runtime.instance().logger;
  const early = createEarlyAttempts(
    {
      config: deps.config,
      pool: deps.pool,
      http,
      log: {
        warn: (message, meta) => logger.warn(message, { ...meta, early: true }),
        error: (message, meta) => logger.error(message, { ...meta, early: true }),
      },
    },
    { maxInFlight: deps.config.delivery.workerConcurrency },
  );
  const worker = await Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: deps.taskQueue ?? deps.config.temporal.taskQueue,
    activities: createActivities({
      config: deps.config,
      pool: deps.pool,
      http,
      // Activities signal supervisors over the worker's own connection: no second connection to open.
      temporal: new Client({ connection: deps.connection, namespace: deps.config.temporal.namespace }),
      mailer: createMailer(deps.config),
    }),
    ...workflowSource,
    ...tracedWorkerOptions(workflowSource.workflowBundle !== undefined),
    ...deliverySlots(deps.config.delivery),
    ...deps.options,
  });
  earlyAttemptsOf.set(worker, early);
  return worker;
}

/** Each worker's early first attempts, which its dispatcher makes (runWorker). */
const earlyAttemptsOf = new WeakMap<Worker, EarlyAttempts>();

export interface RunWorkerOptions {
  config: Config;
  /** The worker's own connection: the dispatcher's client shares it, so its starts may be eager. */
  connection: NativeConnection;
  pool: Pool;
  log?: (line: string) => void;
  /** Called with the dispatcher once it runs (tests wait for its first sweep). */
  onDispatcher?: (dispatcher: Dispatcher) => void;
  /** Time between the dispatcher's sweeps (worker/dispatcher.ts SWEEP_INTERVAL_MS by default). */
  sweepIntervalMs?: number;
}

/**
 * Runs the worker until it is shut down, with the outbox dispatcher beside it (worker/dispatcher.ts): every
 * process that delivers also hands stored events to Temporal, with its own delivery settings, eagerly (the
 * first workflow task comes back with the start, on this worker, without a trip through matching).
 */
export async function runWorker(worker: Worker, options: RunWorkerOptions): Promise<void> {
  const early = earlyAttemptsOf.get(worker);
  const dispatcher = startDispatcher({
    pool: options.pool,
    temporal: new Client({
      connection: options.connection,
      namespace: options.config.temporal.namespace,
      interceptors: tracedClientInterceptors(),
    }),
    config: { ...options.config, temporal: { ...options.config.temporal, taskQueue: worker.options.taskQueue } },
    // The client shares the worker's connection: its starts may be eager.
    eagerStart: true,
    log: options.log,
    sweepIntervalMs: options.sweepIntervalMs,
    // Attempt 1 of every endpoint is the outbox's (attempt/early.ts): the start waits for the records and carries them.
    beforeStart: early ? (input, attemptIds) => early.handOff(input, attemptIds) : undefined,
    beforeLaunch: early ? (ready, attemptIds) => early.leaveToWorkflow(ready, attemptIds) : undefined,
    // An account whose early posts hold its share of them is claimed no further: its backlog waits in the
    // outbox (attempt/account-share.ts), and is claimed again as soon as a place comes back.
    accountRoom: early ? () => early.accountRoom() : undefined,
  });
  early?.onShareFreed(() => dispatcher.wake());
  options.onDispatcher?.(dispatcher);
  try {
    await worker.run();
  } finally {
    await dispatcher.stop();
    await early?.drain();
  }
}
