import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { buildServer } from '../../api/server';
import type { Mode } from '../../core/mode';
import { generateApiKey, hashApiKey } from '../../domain/api-keys';
import type { Config } from '../../infra/config';
import { newId } from '../../core/ids';
import { ALL_SCOPES, type Scope } from '../../core/scopes';
import { createPool, type Pool } from '../../db/pool';

/**
 * Accounts and keys written straight into the database, so API tests do not depend on the CLI.
 * The key is shaped and hashed exactly as domain/api-keys.ts does for real keys.
 */

export type AccountStatus = 'pending' | 'active' | 'suspended';

export async function createAccount(
  pool: Pool,
  { status = 'active', name = 'Test merchant', email = null }: { status?: AccountStatus; name?: string; email?: string | null } = {},
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

/** The real API on this run's Postgres and Temporal, for app.inject; close() releases everything. */
export interface TestApi {
  app: FastifyInstance;
  pool: Pool;
  config: Config;
  close(): Promise<void>;
}

export async function startTestApi(config: Config): Promise<TestApi> {
  const pool = createPool(config.databaseUrl);
  // Lazy: the webhook routes never touch Temporal, so these tests do not wait on the dev server.
  const connection = Connection.lazy({ address: config.temporal.address as string });
  const app = await buildServer({ config, pool, temporal: new Client({ connection }) }, { logger: false });
  return {
    app,
    pool,
    config,
    async close() {
      await app.close();
      await connection.close();
      await pool.end();
    },
  };
}
