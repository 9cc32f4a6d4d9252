/**
 * Seeded randomness. Every random choice of a run comes from here, so `--seed N` repeats it. Streams are
 * derived by label (`rng.fork('faults')`), so adding a draw to one part never shifts another part's choices;
 * a receiver decides per (endpoint, event, request number) with `decide`, so its answers do not depend on the
 * order in which concurrent requests arrive.
 */

/** FNV-1a over the seed and the labels: a 32-bit state for mulberry32. */
function hash(seed: number, labels: ReadonlyArray<string | number>): number {
  let h = 0x811c9dc5 ^ (seed >>> 0);
  for (const label of labels) {
    for (const ch of `${String(label)}\u0000`) {
      h ^= ch.charCodeAt(0);
      h = Math.imul(h, 0x01000193);
    }
  }
  return h >>> 0;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max]. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  hex(length: number): string;
  fork(label: string): Rng;
}

export function createRng(seed: number, ...labels: Array<string | number>): Rng {
  let state = hash(seed, labels);
  const next = () => {
    // mulberry32
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const rng: Rng = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick<T>(items: readonly T[]): T {
      if (items.length === 0) throw new Error('pick from an empty list');
      return items[Math.floor(next() * items.length)] as T;
    },
    hex: (length) => Array.from({ length }, () => Math.floor(next() * 16).toString(16)).join(''),
    fork: (label) => createRng(seed, ...labels, label),
  };
  return rng;
}

/** One draw in [0, 1) fixed by the seed and the labels alone. */
export function decide(seed: number, ...labels: Array<string | number>): number {
  return createRng(seed, 'decide', ...labels).next();
}
