import type { Mode } from '../core/mode';
import type { AccountStatus } from './accounts';
import { lockAccountBudget } from './account-budgets';
import { inTransaction, preparedStatement, type Db, type Pool } from './pool';

/** Table api_keys. SQL only: key format, validation and the authentication checks are domain/api-keys.ts's. */

export interface KeyForAuth {
  id: string;
  account_id: string;
  mode: Mode;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  account_status: AccountStatus;
}

const FIND_KEY_FOR_AUTH = preparedStatement(
  'api_keys_find_for_auth',
  `SELECT k.id, k.account_id, k.mode, k.scopes, k.expires_at, k.revoked_at, k.last_used_at,
            a.status AS account_status
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.key_hash = $1`,
);

/** One round trip per request: the key and its account's status. */
export async function findKeyForAuth(pool: Pool, keyHash: Buffer): Promise<KeyForAuth | undefined> {
  const { rows } = await pool.query<KeyForAuth>({ ...FIND_KEY_FOR_AUTH, values: [keyHash] });
  return rows[0];
}

/** Moves last_used_at at most about once a minute per key, so a busy key costs no extra writes. */
export async function touchKeyLastUsed(pool: Pool, keyId: string): Promise<void> {
  await pool.query(
    `UPDATE api_keys SET last_used_at = now()
      WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
    [keyId],
  );
}

/** Never the hash: nothing read back from the table can authenticate. */
export interface KeyRow {
  id: string;
  account_id: string;
  mode: Mode;
  last4: string;
  scopes: string[];
  description: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, account_id, mode, last4, scopes, description, expires_at, revoked_at, last_used_at, created_at';

/**
 * Inserts unless the account already has `limit` active (not revoked, not expired) keys in this mode; undefined
 * then. Race-safe like endpoints: the count runs under the account and mode's budget lock.
 */
export async function insertApiKey(
  db: Db,
  row: {
    id: string;
    accountId: string;
    mode: Mode;
    keyHash: Buffer;
    last4: string;
    scopes: string[];
    description: string | null;
    expiresAt: Date | null;
  },
  limit: number,
): Promise<KeyRow | undefined> {
  return inTransaction(db, async (tx) => {
    await lockAccountBudget(tx, 'api_keys', row.accountId, row.mode === 'live');
    const { rows } = await tx.query<KeyRow>(
      `INSERT INTO api_keys (id, account_id, mode, key_hash, last4, scopes, description, expires_at)
       SELECT $1, $2, $3, $4, $5, $6, $7, $8
        WHERE (SELECT count(*) FROM api_keys
                WHERE account_id = $2 AND mode = $3 AND revoked_at IS NULL
                  AND (expires_at IS NULL OR expires_at > now())) < $9
       RETURNING ${COLUMNS}`,
      [row.id, row.accountId, row.mode, row.keyHash, row.last4, row.scopes, row.description, row.expiresAt, limit],
    );
    return rows[0];
  });
}

export async function listApiKeys(pool: Pool, accountId: string): Promise<KeyRow[]> {
  const { rows } = await pool.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC`,
    [accountId],
  );
  return rows;
}

/** `newly_revoked`: this call revoked it (false when it was revoked before). */
export type RevokedKeyRow = KeyRow & { newly_revoked: boolean };

// now() is the transaction's start, so a revoked_at equal to it was set by this very statement.
const REVOKED_COLUMNS = `${COLUMNS}, revoked_at = now() AS newly_revoked`;

/**
 * Revoking twice keeps the first time. Only a key of this account and mode: any other key, another account's or
 * the same account's in the other mode, is left as it is and undefined comes back, as for an unknown id.
 */
export async function revokeApiKey(
  db: Db,
  scope: { accountId: string; livemode: boolean },
  keyId: string,
): Promise<RevokedKeyRow | undefined> {
  const { rows } = await db.query<RevokedKeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
      WHERE id = $1 AND account_id = $2 AND mode = $3 RETURNING ${REVOKED_COLUMNS}`,
    [keyId, scope.accountId, scope.livemode ? 'live' : 'test'],
  );
  return rows[0];
}

/** An operator's revoke (the CLI): any key, by its id alone. */
export async function revokeApiKeyById(db: Db, keyId: string): Promise<RevokedKeyRow | undefined> {
  const { rows } = await db.query<RevokedKeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${REVOKED_COLUMNS}`,
    [keyId],
  );
  return rows[0];
}
