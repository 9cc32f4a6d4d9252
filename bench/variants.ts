import type { EngineVariant } from './engine';

/**
 * The engine configurations measured side by side, each lever alone and then together. The first is the
 * baseline the levers are compared with: the engine as it was before them.
 */
export const VARIANTS: EngineVariant[] = [
  { name: 'baseline', env: { DELIVERY_ATTEMPT: 'activity' } },
  { name: 'local-attempt', env: { DELIVERY_ATTEMPT: 'local' } },
];
