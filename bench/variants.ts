import type { EngineVariant } from './engine';

/**
 * The engine configurations measured side by side, each lever alone and then together. The first is the
 * baseline the levers are compared with: the engine as it was before them.
 */
const LOCAL = { DELIVERY_ATTEMPT: 'local' };
const ACTIVITY = { DELIVERY_ATTEMPT: 'activity' };
// More workflow tasks and local attempts at once than the SDK's defaults (40 and 100), a cache bounded below
// its memory-derived default, and more pollers so an idle slot is not waiting for a poll to come back.
const SLOTS = {
  maxConcurrentWorkflowTaskExecutions: 100,
  maxConcurrentLocalActivityExecutions: 200,
  maxConcurrentWorkflowTaskPolls: 20,
  maxCachedWorkflows: 1000,
};

export const VARIANTS: EngineVariant[] = [
  { name: 'baseline', env: ACTIVITY },
  { name: 'local-attempt', env: LOCAL },
  { name: 'eager-start', env: ACTIVITY, eagerStart: true },
  { name: 'slots', env: ACTIVITY, workerOptions: SLOTS },
  { name: 'all', env: LOCAL, eagerStart: true, workerOptions: SLOTS },
];
