import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKey as createKeyAsOperator, revokeApiKeyAsOperator } from '../../../src/domain/api-keys';
import { CLI_ACTOR, apiKeyActor } from '../../../src/domain/audit-log';
import { registerEndpoint, updateEndpoint } from '../../../src/domain/endpoints';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { testConfig } from '../../helpers/env';
import { createAccount, createAccountWithKey, createApiKey } from '../../helpers/fixtures';

// Public address literals: pass the SSRF guard without any DNS.
const URL_A = 'https://93.184.215.14/hook';
const URL_B = 'https://93.184.215.15/other';

/**
 * GET /v1/audit_log and what writes it: every change to a key or an endpoint, one entry each, with who made it,
 * in the change's own transaction, and never a value of a key, secret or hidden header.
 */
describe('audit log API', () => {
  let api: ApiFixture;
  let merchant: Awaited<ReturnType<typeof createAccountWithKey>>;

  beforeAll(async () => {
    api = await apiFixture({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }) });
    merchant = await createAccountWithKey(api.pool);
  });
  afterAll(async () => {
    await api?.close();
  });

  const call = (
    method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
    url: string,
    payload?: object,
    headers = merchant.headers,
  ) => api.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
  const auditLog = async (query = '', headers = merchant.headers) => {
    const res = await call('GET', `/v1/audit_log${query}`, undefined, headers);
    expect(res.statusCode, res.body).toBe(200);
    return res.json<{ object: string; data: Array<Record<string, unknown>>; has_more: boolean; livemode: boolean }>();
  };
  const entriesFor = async (targetId: string, headers = merchant.headers) =>
    (await auditLog('?limit=100', headers)).data.filter((entry) => (entry.target as { id: string }).id === targetId);

  it('records each change through the API once, newest first, with the key as actor and the fields changed by name', async () => {
    const created = await call('POST', '/v1/webhooks', {
      url: URL_A,
      headers: { Authorization: 'Bearer hidden-credential-value', 'X-Route': 'eu' },
    });
    expect(created.statusCode, created.body).toBe(200);
    const id = created.json().id as string;
    expect(
      (await call('PATCH', `/v1/webhooks/${id}`, { description: 'orders', headers: { 'X-Route': 'us' } })).statusCode,
    ).toBe(200);
    // The same value again moves nothing and records nothing.
    expect((await call('PATCH', `/v1/webhooks/${id}`, { description: 'orders' })).statusCode).toBe(200);
    // A merchant's disable is an update; endpoint.disabled is the engine's own.
    expect((await call('PATCH', `/v1/webhooks/${id}`, { disabled: true })).statusCode).toBe(200);
    expect((await call('POST', `/v1/webhooks/${id}/secret/rotate`, {})).statusCode).toBe(200);
    expect((await call('DELETE', `/v1/webhooks/${id}`)).statusCode).toBe(200);

    const entries = await entriesFor(id);
    const actor = { type: 'api_key', id: merchant.keyId };
    const target = { type: 'webhook_endpoint', id };
    expect(entries).toEqual([
      {
        id: expect.stringMatching(/^aud_/),
        object: 'audit_entry',
        action: 'endpoint.deleted',
        actor,
        target,
        created: expect.any(Number),
        livemode: false,
      },
      {
        id: expect.stringMatching(/^aud_/),
        object: 'audit_entry',
        action: 'endpoint.secret_rotated',
        actor,
        target,
        created: expect.any(Number),
        livemode: false,
      },
      expect.objectContaining({ action: 'endpoint.updated', actor, target, changes: ['disabled'] }),
      expect.objectContaining({ action: 'endpoint.updated', actor, target, changes: ['description', 'headers'] }),
      expect.objectContaining({ action: 'endpoint.created', actor, target }),
    ]);
    expect(entries[4]).not.toHaveProperty('changes');
    const times = entries.map((entry) => entry.created as number);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('names an origin change that dropped hidden headers as a change of url and headers', async () => {
    const { id } = (
      await call('POST', '/v1/webhooks', { url: URL_A, headers: { Authorization: 'Bearer another-hidden-value' } })
    ).json<{ id: string }>();
    expect((await call('PATCH', `/v1/webhooks/${id}`, { url: URL_B })).statusCode).toBe(200);
    const [updated] = await entriesFor(id);
    expect(updated).toMatchObject({ action: 'endpoint.updated', changes: ['url', 'headers'] });
  });

  it('records no entry for a refused change', async () => {
    const before = (await auditLog('?limit=100')).data.length;
    expect((await call('POST', '/v1/webhooks', { url: 'http://93.184.215.14/plain' })).statusCode).toBe(400);
    expect((await call('PATCH', '/v1/webhooks/we_missing', { description: 'x' })).statusCode).toBe(404);
    expect((await call('DELETE', '/v1/webhooks/we_missing')).statusCode).toBe(404);
    expect((await auditLog('?limit=100')).data.length).toBe(before);
  });

  it('records keys made and revoked, once each: a second revoke changes nothing and records nothing', async () => {
    const accountId = await createAccount(api.pool);
    const key = await createKeyAsOperator(
      api.pool,
      { accountId, mode: 'test', scopes: ['webhooks:manage'] },
      CLI_ACTOR,
    );
    await revokeApiKeyAsOperator(api.pool, key.id, CLI_ACTOR);
    await revokeApiKeyAsOperator(api.pool, key.id, CLI_ACTOR);
    const reader = await createApiKey(api.pool, { accountId, scopes: ['webhooks:manage'] });
    const entries = await entriesFor(key.id, { authorization: `Bearer ${reader.key}` });
    const common = {
      object: 'audit_entry',
      actor: { type: 'cli', id: null },
      target: { type: 'api_key', id: key.id },
      livemode: false,
    };
    expect(entries).toEqual([
      expect.objectContaining({ ...common, action: 'api_key.revoked' }),
      expect.objectContaining({ ...common, action: 'api_key.created' }),
    ]);
  });

  it('filters by action and pages with starting_after, through every entry exactly once', async () => {
    const accountId = await createAccount(api.pool);
    const key = await createApiKey(api.pool, { accountId, scopes: ['webhooks:manage'] });
    const headers = { authorization: `Bearer ${key.key}` };
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const created = await call('POST', '/v1/webhooks', { url: URL_A }, headers);
      ids.push(created.json().id);
      await call('PATCH', `/v1/webhooks/${created.json().id}`, { description: `n${i}` }, headers);
    }
    const all = (await auditLog('?limit=100', headers)).data;
    expect(all).toHaveLength(6);
    const createdOnly = (await auditLog('?action=endpoint.created', headers)).data;
    expect(createdOnly.map((entry) => (entry.target as { id: string }).id)).toEqual([...ids].reverse());
    expect(createdOnly.every((entry) => entry.action === 'endpoint.created')).toBe(true);

    const walked: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 10; page++) {
      const body = await auditLog(`?limit=4${cursor ? `&starting_after=${cursor}` : ''}`, headers);
      walked.push(...body.data.map((entry) => entry.id as string));
      cursor = body.data.at(-1)?.id as string | undefined;
      if (!body.has_more) break;
    }
    expect(walked).toEqual(all.map((entry) => entry.id));
    const firstPage = await auditLog('?limit=4', headers);
    expect(firstPage.has_more).toBe(true);
    expect((await auditLog(`?limit=4&starting_after=${walked[3]}`, headers)).has_more).toBe(false);
  });

  it("shows only the key's account and mode", async () => {
    const accountId = await createAccount(api.pool);
    const testKey = await createApiKey(api.pool, { accountId, mode: 'test', scopes: ['webhooks:manage'] });
    const liveKey = await createApiKey(api.pool, { accountId, mode: 'live', scopes: ['webhooks:manage'] });
    const test = { authorization: `Bearer ${testKey.key}` };
    const live = { authorization: `Bearer ${liveKey.key}` };
    const inTest = (await call('POST', '/v1/webhooks', { url: URL_A }, test)).json().id as string;
    const inLive = (await call('POST', '/v1/webhooks', { url: URL_A }, live)).json().id as string;
    const targets = async (headers: { authorization: string }) =>
      (await auditLog('?limit=100', headers)).data.map((entry) => (entry.target as { id: string }).id);
    expect(await targets(test)).toEqual([inTest]);
    expect(await targets(live)).toEqual([inLive]);
    const liveList = await auditLog('', live);
    expect(liveList.livemode).toBe(true);
    expect(liveList.data[0]).toMatchObject({ livemode: true, actor: { type: 'api_key', id: liveKey.id } });
    // Another account's entry is no cursor here.
    const mine = (await auditLog('?limit=1')).data[0]!.id as string;
    const res = await call('GET', `/v1/audit_log?starting_after=${mine}`, undefined, test);
    expect(res.statusCode).toBe(404);
    expect(res.json().error).toMatchObject({ code: 'resource_missing', param: 'starting_after' });
    expect(await targets(merchant.headers)).not.toContain(inTest);
  });

  it('needs webhooks:manage, and refuses a bad limit, action or cursor with a 4xx', async () => {
    const reader = await createAccountWithKey(api.pool, { scopes: ['network:read'] });
    const refused = await call('GET', '/v1/audit_log', undefined, reader.headers);
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error).toMatchObject({ code: 'insufficient_scope', scope: 'webhooks:manage' });
    for (const query of ['limit=0', 'limit=101', 'limit=abc', 'action=endpoint.exploded', 'unknown=1']) {
      const res = await call('GET', `/v1/audit_log?${query}`);
      expect(res.statusCode, query).toBe(400);
    }
    const missing = await call('GET', '/v1/audit_log?starting_after=aud_nothere');
    expect(missing.statusCode).toBe(404);
    expect((await call('GET', '/v1/audit_log')).statusCode).toBe(200);
  });

  it('holds no key, secret or hidden header value in any stored entry', async () => {
    const accountId = await createAccount(api.pool);
    const made = await createKeyAsOperator(
      api.pool,
      { accountId, mode: 'test', scopes: ['webhooks:manage'] },
      CLI_ACTOR,
    );
    const headers = { authorization: `Bearer ${made.key}` };
    const hidden = 'Bearer secret-header-value-7f3a';
    const created = (
      await call(
        'POST',
        '/v1/webhooks',
        { url: URL_A, headers: { Authorization: hidden, 'X-Api-Key': 'kv-9911' } },
        headers,
      )
    ).json();
    const rotated = (await call('POST', `/v1/webhooks/${created.id}/secret/rotate`, {}, headers)).json();
    await call(
      'PATCH',
      `/v1/webhooks/${created.id}`,
      { headers: { Authorization: 'Bearer changed-hidden-value-2b' } },
      headers,
    );
    await revokeApiKeyAsOperator(api.pool, made.id, CLI_ACTOR);
    const { rows } = await api.pool.query<{ row: string }>(
      'SELECT to_jsonb(t)::text AS row FROM audit_log t WHERE account_id = $1',
      [accountId],
    );
    expect(rows.length).toBe(5);
    const stored = rows.map((r) => r.row).join('\n');
    for (const value of [
      made.key,
      created.secret,
      rotated.secret,
      'secret-header-value-7f3a',
      'kv-9911',
      'changed-hidden-value-2b',
    ]) {
      expect(stored).not.toContain(value);
      expect(stored).not.toContain(value.slice(-12));
    }
  });

  describe('one transaction with the change', () => {
    const deps = () => ({ pool: api.pool, config: api.config });

    it('a failing audit insert fails the change, which leaves nothing behind', async () => {
      const accountId = await createAccount(api.pool);
      const scope = { accountId, livemode: false };
      const endpoint = await registerEndpoint(deps(), scope, { url: URL_A, description: 'before' }, CLI_ACTOR);
      await api.pool.query(`
        CREATE OR REPLACE FUNCTION audit_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'audit refused'; END $$;
        CREATE TRIGGER audit_refuse BEFORE INSERT ON audit_log FOR EACH ROW
          WHEN (NEW.account_id = '${accountId}') EXECUTE FUNCTION audit_refuse();`);
      try {
        await expect(
          updateEndpoint(deps(), scope, endpoint.id, { description: 'after' }, apiKeyActor('key_x')),
        ).rejects.toThrow(/audit refused/);
        await expect(registerEndpoint(deps(), scope, { url: URL_B }, CLI_ACTOR)).rejects.toThrow(/audit refused/);
      } finally {
        await api.pool.query('DROP TRIGGER audit_refuse ON audit_log; DROP FUNCTION audit_refuse()');
      }
      const { rows } = await api.pool.query('SELECT url, description FROM webhook_endpoints WHERE account_id = $1', [
        accountId,
      ]);
      expect(rows).toEqual([{ url: URL_A, description: 'before' }]);
    });

    it('a change that rolls back at commit takes its entry with it', async () => {
      const accountId = await createAccount(api.pool);
      const scope = { accountId, livemode: false };
      // Checked at COMMIT, after both the endpoint and its entry were written.
      await api.pool.query(`
        CREATE OR REPLACE FUNCTION endpoint_refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'endpoint refused at commit'; END $$;
        CREATE CONSTRAINT TRIGGER endpoint_refuse AFTER INSERT ON webhook_endpoints DEFERRABLE INITIALLY DEFERRED
          FOR EACH ROW WHEN (NEW.account_id = '${accountId}') EXECUTE FUNCTION endpoint_refuse();`);
      try {
        await expect(registerEndpoint(deps(), scope, { url: URL_A }, CLI_ACTOR)).rejects.toThrow(/refused at commit/);
      } finally {
        await api.pool.query('DROP TRIGGER endpoint_refuse ON webhook_endpoints; DROP FUNCTION endpoint_refuse()');
      }
      const count = async (table: string) =>
        Number(
          (await api.pool.query(`SELECT count(*) AS n FROM ${table} WHERE account_id = $1`, [accountId])).rows[0].n,
        );
      expect(await count('webhook_endpoints')).toBe(0);
      expect(await count('audit_log')).toBe(0);
      // And the same change without the refusal writes both: the test above is not vacuous.
      await registerEndpoint(deps(), scope, { url: URL_A }, CLI_ACTOR);
      expect(await count('webhook_endpoints')).toBe(1);
      expect(await count('audit_log')).toBe(1);
    });
  });
});
