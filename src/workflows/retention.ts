import { proxyActivities } from '@temporalio/workflow';
import type { DeliveryActivities, RetentionResult } from '../core/delivery-contract';
import {
  RETENTION_ACTIVITY_RETRY,
  RETENTION_ACTIVITY_TIMEOUT,
  RETENTION_MAX_BATCHES_PER_RUN,
} from '../core/delivery-policy';

const { deleteExpiredBatch } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: RETENTION_ACTIVITY_TIMEOUT,
  retry: RETENTION_ACTIVITY_RETRY,
});

/**
 * Retention: run by a Temporal Schedule (worker/retention-schedule.ts), it deletes
 * what is older than EVENT_RETENTION in bounded batches, one activity each, until a batch finds nothing more or the
 * run has done its share; the next scheduled run goes on from there.
 */
export async function purgeExpiredEvents(): Promise<RetentionResult> {
  const total: RetentionResult = { events: 0, notifications: 0, signIns: 0, kept: 0, more: false };
  for (let batch = 0; batch < RETENTION_MAX_BATCHES_PER_RUN; batch += 1) {
    const result = await deleteExpiredBatch(total.after);
    total.events += result.events;
    total.notifications += result.notifications;
    total.signIns += result.signIns;
    total.kept += result.kept;
    total.more = result.more;
    total.after = result.after;
    if (!result.more) break;
  }
  return total;
}
