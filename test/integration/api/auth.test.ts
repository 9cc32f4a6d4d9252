import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authenticate } from '../../../src/api/plugins/auth';
import { ALL_SCOPES, type Scope } from '../../../src/core/scopes';
import { setAccountStatus } from '../../../src/domain/accounts';
import { revokeApiKeyAsOperator } from '../../../src/domain/api-keys';
import { apiFixture, basic, bearer, type ApiFixture } from '../../helpers/api';
import { waitFor } from '../../helpers/wait';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

const route = (scope: Scope) => `/test/scope/${scope.replace(':', '-')}`;

/** One tiny route per scope, so every scope (src/core/scopes.ts) is enforced before its real route exists. */
function scopeRoutes(app: FastifyInstance): void {
  for (const scope of ALL_SCOPES) {
    app.get(route(scope), { config: { scope } }, async (request) => ({ ok: true, livemode: request.auth?.livemode }));
  }
}

describe('authentication', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture({ extend: scopeRoutes });
  });
  afterAll(async () => {
    await f?.close();
  });

  async function get(headers: Record<string, string>, url = route('network:read')) {
    return f.app.inject({ method: 'GET', url, headers });
  }

  function expectError(
    res: { statusCode: number; headers: Record<string, unknown>; json(): any },
    status: number,
    code: string,
  ) {
    expect({ status: res.statusCode, code: res.json().error?.code }).toEqual({ status, code });
    const { error } = res.json();
    expect(typeof error.type).toBe('string');
    expect(typeof error.message).toBe('string');
    if (status === 401) expect(res.headers['www-authenticate']).toBe('Bearer');
    else expect(res.headers['www-authenticate']).toBeUndefined();
  }

  it('accepts a key as Bearer and as Basic username with an empty password', async () => {
    const key = await f.key();
    for (const headers of [
      bearer(key.key),
      basic(key.key),
      { authorization: `bearer ${key.key}` },
      { authorization: `BASIC ${basic(key.key).authorization.slice(6)}` },
    ]) {
      const res = await get(headers);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ ok: true, livemode: false });
    }
  });

  it('missing_api_key: no Authorization header, or an empty one', async () => {
    expectError(await get({}), 401, 'missing_api_key');
    expectError(await get({ authorization: '' }), 401, 'missing_api_key');
    expectError(await get({ authorization: '   ' }), 401, 'missing_api_key');
  });

  it('malformed_api_key: anything not shaped like a key, hostile input included', async () => {
    const key = (await f.key()).key;
    const cases: Record<string, string> = {
      'truncated paste': `Bearer ${key.slice(0, -1)}`,
      'one character too many': `Bearer ${key}x`,
      'scheme only': 'Bearer',
      'scheme and spaces': 'Bearer    ',
      'no scheme': key,
      'wrong scheme': `Token ${key}`,
      'digest scheme': `Digest username="${key}"`,
      'space inside': `Bearer ${key.slice(0, 20)} ${key.slice(20)}`,
      'two credentials': `Bearer ${key} ${key}`,
      'unknown prefix': `Bearer svc_prod_${key.slice(9)}`,
      unicode: `Bearer svc_test_${'é'.repeat(32)}`,
      'unicode lookalike': `Bearer ${key.slice(0, -1)}０`,
      sql: "Bearer ' OR 1=1; DROP TABLE api_keys; --",
      'sql shaped': `Bearer svc_test_'OR'1'='1'--${'a'.repeat(20)}`,
      'huge header': `Bearer ${'A'.repeat(100_000)}`,
      'huge key-like': `Bearer svc_test_${'a'.repeat(10_000)}`,
      'basic with a password': basic(key, 'secret').authorization,
      'basic with the key as password': basic('', key).authorization,
      'basic without a colon': `Basic ${Buffer.from(key).toString('base64')}`,
      'basic garbage base64': 'Basic !!!not-base64***',
      'basic binary': `Basic ${Buffer.from([0xff, 0xfe, 0x00, 0x3a]).toString('base64')}`,
      'basic empty': 'Basic ',
      'basic sql': basic("' OR 1=1 --").authorization,
    };
    for (const [name, authorization] of Object.entries(cases)) {
      const res = await get({ authorization });
      expect({ name, status: res.statusCode, code: res.json().error?.code }).toEqual({
        name,
        status: 401,
        code: 'malformed_api_key',
      });
      expect(res.headers['www-authenticate']).toBe('Bearer');
    }
  });

  it('invalid_api_key: a well-shaped key that does not exist, or the right secret with the wrong mode', async () => {
    const key = (await f.key()).key;
    expectError(await get(bearer(`svc_test_${'a'.repeat(32)}`)), 401, 'invalid_api_key');
    expectError(await get(bearer(`svc_live_${key.slice(9)}`)), 401, 'invalid_api_key');
    expectError(await get(basic(`svc_live_${'Z'.repeat(32)}`)), 401, 'invalid_api_key');
  });

  it('revoked_api_key: effective on the very next request', async () => {
    const key = await f.key();
    expect((await get(bearer(key.key))).statusCode).toBe(200);
    await revokeApiKeyAsOperator(f.pool, key.id, CLI_ACTOR);
    expectError(await get(bearer(key.key)), 401, 'revoked_api_key');
    expectError(await get(basic(key.key)), 401, 'revoked_api_key');
  });

  it('expired_api_key: checked against the current time on every request', async () => {
    const past = await f.key({ expiresAt: new Date(Date.now() - 1000) });
    expectError(await get(bearer(past.key)), 401, 'expired_api_key');
    const future = await f.key({ expiresAt: new Date(Date.now() + 3_600_000) });
    expect((await get(bearer(future.key))).statusCode).toBe(200);
    // The same key, an hour and a second later by an injected clock.
    const later = new Date(Date.now() + 3_601_000);
    await expect(authenticate(f.pool, `Bearer ${future.key}`, later)).rejects.toMatchObject({
      code: 'expired_api_key',
    });
  });

  it('account states: test keys work on pending accounts, live keys need approval, suspension stops both', async () => {
    const test = await f.key({ mode: 'test' });
    const live = await f.key({ mode: 'live' });
    expect((await get(bearer(test.key))).statusCode).toBe(200);
    expectError(await get(bearer(live.key)), 403, 'client_not_active');

    await setAccountStatus(f.pool, live.account_id, 'active');
    const approved = await get(bearer(live.key));
    expect(approved.statusCode).toBe(200);
    expect(approved.json().livemode).toBe(true);

    for (const key of [test, live]) {
      await setAccountStatus(f.pool, key.account_id, 'suspended');
      expectError(await get(bearer(key.key)), 403, 'client_suspended');
    }
    await setAccountStatus(f.pool, live.account_id, 'active');
    expect((await get(bearer(live.key))).statusCode).toBe(200);
  });

  it('checks in order: missing, malformed, invalid, revoked, expired, suspended, not active, scope', async () => {
    const past = new Date(Date.now() - 1000);
    const all = await f.key({ mode: 'live', scopes: ['quotes:read'], expiresAt: past, status: 'suspended' });
    await revokeApiKeyAsOperator(f.pool, all.id, CLI_ACTOR);
    expectError(await get(bearer(all.key)), 401, 'revoked_api_key');

    const expiredSuspended = await f.key({
      mode: 'live',
      scopes: ['quotes:read'],
      expiresAt: past,
      status: 'suspended',
    });
    expectError(await get(bearer(expiredSuspended.key)), 401, 'expired_api_key');

    const suspendedLive = await f.key({ mode: 'live', scopes: ['quotes:read'], status: 'suspended' });
    expectError(await get(bearer(suspendedLive.key)), 403, 'client_suspended');

    const pendingLive = await f.key({ mode: 'live', scopes: ['quotes:read'], status: 'pending' });
    expectError(await get(bearer(pendingLive.key)), 403, 'client_not_active');

    const active = await f.key({ mode: 'live', scopes: ['quotes:read'], status: 'active' });
    expectError(await get(bearer(active.key)), 403, 'insufficient_scope');
  });

  it.each(ALL_SCOPES)('scope %s: allowed with it, insufficient_scope naming it without it', async (scope) => {
    const only = await f.key({ scopes: [scope] });
    const others = await f.key({ scopes: ALL_SCOPES.filter((s) => s !== scope) });
    expect((await get(bearer(only.key), route(scope))).statusCode).toBe(200);
    expect((await get(bearer(others.key), route(scope))).statusCode).toBe(403);
    const denied = await get(bearer(others.key), route(scope));
    expectError(denied, 403, 'insufficient_scope');
    expect(denied.json().error.scope).toBe(scope);
    expect(denied.json().livemode).toBe(false);
    for (const other of ALL_SCOPES.filter((s) => s !== scope)) {
      const res = await get(bearer(only.key), route(other));
      expect({ other, status: res.statusCode, scope: res.json().error?.scope }).toEqual({
        other,
        status: 403,
        scope: other,
      });
    }
  });

  it('livemode follows the key: false for test keys, true for live keys, errors included', async () => {
    const test = await f.key({ mode: 'test' });
    const live = await f.key({ mode: 'live', status: 'active', scopes: ['quotes:read'] });
    expect((await get(bearer(test.key))).json().livemode).toBe(false);
    expect((await get(bearer(live.key), route('quotes:read'))).json().livemode).toBe(true);
    expect((await get(bearer(live.key), route('wallet:read'))).json()).toMatchObject({
      livemode: true,
      error: { scope: 'wallet:read' },
    });
  });

  it('last_used_at moves when a key is used', async () => {
    const key = await f.key();
    const read = async () =>
      (await f.pool.query<{ last_used_at: Date | null }>('SELECT last_used_at FROM api_keys WHERE id = $1', [key.id]))
        .rows[0]?.last_used_at;
    expect(await read()).toBeNull();
    expect((await get(bearer(key.key))).statusCode).toBe(200);
    const used = await waitFor(async () => (await read()) ?? undefined, { timeoutMs: 5_000, what: 'last_used_at' });
    expect(Math.abs(used.getTime() - Date.now())).toBeLessThan(60_000);
  });

  it('public routes need no key and unknown routes are 404, never 401 or 500', async () => {
    expect((await f.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    expect((await f.app.inject({ url: '/v1/nothing-here', headers: bearer('x') })).statusCode).toBe(404);
  });

  it('an unknown route answered to a usable key carries its livemode', async () => {
    const test = await f.key();
    const live = await f.key({ mode: 'live', status: 'active' });
    for (const [key, livemode] of [
      [test.key, false],
      [live.key, true],
    ] as const) {
      const res = await f.app.inject({ url: '/v1/parcels', headers: bearer(key) });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toMatchObject({ error: { code: 'route_not_found' }, livemode });
    }
    const revoked = await f.key();
    await revokeApiKeyAsOperator(f.pool, revoked.id, CLI_ACTOR);
    const res = await f.app.inject({ url: '/v1/parcels', headers: bearer(revoked.key) });
    expect(res.statusCode).toBe(404);
    expect(res.json().livemode).toBeUndefined();
  });
});
