import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey as createKeyAsOperator, MAX_ACTIVE_API_KEYS_PER_MODE } from '../../../src/domain/api-keys';
import { MAX_ENDPOINTS_PER_MODE, registerEndpoint, registerLocalEndpoint } from '../../../src/domain/endpoints';
import { ACCOUNT_RATE_LIMIT_FACTOR } from '../../../src/api/plugins/rate-limit';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { createAccount, createApiKey } from '../../helpers/fixtures';
import { runCli } from '../../helpers/cli';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/** The caps per account and mode (keys, endpoints), counted race-safely, and the API rate limit per account. */

const PUBLIC_URL = 'https://93.184.215.14/hook';

const cli = (...args: string[]) => runCli(args);

describe('limits per account and mode', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  /** `count` endpoints written straight into the table (the limit is under test, not registration). */
  const fillEndpoints = (accountId: string, livemode: boolean, count: number) =>
    f.pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret)
       SELECT 'we_fill' || g || $4, $1, $2, $3, 'whsec_x' FROM generate_series(1, $5::int) AS g`,
      [accountId, livemode, PUBLIC_URL, `${accountId.slice(-10)}${livemode ? 'L' : 'T'}`, count],
    );
  const register = (accountId: string, livemode = false) =>
    registerEndpoint({ pool: f.pool, config: f.config }, { accountId, livemode }, { url: PUBLIC_URL }, CLI_ACTOR);

  it(`allows ${MAX_ENDPOINTS_PER_MODE} endpoints per mode, with exactly that many winners when registrations race`, async () => {
    const accountId = await createAccount(f.pool);
    await fillEndpoints(accountId, false, MAX_ENDPOINTS_PER_MODE - 2);
    const raced = await Promise.allSettled(Array.from({ length: 6 }, () => register(accountId)));
    expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    for (const refused of raced.filter((r) => r.status === 'rejected')) {
      expect(refused.reason).toMatchObject({ code: 'endpoint_limit_reached', status: 409 });
    }
    const { rows } = await f.pool.query(
      'SELECT count(*)::int AS n FROM webhook_endpoints WHERE account_id = $1 AND livemode = false',
      [accountId],
    );
    expect(rows[0].n).toBe(MAX_ENDPOINTS_PER_MODE);
    // The other mode has its own budget.
    await expect(register(accountId, true)).resolves.toMatchObject({ livemode: true });
  });

  it("counts listen's session endpoint in test mode", async () => {
    const accountId = await createAccount(f.pool);
    await fillEndpoints(accountId, false, MAX_ENDPOINTS_PER_MODE);
    await expect(
      registerLocalEndpoint(
        { pool: f.pool, config: f.config },
        { accountId, url: 'https://127.0.0.1:4567/', certificate: 'x' },
      ),
    ).rejects.toMatchObject({ code: 'endpoint_limit_reached' });
  });

  it(`allows ${MAX_ACTIVE_API_KEYS_PER_MODE} active keys per mode (revoked and expired ones aside), racing included; the CLI exits 1 with the code`, async () => {
    const accountId = await createAccount(f.pool);
    for (let i = 0; i < MAX_ACTIVE_API_KEYS_PER_MODE - 2; i += 1) await createApiKey(f.pool, { accountId });
    await createApiKey(f.pool, { accountId, revoked: true });
    await createApiKey(f.pool, { accountId, expiresAt: new Date(Date.now() - 1000) });
    const make = () => createKeyAsOperator(f.pool, { accountId, mode: 'test', scopes: ['network:read'] }, CLI_ACTOR);
    const raced = await Promise.allSettled(Array.from({ length: 5 }, make));
    expect(raced.filter((r) => r.status === 'fulfilled')).toHaveLength(2);
    expect((raced.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toMatchObject({
      code: 'api_key_limit_reached',
      status: 409,
    });

    const createWithCli = (mode: 'test' | 'live') =>
      cli('keys', 'create', '--account', accountId, '--mode', mode, '--scopes', 'network:read', '--json');
    const over = await createWithCli('test');
    expect(over.code).toBe(1);
    expect(over.json.error.code).toBe('api_key_limit_reached');
    const live = await createWithCli('live');
    expect(live.code, 'live mode has its own budget').toBe(0);

    // Revoking one makes room.
    const [first] = (
      await f.pool.query('SELECT id FROM api_keys WHERE account_id = $1 AND mode = $2 AND revoked_at IS NULL LIMIT 1', [
        accountId,
        'test',
      ])
    ).rows;
    await f.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [first.id]);
    await expect(make()).resolves.toMatchObject({ mode: 'test' });
  }, 120_000);
});

describe('the API rate limit per account', () => {
  it(`spends one budget of ${ACCOUNT_RATE_LIMIT_FACTOR} x API_RATE_LIMIT_PER_MINUTE across all keys of an account`, async () => {
    const f = await apiFixture({ env: { API_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const accountId = await createAccount(f.pool);
      const keys = await Promise.all([1, 2, 3].map(() => createApiKey(f.pool, { accountId })));
      const statuses: number[] = [];
      for (const { key } of keys) {
        for (let i = 0; i < 3; i += 1)
          statuses.push((await f.app.inject({ url: '/v1/towns?limit=1', headers: bearer(key) })).statusCode);
      }
      // Each key stays within its own 3; the account's 6 are spent after two keys.
      expect(statuses).toEqual([200, 200, 200, 200, 200, 200, 429, 429, 429]);
      const limited = await f.app.inject({ url: '/v1/towns?limit=1', headers: bearer(keys[2]!.key) });
      expect(limited.json().error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error' });
      expect(limited.json().error.message).toMatch(/across all its keys/);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      // Another account is not held up.
      const other = await createApiKey(f.pool, { accountId: await createAccount(f.pool) });
      expect((await f.app.inject({ url: '/v1/towns?limit=1', headers: bearer(other.key) })).statusCode).toBe(200);
    } finally {
      await f.close();
    }
  });
});
