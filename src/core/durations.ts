/** Durations as operators write them (`10s`, `1m`). Pure: workflow code formats its summaries with these. */
const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `250ms`, `10s`, `1m`, `6h`, `1d` into milliseconds; throws on anything else. */
export function parseDuration(text: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)\s*$/.exec(text);
  if (!match) throw new Error(`"${text}" is not a duration (use e.g. 500ms, 10s, 1m, 6h)`);
  const value = Number(match[1]) * (UNIT_MS[match[2] as string] as number);
  if (!Number.isFinite(value)) throw new Error(`"${text}" is not a finite duration`);
  return Math.round(value);
}

/** Parses a comma-separated ladder such as `10s,1m,10m,1h,6h`. */
export function parseDurationList(text: string): number[] {
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 0 || parts.some((p) => p === '')) throw new Error(`"${text}" is not a list of durations`);
  return parts.map(parseDuration);
}

/** "10s", "1m", "6h": the largest whole unit, for config errors and the summaries an operator reads in the Temporal UI. */
export function formatDuration(ms: number): string {
  for (const [unit, size] of [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ] as const) {
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}
