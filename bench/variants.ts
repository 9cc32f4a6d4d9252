import type { EngineVariant } from './engine';

/**
 * The engine configurations measured side by side, each lever alone and then together. The first, `baseline`, has
 * every lever off: attempts as activities, starts through matching, the SDK's own slots. The last,
 * `all`, is what the product ships (config defaults and worker/worker.ts deliverySlots), with nothing overridden.
 * A variant sets only what an operator can set (environment) or what the product itself chooses (its worker
 * options, its dispatcher's passes): the SDK runs as published in every one of them.
 */
const LOCAL = { DELIVERY_ATTEMPT: 'local' };
const ACTIVITY = { DELIVERY_ATTEMPT: 'activity' };
// The SDK's own slot defaults (40 workflow tasks, 100 local activities, a cache sized from memory): undefined
// hands each back to the SDK, undoing the product's deliverySlots.
const SDK_SLOTS = { maxConcurrentWorkflowTaskExecutions: undefined, maxConcurrentLocalActivityExecutions: undefined, maxCachedWorkflows: undefined };

export const VARIANTS: EngineVariant[] = [
  { name: 'baseline', env: ACTIVITY, workerOptions: SDK_SLOTS },
  { name: 'local-attempt', env: LOCAL, workerOptions: SDK_SLOTS },
  { name: 'eager-start', env: ACTIVITY, eagerStart: true, workerOptions: SDK_SLOTS },
  // The product's slots (WORKER_CONCURRENCY) alone.
  { name: 'slots', env: ACTIVITY },
  // The shipped defaults with the engine on Postgres's Unix socket instead of TCP on loopback: a deployment choice
  // (DATABASE_URL), not a product default.
  { name: 'all-unix-socket', eagerStart: true, unixSocket: true },
  // The shipped defaults but with attempt 1 made by the workflow's own try, not early by the dispatcher beside the
  // start (DELIVERY_EARLY_FIRST_ATTEMPT, attempt/early.ts).
  { name: 'no-early-first-attempt', eagerStart: true, env: { DELIVERY_EARLY_FIRST_ATTEMPT: 'off' } },
  // The shipped defaults but with the start beside the early attempt 1, the workflow's try adopting its outcome
  // through a local activity, instead of after it with the outcome in the input (DELIVERY_START_AFTER_FIRST_ATTEMPT).
  { name: 'start-beside-first-attempt', eagerStart: true, env: { DELIVERY_START_AFTER_FIRST_ATTEMPT: 'off' } },
  // The shipped defaults but with the dispatcher's notified events handed off one pass at a time, each waiting
  // for the one before it (worker/dispatcher.ts NOTIFIED_PASSES).
  { name: 'serial-dispatch', eagerStart: true, notifiedPasses: 1 },
  { name: 'all', eagerStart: true },
];
