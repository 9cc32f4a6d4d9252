import type { Db } from './pool';

/** Table notifications: what we tell merchants, one row per occurrence (dedupe_key), with its email state. */

export interface NotificationRow {
  id: string;
  account_id: string;
  endpoint_id: string | null;
  kind: string;
  dedupe_key: string;
  subject: string;
  body: string;
  email_to: string | null;
  email_sent_at: Date | null;
}

/** Inserted once per dedupe key; returns the stored row, an earlier one when the key was already used (a retry). */
export async function insertNotificationOnce(
  db: Db,
  row: {
    id: string;
    accountId: string;
    endpointId: string;
    kind: string;
    dedupeKey: string;
    subject: string;
    body: string;
    emailTo: string | null;
  },
): Promise<NotificationRow | undefined> {
  await db.query(
    `INSERT INTO notifications (id, account_id, endpoint_id, kind, dedupe_key, subject, body, email_to)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
     ON CONFLICT (dedupe_key) DO NOTHING`,
    [row.id, row.accountId, row.endpointId, row.kind, row.dedupeKey, row.subject, row.body, row.emailTo],
  );
  const stored = await db.query<NotificationRow>('SELECT * FROM notifications WHERE dedupe_key = $1', [row.dedupeKey]);
  return stored.rows[0];
}

/**
 * Claims the right to email a failing-endpoint notice, once: email_sent_at is set before sending, and only while
 * the notice still describes the endpoint (failing, in the episode this notification opened, not removed). A
 * success recorded meanwhile, or an earlier claim, claims nothing. Returns the row when claimed.
 */
export async function claimFailingNoticeEmail(db: Db, notificationId: string): Promise<NotificationRow | undefined> {
  const { rows } = await db.query<NotificationRow>(
    `UPDATE notifications n SET email_sent_at = now()
      WHERE n.id = $1 AND n.email_sent_at IS NULL AND n.email_to IS NOT NULL
        AND EXISTS (SELECT 1 FROM webhook_endpoints e
                     WHERE e.id = n.endpoint_id AND e.status = 'failing' AND e.failing_notification_id = n.id
                       AND e.deleted_at IS NULL)
      RETURNING *`,
    [notificationId],
  );
  return rows[0];
}

/** The mail server refused: give the claim back, so a retry may send. Only the claim's holder calls this. */
export async function releaseEmailClaim(db: Db, notificationId: string): Promise<void> {
  await db.query('UPDATE notifications SET email_sent_at = NULL WHERE id = $1', [notificationId]);
}

export async function findNotification(db: Db, notificationId: string): Promise<NotificationRow | undefined> {
  const { rows } = await db.query<NotificationRow>('SELECT * FROM notifications WHERE id = $1', [notificationId]);
  return rows[0];
}

/** An endpoint's notifications, newest first (created_at is a column the row type above leaves out). */
export async function listEndpointNotifications(
  db: Db,
  input: { accountId: string; endpointId: string; limit: number },
): Promise<(NotificationRow & { created_at: Date })[]> {
  const { rows } = await db.query<NotificationRow & { created_at: Date }>(
    `SELECT * FROM notifications WHERE account_id = $1 AND endpoint_id = $2 ORDER BY created_at DESC, id DESC LIMIT $3`,
    [input.accountId, input.endpointId, input.limit],
  );
  return rows;
}

/** Retention: at most `limit` notifications created before `cutoff`, oldest first. Returns how many. */
export async function deleteNotificationsBefore(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM notifications WHERE id IN (
       SELECT id FROM notifications WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
    [cutoff, limit],
  );
  return rowCount ?? 0;
}
