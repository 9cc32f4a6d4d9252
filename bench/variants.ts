import type { EngineVariant } from './engine';

/**
 * The engine configurations measured side by side, each lever alone and then together. The first is the
 * baseline the levers are compared with: the engine as it was before them. The last, `all`, is what the product
 * ships (config defaults and worker/worker.ts deliverySlots), with nothing overridden.
 */
// Stack traces on is the SDK's own behaviour (and the engine's before WORKFLOW_STACK_TRACES): every lever but
// that one is measured with them on.
// So is the SDK's own workflow thread (WORKFLOW_THREAD=pool), the default.
const TRACES = { WORKFLOW_STACK_TRACES: 'on', WORKFLOW_THREAD: 'pool' };
const LOCAL = { DELIVERY_ATTEMPT: 'local', ...TRACES };
const ACTIVITY = { DELIVERY_ATTEMPT: 'activity', ...TRACES };
// The SDK's own slot defaults (40 workflow tasks, 100 local activities, a cache sized from memory): undefined
// hands each back to the SDK, undoing the product's deliverySlots.
// The SDK's deadlock timeout on every call into the sandbox (a watchdog thread each) is its own behaviour too:
// every lever before it is measured with it.
const SDK_WATCHDOG = { deadlockTimeoutOnSdkCalls: true };
const SDK_SLOTS = { maxConcurrentWorkflowTaskExecutions: undefined, maxConcurrentLocalActivityExecutions: undefined, maxCachedWorkflows: undefined, ...SDK_WATCHDOG };

export const VARIANTS: EngineVariant[] = [
  { name: 'baseline', env: ACTIVITY, workerOptions: SDK_SLOTS },
  { name: 'local-attempt', env: LOCAL, workerOptions: SDK_SLOTS },
  { name: 'eager-start', env: ACTIVITY, eagerStart: true, workerOptions: SDK_SLOTS },
  // The product's slots (WORKER_CONCURRENCY) alone.
  { name: 'slots', env: ACTIVITY, workerOptions: SDK_WATCHDOG },
  // No promise stack traces in the workflow threads (WORKFLOW_STACK_TRACES off, worker/worker.ts) alone.
  { name: 'no-stack-traces', env: { ...ACTIVITY, WORKFLOW_STACK_TRACES: 'off' }, workerOptions: SDK_SLOTS },
  // The shipped defaults but with stack traces on (and the SDK's watchdog on every call): where that lever acts.
  { name: 'all-with-stack-traces', eagerStart: true, env: TRACES, workerOptions: SDK_WATCHDOG },
  // The shipped defaults but with workflow code in the worker's main thread (WORKFLOW_THREAD=main; the default for
  // one stop, not recommended since: worker/worker.ts).
  { name: 'workflow-thread-main', eagerStart: true, env: { WORKFLOW_THREAD: 'main' } },
  // The shipped defaults but with the SDK's deadlock timeout on every call into the sandbox, not only the calls
  // that run workflow code (worker/worker.ts): the last lever.
  { name: 'watchdog-every-call', eagerStart: true, workerOptions: SDK_WATCHDOG },
  // The shipped defaults with the engine on Postgres's Unix socket instead of TCP on loopback: a deployment choice
  // (DATABASE_URL), not a product default.
  { name: 'all-unix-socket', eagerStart: true, unixSocket: true, workerOptions: SDK_WATCHDOG },
  // The shipped defaults but with attempt 1 made by the workflow's own try, not early by the dispatcher beside the
  // start (DELIVERY_EARLY_FIRST_ATTEMPT, attempt/early.ts): the last lever.
  { name: 'no-early-first-attempt', eagerStart: true, env: { DELIVERY_EARLY_FIRST_ATTEMPT: 'off' } },
  // The shipped defaults but with the dispatcher's notified events handed off one pass at a time, each waiting
  // for the one before it (worker/dispatcher.ts NOTIFIED_PASSES): as before this stop.
  { name: 'serial-dispatch', eagerStart: true, notifiedPasses: 1 },
  { name: 'all', eagerStart: true },
];
