import { lockAccountBudget } from './account-budgets';
import {
  ENDPOINT_SETTINGS,
  settingColumnsSelected,
  WRITABLE_SETTINGS,
  type ColumnSpec,
  type SettingColumnValues,
  type SettingsRow,
  type WritableSettingName,
} from '../core/endpoint-settings';
import { inTransaction, type Db, type Pool } from './pool';

/** Table webhook_endpoints. Every read made for the API is scoped to one account and one mode. */

/** A row as every read returns it: its identity and what it is, then one field per setting (core/endpoint-settings.ts). */
export type EndpointRow = {
  id: string;
  account_id: string;
  livemode: boolean;
  /** Registered by `listen` for its session (local_certificate set). */
  local: boolean;
  created_at: Date;
} & SettingsRow;

/** The owner and mode every API read and write is scoped to (isolation, test mode). */
export interface EndpointScope {
  accountId: string;
  livemode: boolean;
}

// Never the secret columns: the API shows a secret only in the response that created it.
const PUBLIC_COLUMNS = `id, account_id, livemode, created_at, local_certificate IS NOT NULL AS local, ${settingColumnsSelected()}`;

const columnOf = (name: WritableSettingName): ColumnSpec => ENDPOINT_SETTINGS[name].column;

/** A new endpoint's row: `certificate` only for a listen session's endpoint (pinned, loopback). */
export interface NewEndpoint extends EndpointScope {
  id: string;
  sealedSecret: string;
  certificate?: string;
  /** The settings' values by setting; one left out takes its column's default. */
  settings: SettingColumnValues;
}

/**
 * Inserts unless the account already has `limit` endpoints (deleted ones aside) in this mode; undefined then.
 * Race-safe: the count runs under the account and mode's budget lock (db/account-budgets.ts), in a statement
 * that starts after the lock is held, so it sees every insert committed before.
 */
