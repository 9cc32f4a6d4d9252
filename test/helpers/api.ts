import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import type { Mode } from '../../core/mode';
import { ALL_SCOPES, type Scope } from '../../core/scopes';
import type { Config } from '../../infra/config';
import { buildServer } from '../../api/server';
import { createAccount, setAccountStatus, type AccountStatus } from '../../domain/accounts';
import { createApiKey, type CreatedApiKey } from '../../domain/api-keys';
import { createPool, type Pool } from '../../db/pool';
import { testConfig } from './env';

export interface ApiFixture {
  app: FastifyInstance;
  pool: Pool;
  config: Config;
  /** A fresh account (pending unless told) and one key of it. */
  key(options?: { mode?: Mode; scopes?: Scope[]; status?: AccountStatus; expiresAt?: Date }): Promise<CreatedApiKey>;
  close(): Promise<void>;
}

/**
 * The real app on the run's database. Temporal is a lazy connection: authentication and towns never touch
 * it, so these tests do not wait on the dev server. `extend` adds test-only routes before the app is ready.
 */
export async function apiFixture(
  options: {
    env?: Record<string, string>;
    logger?: FastifyServerOptions['logger'];
    pool?: Pool;
    extend?: (app: FastifyInstance) => void;
  } = {},
): Promise<ApiFixture> {
  const config = testConfig(options.env);
  const pool = options.pool ?? createPool(config.databaseUrl);
  const connection = Connection.lazy({ address: config.temporal.address as string });
  const app = await buildServer(
    { config, pool, temporal: new Client({ connection, namespace: config.temporal.namespace }) },
    { logger: options.logger ?? false },
  );
  options.extend?.(app);
  await app.ready();
  return {
    app,
    pool,
    config,
    async key({ mode = 'test', scopes = [...ALL_SCOPES], status = 'pending', expiresAt } = {}) {
      // An account is never created suspended: suspend it once it exists, as an operator would.
      const account = await createAccount(pool, { name: 'Test merchant', status: status === 'suspended' ? 'pending' : status });
      if (status === 'suspended') await setAccountStatus(pool, account.id, 'suspended');
      return createApiKey(pool, { accountId: account.id, mode, scopes, expiresAt });
    },
    async close() {
      await app.close();
      await connection.close().catch(() => undefined);
      if (!options.pool) await pool.end();
    },
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
export const basic = (user: string, password = '') => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
