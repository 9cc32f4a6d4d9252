import { generateApiKey, hashApiKey, keyLast4, redactedKey, type KeyMode } from '../core/api-keys';
import { ApiError } from '../core/errors';
import { newId } from '../core/ids';
import type { Scope } from '../core/scopes';
import { getAccount } from './accounts';
import type { Pool } from './pool';

export interface KeyForAuth {
  id: string;
  account_id: string;
  mode: KeyMode;
  scopes: string[];
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  account_status: 'pending' | 'active' | 'suspended';
}

/** One round trip per request: the key and its account's status. */
export async function findKeyForAuth(pool: Pool, keyHash: Buffer): Promise<KeyForAuth | undefined> {
  const { rows } = await pool.query<KeyForAuth>(
    `SELECT k.id, k.account_id, k.mode, k.scopes, k.expires_at, k.revoked_at, k.last_used_at,
            a.status AS account_status
       FROM api_keys k JOIN accounts a ON a.id = k.account_id
      WHERE k.key_hash = $1`,
    [keyHash],
  );
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

/** What operators see of a key: never the key itself, nor its hash. */
export interface ApiKeyRecord {
  id: string;
  object: 'api_key';
  account_id: string;
  mode: KeyMode;
  livemode: boolean;
  redacted: string;
  last4: string;
  scopes: string[];
  description: string | null;
  expires_at: string | null;
  revoked: boolean;
  revoked_at: string | null;
  last_used_at: string | null;
  created_at: string;
}

interface KeyRow {
  id: string;
  account_id: string;
  mode: KeyMode;
  last4: string;
  scopes: string[];
  description: string | null;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  created_at: Date;
}

const COLUMNS = 'id, account_id, mode, last4, scopes, description, expires_at, revoked_at, last_used_at, created_at';

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    object: 'api_key',
    account_id: row.account_id,
    mode: row.mode,
    livemode: row.mode === 'live',
    redacted: redactedKey(row.mode, row.last4),
    last4: row.last4,
    scopes: row.scopes,
    description: row.description,
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked: row.revoked_at !== null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

export interface CreatedApiKey extends ApiKeyRecord {
  /** The only time the key exists outside the caller's hands. */
  key: string;
}

export async function createApiKey(
  pool: Pool,
  input: { accountId: string; mode: KeyMode; scopes: Scope[]; expiresAt?: Date; description?: string },
): Promise<CreatedApiKey> {
  if (input.scopes.length === 0) throw new ApiError('parameter_invalid', 'A key needs at least one scope.', { param: 'scopes' });
  const description = input.description?.trim() || null;
  if (description !== null && description.length > 500) {
    throw new ApiError('parameter_invalid', 'The description must be at most 500 characters.', { param: 'description' });
  }
  await getAccount(pool, input.accountId);
  const key = generateApiKey(input.mode);
  const { rows } = await pool.query<KeyRow>(
    `INSERT INTO api_keys (id, account_id, mode, key_hash, last4, scopes, description, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
    [newId('apiKey'), input.accountId, input.mode, hashApiKey(key), keyLast4(key), input.scopes, description, input.expiresAt ?? null],
  );
  return { ...toRecord(rows[0] as KeyRow), key };
}

export async function listApiKeys(pool: Pool, accountId: string): Promise<ApiKeyRecord[]> {
  await getAccount(pool, accountId);
  const { rows } = await pool.query<KeyRow>(
    `SELECT ${COLUMNS} FROM api_keys WHERE account_id = $1 ORDER BY created_at DESC, id DESC`,
    [accountId],
  );
  return rows.map(toRecord);
}

/** Immediate: authentication reads revoked_at on every request. Revoking twice keeps the first time. */
export async function revokeApiKey(pool: Pool, keyId: string): Promise<ApiKeyRecord> {
  const { rows } = await pool.query<KeyRow>(
    `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1 RETURNING ${COLUMNS}`,
    [keyId],
  );
  if (!rows[0]) throw new ApiError('resource_missing', `No such API key: ${JSON.stringify(keyId)}.`, { param: 'key' });
  return toRecord(rows[0]);
}
