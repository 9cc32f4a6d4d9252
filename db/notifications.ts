import type { Pool } from './pool';

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

export interface FailingEndpoint {
  url: string;
  accountId: string;
  email: string | null;
  deleted: boolean;
}

/** The abandoned streak kept by the supervisor, mirrored so a later success knows there is something to reset. */
export async function setAbandonedStreak(pool: Pool, endpointId: string, streak: number): Promise<void> {
  await pool.query('UPDATE webhook_endpoints SET abandoned_streak = $2 WHERE id = $1', [endpointId, streak]);
}

/**
 * One transaction: the endpoint marked failing with its streak, and its notification row, built by `compose`
 * from the endpoint, inserted once per dedupe key. Returns the stored row (an earlier one on a retry), or
 * undefined when the endpoint is gone or removed.
 */
export async function markFailingWithNotification(
  pool: Pool,
  input: {
    endpointId: string;
    streak: number;
    notificationId: string;
    dedupeKey: string;
    compose: (endpoint: FailingEndpoint) => { subject: string; body: string };
  },
): Promise<NotificationRow | undefined> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ url: string; account_id: string; email: string | null; deleted: boolean }>(
      `UPDATE webhook_endpoints e SET status = 'failing', abandoned_streak = $2
         FROM accounts a
        WHERE e.id = $1 AND a.id = e.account_id
        RETURNING e.url, e.account_id, a.email, e.deleted_at IS NOT NULL AS deleted`,
      [input.endpointId, input.streak],
    );
    const row = rows[0];
    if (!row || row.deleted) {
      await client.query('COMMIT');
      return undefined;
    }
    const endpoint = { url: row.url, accountId: row.account_id, email: row.email, deleted: row.deleted };
    const { subject, body } = input.compose(endpoint);
    await client.query(
      `INSERT INTO notifications (id, account_id, endpoint_id, kind, dedupe_key, subject, body, email_to)
       VALUES ($1, $2, $3, 'endpoint_failing', $4, $5, $6, $7)
       ON CONFLICT (dedupe_key) DO NOTHING`,
      [input.notificationId, row.account_id, input.endpointId, input.dedupeKey, subject, body, row.email],
    );
    const stored = await client.query<NotificationRow>('SELECT * FROM notifications WHERE dedupe_key = $1', [
      input.dedupeKey,
    ]);
    await client.query('COMMIT');
    return stored.rows[0];
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

export async function markEmailSent(pool: Pool, notificationId: string): Promise<void> {
  await pool.query('UPDATE notifications SET email_sent_at = now() WHERE id = $1 AND email_sent_at IS NULL', [
    notificationId,
  ]);
}
