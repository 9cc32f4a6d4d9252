import type { MarkFailingInput, MarkFailingResult } from '../core/delivery-contract';
import { newId } from '../core/ids';
import { markEndpointFailing as markFailingRow, setAbandonedStreak } from '../db/endpoints';
import { insertNotificationOnce } from '../db/notifications';
import { withTransaction, type Pool } from '../db/pool';
import type { Config } from '../infra/config';
import type { Mailer } from '../infra/mailer';
import { composeFailingNotice, emailNotification } from './notifications';

/**
 * Endpoint health (spec 3.1): the endpoint supervisor workflow counts abandoned deliveries in a row; here they
 * are mirrored into the endpoint's row, and crossing the threshold marks it failing and tells the merchant.
 * A successful delivery clears both in the statement that records it (domain/deliveries.ts).
 */

export interface HealthDeps {
  pool: Pool;
  config: Pick<Config, 'delivery' | 'notificationFrom'>;
  /** Absent: notifications are stored, not emailed. */
  mailer?: Mailer;
}

/** Mirrored so a later success knows there is something to reset. */
export async function recordAbandonedStreak(pool: Pool, endpointId: string, streak: number): Promise<void> {
  await setAbandonedStreak(pool, endpointId, streak);
}

/**
 * Marks the endpoint failing and tells the merchant: one transaction stores the mark and a notification row
 * (once per episode, however often this is retried), then, with a mailer, one email. Throws
 * EmailNotSentError when only the email failed: the mark and the row are stored by then.
 */
export async function markEndpointFailing(deps: HealthDeps, input: MarkFailingInput): Promise<MarkFailingResult> {
  const notification = await withTransaction(deps.pool, async (tx) => {
    const endpoint = await markFailingRow(tx, input.endpointId, input.streak);
    if (!endpoint || endpoint.deleted) return undefined;
    return insertNotificationOnce(tx, {
      id: newId('notification'),
      accountId: endpoint.account_id,
      endpointId: input.endpointId,
      kind: 'endpoint_failing',
      dedupeKey: `endpoint_failing:${input.endpointId}:${input.episodeStartEventId}`,
      ...composeFailingNotice(endpoint, input, deps.config),
      emailTo: endpoint.email,
    });
  });
  if (!notification) return { notificationId: null, emailed: false };
  return { notificationId: notification.id, emailed: await emailNotification(deps, notification) };
}
