import type { Mode } from '../../src/core/mode';
import { generateApiKey, hashApiKey } from '../../src/domain/api-keys';
import { newId } from '../../src/core/ids';
import { ALL_SCOPES, type Scope } from '../../src/core/scopes';
import type { Pool } from '../../src/db/pool';
import type { AccountStatus } from '../../src/domain/accounts';

/**
 * Accounts and keys written straight into the database, so API tests do not depend on the CLI.
 * The key is shaped and hashed exactly as src/domain/api-keys.ts does for real keys.
 */

export type { AccountStatus };

export async function createAccount(
  pool: Pool,
  {
    status = 'active',
    name = 'Test merchant',
    email = null,
  }: { status?: AccountStatus; name?: string; email?: string | null } = {},
): Promise<string> {
  const id = newId('account');
  await pool.query('INSERT INTO accounts (id, name, email, status) VALUES ($1, $2, $3, $4)', [id, name, email, status]);
  return id;
}

export interface CreatedKey {
  id: string;
  /** The plain key, for the Authorization header. */
  key: string;
}

export async function createApiKey(
  pool: Pool,
  {
    accountId,
    mode = 'test',
    scopes = ALL_SCOPES,
    expiresAt = null,
    revoked = false,
  }: { accountId: string; mode?: Mode; scopes?: Scope[] | string[]; expiresAt?: Date | null; revoked?: boolean },
): Promise<CreatedKey> {
  const id = newId('apiKey');
  const key = generateApiKey(mode);
  await pool.query(
    `INSERT INTO api_keys (id, account_id, mode, key_hash, last4, scopes, expires_at, revoked_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8 THEN now() END)`,
    [id, accountId, mode, hashApiKey(key), key.slice(-4), scopes, expiresAt, revoked],
  );
  return { id, key };
}

/** An account (active by default) with one key; `headers` is ready for app.inject. */
export async function createAccountWithKey(
  pool: Pool,
  options: { status?: AccountStatus; mode?: Mode; scopes?: Scope[] | string[] } = {},
): Promise<{ accountId: string; keyId: string; key: string; headers: { authorization: string } }> {
  const accountId = await createAccount(pool, { status: options.status });
  const { id, key } = await createApiKey(pool, { accountId, mode: options.mode, scopes: options.scopes });
  return { accountId, keyId: id, key, headers: { authorization: `Bearer ${key}` } };
}
