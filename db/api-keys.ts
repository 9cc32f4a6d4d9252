import type { Pool } from './pool';

export interface KeyForAuth {
  id: string;
  account_id: string;
  mode: 'test' | 'live';
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
