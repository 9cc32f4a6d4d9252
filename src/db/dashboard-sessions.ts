import type { AccountStatus } from './accounts';
import type { Db, Pool } from './pool';

/** Tables dashboard_sign_in_links and dashboard_sessions. SQL only: the rules are domain/dashboard-sessions.ts's. */

export async function insertSignInLink(
  pool: Pool,
  row: { tokenHash: Buffer; accountId: string; ttlMs: number },
): Promise<Date> {
  const { rows } = await pool.query<{ expires_at: Date }>(
    `INSERT INTO dashboard_sign_in_links (token_hash, account_id, expires_at)
     VALUES ($1, $2, now() + $3 * interval '1 millisecond') RETURNING expires_at`,
    [row.tokenHash, row.accountId, row.ttlMs],
  );
  return (rows[0] as { expires_at: Date }).expires_at;
}

/** Whether a link could still open a session (known, unused, unexpired); reads only. */
export async function isSignInLinkUsable(pool: Pool, tokenHash: Buffer): Promise<boolean> {
  const { rowCount } = await pool.query(
    'SELECT 1 FROM dashboard_sign_in_links WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()',
    [tokenHash],
  );
  return (rowCount ?? 0) > 0;
}

/**
 * Marks the link used and opens its session in one transaction-free statement: the UPDATE is the single
 * winner when two requests race for one link. Returns the account, or undefined for an unknown, used or
 * expired link.
 */
export async function useSignInLinkAndOpenSession(
  pool: Pool,
  input: { tokenHash: Buffer; sessionIdHash: Buffer; csrfToken: string; ttlMs: number },
): Promise<{ account_id: string; expires_at: Date } | undefined> {
  const { rows } = await pool.query<{ account_id: string; expires_at: Date }>(
    `WITH used AS (
       UPDATE dashboard_sign_in_links SET used_at = now()
        WHERE token_hash = $1 AND used_at IS NULL AND expires_at > now()
        RETURNING account_id
     )
     INSERT INTO dashboard_sessions (id_hash, account_id, csrf_token, expires_at)
     SELECT $2, account_id, $3, now() + $4 * interval '1 millisecond' FROM used
     RETURNING account_id, expires_at`,
    [input.tokenHash, input.sessionIdHash, input.csrfToken, input.ttlMs],
  );
  return rows[0];
}

export interface SessionRow {
  account_id: string;
  account_name: string;
  account_status: AccountStatus;
  csrf_token: string;
  expires_at: Date;
  /** Whether last_seen_at is older than the touch interval asked for. */
  touch_due: boolean;
}

/** A live session (not ended, within its cap, seen within `idleMs`) with its account, in one round trip per page. */
export async function findLiveSession(
  pool: Pool,
  idHash: Buffer,
  window: { idleMs: number; touchAfterMs: number },
): Promise<SessionRow | undefined> {
  const { rows } = await pool.query<SessionRow>(
    `SELECT s.account_id, a.name AS account_name, a.status AS account_status, s.csrf_token, s.expires_at,
            s.last_seen_at < now() - $3 * interval '1 millisecond' AS touch_due
       FROM dashboard_sessions s JOIN accounts a ON a.id = s.account_id
      WHERE s.id_hash = $1 AND s.ended_at IS NULL AND s.expires_at > now()
        AND s.last_seen_at > now() - $2 * interval '1 millisecond'`,
    [idHash, window.idleMs, window.touchAfterMs],
  );
  return rows[0];
}

export async function touchSession(pool: Pool, idHash: Buffer): Promise<void> {
  await pool.query('UPDATE dashboard_sessions SET last_seen_at = now() WHERE id_hash = $1 AND ended_at IS NULL', [
    idHash,
  ]);
}

export async function endSession(pool: Pool, idHash: Buffer): Promise<void> {
  await pool.query('UPDATE dashboard_sessions SET ended_at = now() WHERE id_hash = $1 AND ended_at IS NULL', [idHash]);
}

/** Every open session of the account; returns how many ended. */
export async function endAccountSessions(pool: Pool, accountId: string): Promise<number> {
  const { rowCount } = await pool.query(
    'UPDATE dashboard_sessions SET ended_at = now() WHERE account_id = $1 AND ended_at IS NULL',
    [accountId],
  );
  return rowCount ?? 0;
}

/**
 * Retention: at most `limit` sign-in links and at most `limit` sessions that stopped being usable before `cutoff`
 * (expired, or signed out), oldest first. Returns how many rows went.
 */
export async function deleteSignInsEndedBefore(db: Db, cutoff: Date, limit: number): Promise<number> {
  const links = await db.query(
    `DELETE FROM dashboard_sign_in_links WHERE token_hash IN (
       SELECT token_hash FROM dashboard_sign_in_links WHERE expires_at < $1 ORDER BY expires_at LIMIT $2)`,
    [cutoff, limit],
  );
  const sessions = await db.query(
    `DELETE FROM dashboard_sessions WHERE id_hash IN (
       SELECT id_hash FROM dashboard_sessions WHERE LEAST(expires_at, COALESCE(ended_at, expires_at)) < $1
        ORDER BY expires_at LIMIT $2)`,
    [cutoff, limit],
  );
  return (links.rowCount ?? 0) + (sessions.rowCount ?? 0);
}
