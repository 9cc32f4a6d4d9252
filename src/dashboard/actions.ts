import { ApiError } from '../core/errors';

/**
 * The budget of PAGE_ACTIONS_PER_MINUTE changes per developers-page session (test events, resends, recoveries,
 * keys and endpoints made, and every other form), spent by the page's guard (./guard.ts), so a stuck script or a
 * held-down button cannot flood deliveries. The counters live in this process, like the API's rate limits.
 */

export const PAGE_ACTIONS_PER_MINUTE = 30;
const WINDOW_MS = 60_000;
/** Sessions tracked before expired windows are swept. */
const SWEEP_AT = 10_000;

const windows = new Map<string, { startedAt: number; count: number }>();

/** Counts one change of a session; throws rate_limited, with the seconds to wait, past the budget. */
export function spendPageAction(sessionKey: string, now = Date.now()): void {
  if (windows.size >= SWEEP_AT) {
    for (const [key, window] of windows) if (now - window.startedAt >= WINDOW_MS) windows.delete(key);
  }
  let window = windows.get(sessionKey);
  if (!window || now - window.startedAt >= WINDOW_MS) {
    window = { startedAt: now, count: 0 };
    windows.set(sessionKey, window);
  }
  window.count += 1;
  if (window.count <= PAGE_ACTIONS_PER_MINUTE) return;
  const waitSeconds = Math.max(1, Math.ceil((window.startedAt + WINDOW_MS - now) / 1000));
  throw new ApiError(
    'rate_limited',
    `Too many changes from this session: at most ${PAGE_ACTIONS_PER_MINUTE} a minute. Nothing was changed; try again in ${waitSeconds} seconds.`,
    {},
    { 'retry-after': String(waitSeconds) },
  );
}
