import type { EngineVariant } from './engine';

/** The engine configurations measured side by side; the first is the baseline the levers are compared with. */
export const VARIANTS: EngineVariant[] = [{ name: 'baseline' }];
