import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { buildServer } from '../../src/api/server';
import type { Mode } from '../../src/core/mode';
import { ALL_SCOPES, type Scope } from '../../src/core/scopes';
import type { Pool } from '../../src/db/pool';
import { createAccount, setAccountStatus, type AccountStatus } from '../../src/domain/accounts';
import { createApiKey, type CreatedApiKey } from '../../src/domain/api-keys';
import type { Config } from '../../src/infra/config';
import { testConfig } from './env';
import { CLI_ACTOR } from '../../src/domain/audit-log';

export interface ApiFixture {
  app: FastifyInstance;
  pool: Pool;
  config: Config;
  /** A fresh account (pending unless told) and one key of it, made as the CLI makes them. */
  key(options?: { mode?: Mode; scopes?: Scope[]; status?: AccountStatus; expiresAt?: Date }): Promise<CreatedApiKey>;
  close(): Promise<void>;
}

/**
 * The real app on the run's database, for app.inject. Temporal is the app's own lazy connection: auth, towns
 * and the webhook routes never touch it, so these tests do not wait on the dev server. The app opens and closes
 * its pool unless one is passed (then it stays the caller's). `extend` adds test-only routes before it is ready.
 */
export async function apiFixture(
  options: {
    config?: Config;
    env?: Record<string, string>;
    logger?: FastifyServerOptions['logger'];
    pool?: Pool;
    extend?: (app: FastifyInstance) => void;
  } = {},
): Promise<ApiFixture> {
  const config = options.config ?? testConfig(options.env);
  const app = await buildServer({ config, pool: options.pool }, { logger: options.logger ?? false });
  options.extend?.(app);
  await app.ready();
  const pool = app.pg;
  return {
    app,
    pool,
    config,
    async key({ mode = 'test', scopes = [...ALL_SCOPES], status = 'pending', expiresAt } = {}) {
      // An account is never created suspended: suspend it once it exists, as an operator would.
      const account = await createAccount(pool, {
        name: 'Test merchant',
        status: status === 'suspended' ? 'pending' : status,
      });
      if (status === 'suspended') await setAccountStatus(pool, account.id, 'suspended');
      return createApiKey(pool, { accountId: account.id, mode, scopes, expiresAt }, CLI_ACTOR);
    },
    close: () => app.close(),
  };
}

export const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
export const basic = (user: string, password = '') => ({
  authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
