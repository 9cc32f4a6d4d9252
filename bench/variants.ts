import type { EngineVariant } from './engine';

/**
 * The engine configurations measured side by side, each lever alone and then together. The first is the
 * baseline the levers are compared with: the engine as it was before them. The last, `all`, is what the product
 * ships (config defaults and worker/worker.ts deliverySlots), with nothing overridden.
 */
// Stack traces on is the SDK's own behaviour (and the engine's before WORKFLOW_STACK_TRACES): every lever but
// that one is measured with them on.
// So is the SDK's own workflow thread (WORKFLOW_THREAD=pool) for every lever before it.
const TRACES = { WORKFLOW_STACK_TRACES: 'on', WORKFLOW_THREAD: 'pool' };
const LOCAL = { DELIVERY_ATTEMPT: 'local', ...TRACES };
const ACTIVITY = { DELIVERY_ATTEMPT: 'activity', ...TRACES };
// The SDK's own slot defaults (40 workflow tasks, 100 local activities, a cache sized from memory): undefined
// hands each back to the SDK, undoing the product's deliverySlots.
const SDK_SLOTS = { maxConcurrentWorkflowTaskExecutions: undefined, maxConcurrentLocalActivityExecutions: undefined, maxCachedWorkflows: undefined };

export const VARIANTS: EngineVariant[] = [
  { name: 'baseline', env: ACTIVITY, workerOptions: SDK_SLOTS },
  { name: 'local-attempt', env: LOCAL, workerOptions: SDK_SLOTS },
  { name: 'eager-start', env: ACTIVITY, eagerStart: true, workerOptions: SDK_SLOTS },
  // The product's slots (WORKER_CONCURRENCY) alone.
  { name: 'slots', env: ACTIVITY },
  // No promise stack traces in the workflow threads (WORKFLOW_STACK_TRACES off, worker/worker.ts) alone.
  { name: 'no-stack-traces', env: { ...ACTIVITY, WORKFLOW_STACK_TRACES: 'off' }, workerOptions: SDK_SLOTS },
  // The shipped defaults but with stack traces on: the last lever measured where it acts, beside `all`.
  { name: 'all-with-stack-traces', eagerStart: true, env: { ...TRACES, WORKFLOW_THREAD: 'main' } },
  // The shipped defaults but with workflow code in the SDK's own thread (WORKFLOW_THREAD=pool): the last lever.
  { name: 'workflow-thread-pool', eagerStart: true, env: { WORKFLOW_THREAD: 'pool' } },
  // The shipped defaults with the engine on Postgres's Unix socket instead of TCP on loopback: a deployment choice
  // (DATABASE_URL), not a product default.
  { name: 'all-unix-socket', eagerStart: true, unixSocket: true },
  { name: 'all', eagerStart: true },
];
