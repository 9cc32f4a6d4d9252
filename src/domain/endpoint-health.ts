import type { FailingNoticeResult, RecordAbandonmentInput, RecordAbandonmentResult } from '../core/delivery-contract';
import { newId } from '../core/ids';
import { insertAbandonmentOnce } from '../db/endpoint-abandonments';
import { incrementAbandonedStreak, lockEndpointHealth, markFailingEpisode } from '../db/endpoints';
import {
  claimFailingNoticeEmail,
  findNotification,
  insertNotificationOnce,
  releaseEmailClaim,
} from '../db/notifications';
import { withTransaction, type Pool } from '../db/pool';
import type { Config } from '../infra/config';
import type { Mailer } from '../infra/mailer';
import { composeFailingNotice, EmailNotSentError, sendNotificationEmail } from './notifications';

/**
 * Endpoint health, owned by the database: `threshold` deliveries abandoned with no success in between
 * mark an endpoint failing and tell its merchant, once; a success clears the mark (in the statement, and the
 * trigger, that record it: db/delivery-attempts.ts, migration endpoint-health). The supervisor workflow only
 * serialises reports and calls these functions, each idempotent, so a retried signal or activity changes nothing.
 */

export interface HealthDeps {
  pool: Pool;
  config: Pick<Config, 'delivery' | 'notificationFrom'>;
  /** Absent: notifications are stored, not emailed. */
  mailer?: Mailer;
}

/**
 * One abandoned delivery, in one transaction: the endpoint's row locked (which also waits for successes being
 * recorded), the abandonment stored once, the streak counted unless a success came after it, and, when the streak
 * reaches the threshold of a healthy endpoint, the failing mark and the notification row. Repeating it for the same
 * event counts nothing and returns the endpoint as it stands.
 */
export async function recordAbandonment(
  deps: HealthDeps,
  input: RecordAbandonmentInput,
): Promise<RecordAbandonmentResult> {
  return withTransaction(deps.pool, async (tx) => {
    const endpoint = await lockEndpointHealth(tx, input.endpointId);
    const unchanged = (counted: boolean) => ({
      endpointGone: !endpoint || endpoint.deleted,
      counted,
      streak: endpoint?.abandoned_streak ?? 0,
      failing: endpoint?.status === 'failing',
      notificationId: null,
    });
    if (!endpoint || endpoint.deleted) return unchanged(false);
    const stored = await insertAbandonmentOnce(tx, input.endpointId, input.eventId);
    if (!stored?.counted) return unchanged(false);
    const streak = await incrementAbandonedStreak(tx, input.endpointId);
    if (endpoint.status === 'failing' || streak < input.failingThreshold) {
      return {
        endpointGone: false,
        counted: true,
        streak,
        failing: endpoint.status === 'failing',
        notificationId: null,
      };
    }
    const notification = await insertNotificationOnce(tx, {
      id: newId('notification'),
      accountId: endpoint.account_id,
      endpointId: input.endpointId,
      kind: 'endpoint_failing',
      // The abandonment that crossed the threshold names the episode: it is stored once, so this is too.
      dedupeKey: `endpoint_failing:${input.endpointId}:${input.eventId}`,
      ...composeFailingNotice(endpoint, { endpointId: input.endpointId, streak }, deps.config),
      emailTo: endpoint.email,
    });
    if (!notification) throw new Error(`notification for ${input.endpointId} neither inserted nor found`);
    await markFailingEpisode(tx, input.endpointId, notification.id);
    return { endpointGone: false, counted: true, streak, failing: true, notificationId: notification.id };
  });
}

/**
 * Emails a failing notice at most once: the send is claimed in the database first, and only while the endpoint is
 * still failing in the episode the notice opened, so a success that came in between (or a retry after the mail
 * was sent) sends nothing. A refused send gives the claim back and throws EmailNotSentError, for a retry.
 */
export async function emailFailingNotice(deps: HealthDeps, notificationId: string): Promise<FailingNoticeResult> {
  if (!deps.mailer) return { notificationId, emailed: false };
  const claimed = await claimFailingNoticeEmail(deps.pool, notificationId);
  if (!claimed) {
    const stored = await findNotification(deps.pool, notificationId);
    return { notificationId, emailed: Boolean(stored?.email_sent_at) };
  }
  try {
    await sendNotificationEmail(deps, claimed);
  } catch (err) {
    await releaseEmailClaim(deps.pool, notificationId);
    throw err instanceof EmailNotSentError ? err : new EmailNotSentError((err as Error).message);
  }
  return { notificationId, emailed: true };
}