export async function insertEndpoint(db: Db, row: NewEndpoint, limit: number): Promise<EndpointRow | undefined> {
  const given = WRITABLE_SETTINGS.filter((name) => row.settings[name] !== undefined);
  const FIXED = 6;
  return inTransaction(db, async (tx) => {
    await lockAccountBudget(tx, 'webhook_endpoints', row.accountId, row.livemode);
    const { rows } = await tx.query<EndpointRow>(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, secret, local_certificate${given.map((name) => `, ${columnOf(name).name}`).join('')})
       SELECT $1, $2, $3, $4, $5${given.map((name, index) => `, $${FIXED + 1 + index}::${columnOf(name).type}`).join('')}
        WHERE (SELECT count(*) FROM webhook_endpoints
                WHERE account_id = $2 AND livemode = $3 AND deleted_at IS NULL) < $6
       RETURNING ${PUBLIC_COLUMNS}`,
      [
        row.id,
        row.accountId,
        row.livemode,
        row.sealedSecret,
        row.certificate ?? null,
        limit,
        ...given.map((name) => row.settings[name]),
      ],
    );
    return rows[0];
  });
}

/** A live (not deleted) endpoint of this account and mode. */
export async function findEndpoint(pool: Pool, scope: EndpointScope, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await pool.query<EndpointRow>(
    `SELECT ${PUBLIC_COLUMNS} FROM webhook_endpoints
      WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL`,
    [id, scope.accountId, scope.livemode],
  );
  return rows[0];
}

/** findEndpoint, the row locked for the rest of the caller's transaction: what a change starts from. */
export async function lockEndpoint(db: Db, scope: EndpointScope, id: string): Promise<EndpointRow | undefined> {
  const { rows } = await db.query<EndpointRow>(
    `SELECT ${PUBLIC_COLUMNS} FROM webhook_endpoints
      WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL
        FOR NO KEY UPDATE`,
    [id, scope.accountId, scope.livemode],
  );
  return rows[0];
}

/**
 * Newest first. `startingAfter` must be an endpoint of this account and mode; a deleted one still works as a
 * cursor so that a client paging while someone removes endpoints is not broken. Returns undefined when the
 * cursor is unknown. Fetches limit + 1 rows to learn has_more without a count.
 */
export async function listEndpoints(
  pool: Pool,
  scope: EndpointScope,
  page: { limit: number; startingAfter?: string },
): Promise<{ rows: EndpointRow[]; hasMore: boolean } | undefined> {
  const params: unknown[] = [scope.accountId, scope.livemode, page.limit + 1];
  let cursorClause = '';
  if (page.startingAfter !== undefined) {
    const cursor = await pool.query(
      'SELECT 1 FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND livemode = $3',
      [page.startingAfter, scope.accountId, scope.livemode],
    );
    if (cursor.rowCount === 0) return undefined;
    params.push(page.startingAfter);
    // Compared in SQL so the cursor keeps created_at's microseconds.
    cursorClause = 'AND (created_at, id) < (SELECT created_at, id FROM webhook_endpoints WHERE id = $4)';
  }
  const { rows } = await pool.query<EndpointRow>(
    `SELECT ${PUBLIC_COLUMNS} FROM webhook_endpoints
      WHERE account_id = $1 AND livemode = $2 AND deleted_at IS NULL ${cursorClause}
      ORDER BY created_at DESC, id DESC
      LIMIT $3`,
    params,
  );
  return { rows: rows.slice(0, page.limit), hasMore: rows.length > page.limit };
}

/** What PATCH changes; a setting left out stays as it is. */
export interface EndpointChange {
  /** The settings' new values by setting (null clears a nullable one); the url and headers as stored (sealed). */
  settings?: SettingColumnValues;
  disabled?: boolean;
  /**
   * The url and stored headers the change was computed from: the update applies only while both are still
   * these, so a concurrent change of either (a credential set for the old origin) is never carried to a new one.
   */
  basedOn?: { url: string; storedHeaders: string };
}

/**
 * One statement: the change and, when disabling, the end of the endpoint's pending deliveries (their ladders
 * read that before their next attempt and stop). A new URL drops a listen session's pinned certificate, so the
 * loopback exception never carries over to a URL set through the API. Enabling again replays nothing.
 */
export async function updateEndpoint(
  db: Db,
  scope: EndpointScope,
  id: string,
  change: EndpointChange,
): Promise<EndpointRow | undefined> {
  // $1..$6 fixed; then for each writable setting, in order, whether it is given and its value.
  const FIXED = 6;
  const given = (index: number) => `$${FIXED + 1 + index * 2}::boolean`;
  const value = (index: number) => `$${FIXED + 2 + index * 2}::${columnOf(WRITABLE_SETTINGS[index]!).type}`;
  const url = value(WRITABLE_SETTINGS.indexOf('url'));
  const sets = WRITABLE_SETTINGS.map((name, index) => {
    const col = columnOf(name).name;
    return `${col} = CASE WHEN ${given(index)} THEN ${value(index)} ELSE ${col} END`;
  });
  const { rows } = await db.query<EndpointRow>(
    `WITH before AS (
       SELECT rate_limit FROM webhook_endpoints WHERE id = $1 AND account_id = $2 AND livemode = $3
     ), updated AS (
       UPDATE webhook_endpoints
          SET ${sets.join(',\n              ')},
              disabled_at = CASE WHEN $4::boolean IS NULL THEN disabled_at
                                 WHEN $4::boolean THEN COALESCE(disabled_at, now()) END,
              -- the engine's reason stays while it stays disabled; enabling it clears it
              disabled_reason = CASE WHEN $4::boolean IS FALSE THEN NULL ELSE disabled_reason END,
              local_certificate = CASE WHEN ${url} IS NOT NULL AND ${url} <> url THEN NULL ELSE local_certificate END
        WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL
          AND ($5::text IS NULL OR (url = $5::text AND headers = $6::text))
        RETURNING ${PUBLIC_COLUMNS}
     ), stopped AS (
       UPDATE deliveries SET status = 'skipped', reason = 'endpoint_disabled'
        WHERE endpoint_id = $1 AND status = 'pending' AND $4::boolean IS TRUE AND EXISTS (SELECT 1 FROM updated)
     ), released AS (
       -- disabled, or its limit changed or removed: every place in its queue is given back
       SELECT release_rate_places($1) FROM updated, before
        WHERE $4::boolean IS TRUE OR updated.rate_limit IS DISTINCT FROM before.rate_limit
     )
     SELECT updated.* FROM updated LEFT JOIN released ON true`,
    [
      id,
      scope.accountId,
      scope.livemode,
      change.disabled ?? null,
      change.basedOn?.url ?? null,
      change.basedOn?.storedHeaders ?? null,
      ...WRITABLE_SETTINGS.flatMap((name) => [change.settings?.[name] !== undefined, change.settings?.[name] ?? null]),
    ],
  );
  return rows[0];
}

/**
 * Soft delete: pending delivery ladders read deleted_at and stop; attempts keep their foreign key. The rows of its
 * rate-limit queue go in the same statement: nothing will ever post to it again.
 */
export async function softDeleteEndpoint(db: Db, scope: EndpointScope, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `WITH deleted AS (
       UPDATE webhook_endpoints SET deleted_at = now()
        WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL
       RETURNING id
     ), tokens AS (
       DELETE FROM endpoint_rate_tokens WHERE endpoint_id IN (SELECT id FROM deleted)
     ), queue AS (
       DELETE FROM endpoint_rate_queues WHERE endpoint_id IN (SELECT id FROM deleted)
     )
     SELECT 1 FROM deleted`,
    [id, scope.accountId, scope.livemode],
  );
  return rowCount === 1;
}

/**
 * Pauses the endpoint (its attempts are held: attempt/run.ts), keeping the first pause's time when it already is.
 * Every place in its rate-limit queue is given back: a held attempt holds none, and asks again once resumed.
 * `changed` says whether this call paused it. Runs on the caller's transaction (domain/endpoint-lifecycle.ts).
 */
export async function pauseEndpoint(
  db: Db,
  scope: EndpointScope,
  id: string,
): Promise<{ row: EndpointRow; changed: boolean } | undefined> {
  const { rows } = await db.query<EndpointRow & { changed: boolean }>(
    // The row as it was comes from the locked read the update joins: a separate CTE reading it would not see
    // the row this statement updates.
    `WITH updated AS (
       UPDATE webhook_endpoints w SET paused_at = COALESCE(w.paused_at, now())
         FROM (SELECT id AS locked_id, paused_at AS was FROM webhook_endpoints
                WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL FOR UPDATE) b
        WHERE w.id = b.locked_id
        RETURNING ${PUBLIC_COLUMNS}, b.was IS NULL AS changed
     ), released AS (
       SELECT release_rate_places($1) FROM updated
     )
     SELECT updated.* FROM updated LEFT JOIN released ON true`,
    [id, scope.accountId, scope.livemode],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { changed, ...endpoint } = row;
  return { row: endpoint, changed };
}

/** Resumes the endpoint: its held attempts go out at their next re-check. `changed`: this call resumed it. */
export async function resumeEndpoint(
  db: Db,
  scope: EndpointScope,
  id: string,
): Promise<{ row: EndpointRow; changed: boolean } | undefined> {
  const { rows } = await db.query<EndpointRow & { changed: boolean }>(
    `UPDATE webhook_endpoints w SET paused_at = NULL
       FROM (SELECT id AS locked_id, paused_at AS was FROM webhook_endpoints
              WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL FOR UPDATE) b
      WHERE w.id = b.locked_id
      RETURNING ${PUBLIC_COLUMNS}, b.was IS NOT NULL AS changed`,
    [id, scope.accountId, scope.livemode],
  );
  const row = rows[0];
  if (!row) return undefined;
  const { changed, ...endpoint } = row;
  return { row: endpoint, changed };
}

/**
 * The engine's disable after a 410 Gone answer to delivery `deliveryId` (recorded in the same transaction just
 * before): the endpoint disabled with the reason `gone` (an endpoint its owner had disabled keeps a null reason),
 * its other pending deliveries skipped (`endpoint_disabled`, as a merchant's disable), the answered delivery's
 * reason `endpoint_gone`, and every place in its rate-limit queue given back. `disabled`: this call disabled it.
 */
export async function disableGoneEndpoint(
  db: Db,
  endpointId: string,
  deliveryId: string,
): Promise<{ disabled: boolean; accountId: string; livemode: boolean } | undefined> {
  const { rows } = await db.query<{ disabled: boolean; account_id: string; livemode: boolean }>(
    `WITH updated AS (
       UPDATE webhook_endpoints w
          SET disabled_at = COALESCE(w.disabled_at, now()),
              disabled_reason = CASE WHEN w.disabled_at IS NULL THEN 'gone' ELSE w.disabled_reason END
         FROM (SELECT id AS locked_id, disabled_at AS was FROM webhook_endpoints WHERE id = $1 AND deleted_at IS NULL FOR UPDATE) b
        WHERE w.id = b.locked_id
        RETURNING w.account_id, w.livemode, b.was IS NULL AS disabled
     ), stopped AS (
       UPDATE deliveries SET status = 'skipped', reason = 'endpoint_disabled'
        WHERE endpoint_id = $1 AND status = 'pending' AND id <> $2 AND EXISTS (SELECT 1 FROM updated)
     ), answered AS (
       UPDATE deliveries SET reason = 'endpoint_gone' WHERE id = $2 AND status = 'failed'
     ), released AS (
       SELECT release_rate_places($1) FROM updated
     )
     SELECT disabled, account_id, livemode FROM updated LEFT JOIN released ON true`,
    [endpointId, deliveryId],
  );
  const row = rows[0];
  return row && { disabled: row.disabled, accountId: row.account_id, livemode: row.livemode };
}

/** The old secret stays valid for graceMs so receivers can switch over; a second rotation replaces it. */
export async function rotateEndpointSecret(
  db: Db,
  scope: EndpointScope,
  id: string,
  change: { sealedSecret: string; graceMs: number },
): Promise<EndpointRow | undefined> {
  const { rows } = await db.query<EndpointRow>(
    `UPDATE webhook_endpoints
        SET previous_secret = secret,
            previous_secret_expires_at = now() + $5 * interval '1 millisecond',
            secret = $4
      WHERE id = $1 AND account_id = $2 AND livemode = $3 AND deleted_at IS NULL
      RETURNING ${PUBLIC_COLUMNS}`,
    [id, scope.accountId, scope.livemode, change.sealedSecret, change.graceMs],
  );
  return rows[0];
}

/** What endpoint health reads under its lock: the row, and where a notification goes. */
export interface EndpointHealthRow {
  id: string;
  url: string;
  account_id: string;
  email: string | null;
  status: 'enabled' | 'failing';
  abandoned_streak: number;
  deleted: boolean;
}

/**
 * Locks the endpoint's row for the rest of the transaction. FOR UPDATE (not NO KEY UPDATE) on purpose: it also
 * waits for attempts being recorded right now, which hold a KEY SHARE lock on the row until they commit (their
 * foreign key check), so the abandonment that follows sees every success already under way.
 */
export async function lockEndpointHealth(db: Db, endpointId: string): Promise<EndpointHealthRow | undefined> {
  const { rows } = await db.query<EndpointHealthRow>(
    `SELECT e.id, e.url, e.account_id, a.email, e.status, e.abandoned_streak, e.deleted_at IS NOT NULL AS deleted
       FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id
      WHERE e.id = $1
        FOR UPDATE OF e`,
    [endpointId],
  );
  return rows[0];
}

/** One more abandonment in the streak; the row is locked by the caller's transaction. */
export async function incrementAbandonedStreak(db: Db, endpointId: string): Promise<number> {
  const { rows } = await db.query<{ abandoned_streak: number }>(
    'UPDATE webhook_endpoints SET abandoned_streak = abandoned_streak + 1 WHERE id = $1 RETURNING abandoned_streak',
    [endpointId],
  );
  return rows[0]?.abandoned_streak ?? 0;
}

/** The failing mark of a new episode, with the notification that tells the merchant of it. */
export async function markFailingEpisode(db: Db, endpointId: string, notificationId: string): Promise<void> {
  await db.query(`UPDATE webhook_endpoints SET status = 'failing', failing_notification_id = $2 WHERE id = $1`, [
    endpointId,
    notificationId,
  ]);
}

/**
 * What an endpoint holds sealed at rest (or plain): both signing secrets and the custom headers ('{}' when there
 * are none, which is stored as is).
 */
export interface StoredSecrets {
  id: string;
  secret: string;
  previous_secret: string | null;
  headers: string;
}

/** The next `limit` endpoints after `afterId` by id, deleted ones too: a keyset walk over every stored secret. */
export async function listStoredSecrets(pool: Pool, afterId: string, limit: number): Promise<StoredSecrets[]> {
  const { rows } = await pool.query<StoredSecrets>(
    'SELECT id, secret, previous_secret, headers FROM webhook_endpoints WHERE id > $1 ORDER BY id LIMIT $2',
    [afterId, limit],
  );
  return rows;
}

/**
 * Replaces stored secrets and headers, in one statement (one transaction, row locks only), each row only if all
 * its values are still those read: a rotation or a header change meanwhile is kept. `headers` absent: the headers
 * read stay. Returns the ids replaced.
 */
export async function replaceStoredSecrets(
  pool: Pool,
  changes: Array<{ read: StoredSecrets; secret: string; previousSecret: string | null; headers?: string }>,
): Promise<string[]> {
  if (changes.length === 0) return [];
  const { rows } = await pool.query<{ id: string }>(
    `UPDATE webhook_endpoints e
        SET secret = c.secret, previous_secret = c.previous_secret, headers = c.headers
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
            AS c(id, read_secret, read_previous, read_headers, secret, previous_secret, headers)
      WHERE e.id = c.id AND e.secret = c.read_secret AND e.previous_secret IS NOT DISTINCT FROM c.read_previous
        AND e.headers = c.read_headers
      RETURNING e.id`,
    [
      changes.map((c) => c.read.id),
      changes.map((c) => c.read.secret),
      changes.map((c) => c.read.previous_secret),
      changes.map((c) => c.read.headers),
      changes.map((c) => c.secret),
      changes.map((c) => c.previousSecret),
      changes.map((c) => c.headers ?? c.read.headers),
    ],
  );
  return rows.map((row) => row.id);
}

/**
 * Endpoints by the form of what they hold sealed: `enc:v2:<key id>`, `enc:v1` or `plain`, over the current and
 * previous secrets and the custom headers ('{}', no headers, holds nothing and is not counted).
 */
export async function countSecretForms(pool: Pool): Promise<Array<{ form: string; endpoints: number }>> {
  const { rows } = await pool.query<{ form: string; endpoints: number }>(
    `SELECT CASE WHEN stored.value LIKE 'enc:v2:%' THEN 'enc:v2:' || split_part(stored.value, ':', 3)
                 WHEN stored.value LIKE 'enc:v1:%' THEN 'enc:v1'
                 ELSE 'plain' END AS form,
            count(DISTINCT e.id)::int AS endpoints
       FROM webhook_endpoints e,
            LATERAL (VALUES (e.secret), (e.previous_secret), (NULLIF(e.headers, '{}'))) AS stored(value)
      WHERE stored.value IS NOT NULL
      GROUP BY 1 ORDER BY 1`,
  );
  return rows;
}
