import type { Db, Pool } from './pool';

/**
 * Table audit_log. SQL only: which changes are recorded, by whom and in which transaction is
 * domain/audit-log.ts's. Rows hold names and ids, never a value of a key, a secret or a header.
 */

export type AuditActorType = 'api_key' | 'dashboard' | 'cli' | 'system';

export interface NewAuditEntry {
  id: string;
  accountId: string;
  livemode: boolean;
  action: string;
  actorType: AuditActorType;
  actorId: string | null;
  targetType: string;
  targetId: string;
  changes?: string[];
}

export interface AuditRow {
  id: string;
  account_id: string;
  livemode: boolean;
  action: string;
  actor_type: AuditActorType;
  actor_id: string | null;
  target_type: string;
  target_id: string;
  changes: string[] | null;
  created_at: Date;
}

const COLUMNS = 'id, account_id, livemode, action, actor_type, actor_id, target_type, target_id, changes, created_at';

/** `db` is the client of the change's own transaction, so the entry commits or rolls back with it. */
export async function insertAuditEntry(db: Db, entry: NewAuditEntry): Promise<void> {
  await db.query(
    `INSERT INTO audit_log (id, account_id, livemode, action, actor_type, actor_id, target_type, target_id, changes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      entry.id,
      entry.accountId,
      entry.livemode,
      entry.action,
      entry.actorType,
      entry.actorId,
      entry.targetType,
      entry.targetId,
      entry.changes ?? null,
    ],
  );
}

/**
 * Newest first, one account and mode, optionally one action. `startingAfter` must be an entry of this account
 * and mode (undefined comes back otherwise). Fetches limit + 1 rows to learn has_more without a count.
 */
export async function listAuditEntries(
  pool: Pool,
  scope: { accountId: string; livemode: boolean },
  page: { limit: number; startingAfter?: string; action?: string },
): Promise<{ rows: AuditRow[]; hasMore: boolean } | undefined> {
  const params: unknown[] = [scope.accountId, scope.livemode, page.limit + 1, page.action ?? null];
  let cursorClause = '';
  if (page.startingAfter !== undefined) {
    const cursor = await pool.query('SELECT 1 FROM audit_log WHERE id = $1 AND account_id = $2 AND livemode = $3', [
      page.startingAfter,
      scope.accountId,
      scope.livemode,
    ]);
    if (cursor.rowCount === 0) return undefined;
    params.push(page.startingAfter);
    // Compared in SQL so the cursor keeps created_at's microseconds.
    cursorClause = 'AND (created_at, id) < (SELECT created_at, id FROM audit_log WHERE id = $5)';
  }
  const { rows } = await pool.query<AuditRow>(
    `SELECT ${COLUMNS} FROM audit_log
      WHERE account_id = $1 AND livemode = $2 AND ($4::text IS NULL OR action = $4) ${cursorClause}
      ORDER BY created_at DESC, id DESC
      LIMIT $3`,
    params,
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** Retention: at most `limit` entries older than the cutoff, oldest first. */
export async function deleteAuditEntriesBefore(db: Db, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM audit_log WHERE id IN (
       SELECT id FROM audit_log WHERE created_at < $1 ORDER BY created_at LIMIT $2)`,
    [cutoff, limit],
  );
  return rowCount ?? 0;
}
