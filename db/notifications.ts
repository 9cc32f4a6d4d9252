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
  row: { id: string; accountId: string; endpointId: string; kind: string; dedupeKey: string; subject: string; body: string; emailTo: string | null },
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

export async function markEmailSent(db: Db, notificationId: string): Promise<void> {
  await db.query('UPDATE notifications SET email_sent_at = now() WHERE id = $1 AND email_sent_at IS NULL', [notificationId]);
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
