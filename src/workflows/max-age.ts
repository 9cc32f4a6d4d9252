import { sleep } from '@temporalio/workflow';
import { formatDuration } from '../core/durations';

/**
 * A delivery's max age (DELIVERY_MAX_AGE), the workflow's side: every wait of a ladder (its retry timers, its
 * rate-limit and Retry-After waits, a database backoff, its turn in a parcel's order) ends at the latest when the
 * delivery expires, and the ladder then gives the delivery up instead of posting.
 */

/** The delivery's time has run out (`expiresAtMs` undefined: it has no max age). Workflow time. */
export function hasExpired(expiresAtMs: number | undefined): boolean {
  return expiresAtMs !== undefined && Date.now() >= expiresAtMs;
}

/** How long a wait of `ms` may last before the delivery expires (never less than 1 ms, Temporal's smallest timer). */
export function withinMaxAge(expiresAtMs: number | undefined, ms: number): number {
  return expiresAtMs === undefined ? ms : Math.max(1, Math.min(ms, expiresAtMs - Date.now()));
}

/**
 * Sleeps `ms` on a durable timer, or only until the delivery expires when that comes first: then the summary says
 * so, and false comes back (the caller gives the delivery up). True: the whole wait ran.
 */
export async function sleepWithinMaxAge(
  expiresAtMs: number | undefined,
  ms: number,
  summary: string,
): Promise<boolean> {
  const waitMs = withinMaxAge(expiresAtMs, ms);
  if (waitMs >= ms) {
    await sleep(ms, { summary });
    return true;
  }
  if (!hasExpired(expiresAtMs)) {
    await sleep(waitMs, { summary: `${summary}; expires first, in ${formatDuration(waitMs)}` });
  }
  return false;
}
