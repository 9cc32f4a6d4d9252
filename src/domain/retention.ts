import type { Client } from '@temporalio/client';
import type { RetentionCursor, RetentionResult } from '../core/delivery-contract';
import { deleteAuditEntriesBefore } from '../db/audit-log';
import { deleteSignInsEndedBefore } from '../db/dashboard-sessions';
import { deleteAbandonmentsBefore } from '../db/endpoint-abandonments';
import { deleteEventsWithAttempts, listExpiredEvents } from '../db/events';
import { deleteNotificationsBefore } from '../db/notifications';
import { withTransaction, type Pool } from '../db/pool';
import { eventIdsWithOpenWorkflows } from '../infra/temporal';
import { deleteOldHours } from './delivery-stats';

/**
 * Retention (EVENT_RETENTION): events older than the cutoff are deleted with their attempts, deliveries and
 * abandonment records, the charts' hourly counts older than a week, and old notifications, audit log entries and the developers page's sign-in links and sessions that
 * stopped being usable before the cutoff, each in bounded batches, never an event whose delivery is
 * still running: one with a delivery workflow Temporal still has open is kept (and looked at again next run).
 */

export interface RetentionDeps {
  pool: Pool;
  temporal: Client;
}

/**
 * One batch of at most `limit` expired events, oldest first from `after` (so events kept for a running delivery do
 * not fill every batch), and, unless `eventsOnly`, at most `limit` old notifications, abandonment records, sign-ins,
 * audit log entries and hourly counts. `swept` says whether any of those came back full (there are more of them to delete).
 */
export async function deleteExpired(
  deps: RetentionDeps,
  options: { cutoff: Date; limit: number; after?: RetentionCursor; eventsOnly?: boolean },
): Promise<RetentionResult & { swept: boolean }> {
  const candidates = await listExpiredEvents(deps.pool, options.cutoff, options.limit, options.after);
  const open =
    candidates.length > 0
      ? await eventIdsWithOpenWorkflows(
          deps.temporal,
          candidates.map((c) => c.id),
        )
      : new Set<string>();
  const expired = candidates.filter((c) => !open.has(c.id)).map((c) => c.id);
  const events =
    expired.length > 0
      ? await withTransaction(deps.pool, (tx) => deleteEventsWithAttempts(tx, expired, options.cutoff))
      : 0;
  const sweep = async (run: () => Promise<number>) => (options.eventsOnly ? 0 : run());
  const notifications = await sweep(() => deleteNotificationsBefore(deps.pool, options.cutoff, options.limit));
  const abandonments = await sweep(() => deleteAbandonmentsBefore(deps.pool, options.cutoff, options.limit));
  const signIns = await sweep(() => deleteSignInsEndedBefore(deps.pool, options.cutoff, options.limit));
  const auditEntries = await sweep(() => deleteAuditEntriesBefore(deps.pool, options.cutoff, options.limit));
  // The charts' hourly counts have a window of their own: nothing reads them after a week.
  const hours = await sweep(() => deleteOldHours(deps.pool, options.limit));
  const swept =
    notifications === options.limit ||
    abandonments === options.limit ||
    auditEntries === options.limit ||
    hours === options.limit ||
    signIns >= options.limit;
  const last = candidates.at(-1);
  return {
    events,
    notifications,
    kept: candidates.length - events,
    signIns,
    more: candidates.length === options.limit || swept,
    swept,
    after: last ? { insertedAt: new Date(last.created * 1000).toISOString(), id: last.id } : options.after,
  };
}

/**
 * Batches of deleteExpired, one after the other, while a batch comes back full and `budgetMs` is not spent: how
 * retention keeps up with a busy engine (a batch per hour would not). Each batch is its own short transaction, so
 * a publish waits on none of them for long; the budget keeps the caller (an activity) well inside its timeout.
 */
export async function purgeExpired(
  deps: RetentionDeps,
  options: { cutoff: Date; limit: number; after?: RetentionCursor; budgetMs: number; clock?: () => number },
): Promise<RetentionResult & { batches: number }> {
  const clock = options.clock ?? Date.now;
  const deadline = clock() + options.budgetMs;
  const total: RetentionResult & { batches: number } = {
    events: 0,
    notifications: 0,
    signIns: 0,
    kept: 0,
    more: true,
    after: options.after,
    batches: 0,
  };
  // The other tables are swept with the first batch and again only while they still have more: most batches are
  // an expired event's rows alone.
  let sweeping = true;
  while (total.more) {
    const batch = await deleteExpired(deps, {
      cutoff: options.cutoff,
      limit: options.limit,
      after: total.after,
      eventsOnly: !sweeping,
    });
    sweeping = batch.swept;
    total.batches += 1;
    total.events += batch.events;
    total.notifications += batch.notifications;
    total.signIns += batch.signIns;
    total.kept += batch.kept;
    total.more = batch.more;
    total.after = batch.after;
    if (clock() >= deadline) break;
  }
  return total;
}
