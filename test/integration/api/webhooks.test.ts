import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../src/core/event-catalog';
import { MAX_ENDPOINTS_PER_MODE } from '../../../src/domain/endpoints';
import { loadEndpointForDelivery } from '../../../src/attempt';
import { testConfig } from '../../helpers/env';
import { createAccountWithKey, createApiKey } from '../../helpers/fixtures';
import { apiFixture, type ApiFixture } from '../../helpers/api';

// A public address literal: passes the SSRF guard without any DNS.
const PUBLIC_URL = 'https://93.184.215.14/hook';

describe('webhook endpoints API', () => {
  let api: ApiFixture;
  let merchant: Awaited<ReturnType<typeof createAccountWithKey>>;

  beforeAll(async () => {
    api = await apiFixture({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }) });
    merchant = await createAccountWithKey(api.pool);
  });
  afterAll(async () => {
    await api?.close();
  });

  const register = (payload: unknown, headers = merchant.headers) =>
    api.app.inject({ method: 'POST', url: '/v1/webhooks', headers, payload: payload as object });
  // Per account: other test files write endpoints into the same database at the same time.
  const endpointCount = async () =>
    Number(
      (await api.pool.query('SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = $1', [merchant.accountId]))
        .rows[0].n,
    );

  /** Refused with the given status and code, and nothing written. */
  async function expectRefused(payload: unknown, status: number, code: string, param?: string) {
    const before = await endpointCount();
    const res = await register(payload);
    expect(res.statusCode, res.body).toBe(status);
    const body = res.json();
    expect(body.error.code).toBe(code);
    if (param !== undefined) expect(body.error.param).toBe(param);
    expect(res.body).not.toMatch(/at .*\.ts|SELECT|INSERT/);
    expect(await endpointCount()).toBe(before);
  }

  describe('POST /v1/webhooks', () => {
    it('registers an endpoint and returns its secret once', async () => {
      const res = await register({
        url: PUBLIC_URL,
        events: ['parcel.delivered', 'cod.settled'],
        description: 'orders',
      });
      expect(res.statusCode).toBe(200);
      const body = res.json();
      expect(body).toEqual({
        id: expect.stringMatching(/^we_[A-Za-z0-9]+$/),
        object: 'webhook_endpoint',
        url: PUBLIC_URL,
        events: ['parcel.delivered', 'cod.settled'],
        description: 'orders',
        status: 'enabled',
        disabled_reason: null,
        paused_at: null,
        livemode: false,
        ordering: 'none',
        rate_limit: null,
        api_version: '2026-12-01',
        created: expect.any(Number),
        headers: {},
        secret: expect.stringMatching(/^whsec_[A-Za-z0-9]{32}$/),
      });
      expect(Math.abs(body.created - Date.now() / 1000)).toBeLessThan(60);

      const read = await api.app.inject({ method: 'GET', url: `/v1/webhooks/${body.id}`, headers: merchant.headers });
      expect(read.statusCode).toBe(200);
      const { secret: _secret, ...withoutSecret } = body;
      expect(read.json()).toEqual(withoutSecret);
      expect(read.body).not.toContain(body.secret);
    });

    it('subscribes to every kind when events is omitted or empty', async () => {
      for (const payload of [{ url: PUBLIC_URL }, { url: PUBLIC_URL, events: [] }]) {
        const res = await register(payload);
        expect(res.statusCode).toBe(200);
        expect(res.json().events).toEqual([...EVENT_TYPES]);
        expect(res.json().description).toBeNull();
        const stored = await api.pool.query('SELECT events FROM webhook_endpoints WHERE id = $1', [res.json().id]);
        expect(stored.rows[0].events).toEqual([]);
      }
    });

    it('stores field text literally, SQL included', async () => {
      const description = "x'); DROP TABLE webhook_endpoints; -- \u00e9\u{1F4E6}";
      const res = await register({ url: `${PUBLIC_URL}?q='1'--`, description });
      expect(res.statusCode).toBe(200);
      expect(res.json().description).toBe(description);
      expect(await endpointCount()).toBeGreaterThan(0);
    });

    it('refuses URLs that are not https', async () => {
      for (const url of [
        'http://93.184.215.14/hook',
        'ftp://93.184.215.14/x',
        'javascript:alert(1)',
        'data:text/plain,hi',
      ]) {
        await expectRefused({ url }, 400, 'url_not_https', 'url');
      }
    });

    it('refuses URLs that do not parse, or are too long', async () => {
      for (const url of [
        'not a url',
        '',
        'https://',
        '//93.184.215.14/x',
        `https://93.184.215.14/${'a'.repeat(10_000)}`,
      ]) {
        await expectRefused({ url }, 400, 'invalid_url', 'url');
      }
    });

    it('refuses loopback, private and otherwise non-public targets', async () => {
      const hostile = [
        'https://127.0.0.1/hook',
        'https://127.1/hook',
        'https://2130706433/hook',
        'https://0x7f.1/hook',
        'https://017700000001/hook',
        'https://[::1]/hook',
        'https://[::ffff:127.0.0.1]/hook',
        'https://[::]/hook',
        'https://0.0.0.0/hook',
        'https://10.1.2.3/hook',
        'https://172.16.0.1/hook',
        'https://192.168.1.1:8443/hook',
        'https://169.254.169.254/latest/meta-data/',
        'https://100.64.0.1/hook',
        'https://[fe80::1]/hook',
        'https://[fd00::1]/hook',
        'https://[64:ff9b::a00:1]/hook',
        'https://[2002:c0a8:101::]/hook',
        'https://224.0.0.1/hook',
        'https://255.255.255.255/hook',
        'https://localhost/hook',
        'https://api.localhost/hook',
        'https://user:pass@93.184.215.14/hook',
        'https://93.184.215.14/hook#fragment',
      ];
      for (const url of hostile) await expectRefused({ url }, 400, 'url_not_allowed', 'url');
    });

    it('refuses unknown and duplicate event kinds', async () => {
      await expectRefused(
        { url: PUBLIC_URL, events: ['parcel.created', 'parcel.teleported'] },
        400,
        'unknown_event_type',
        'events[1]',
      );
      await expectRefused({ url: PUBLIC_URL, events: ['*'] }, 400, 'unknown_event_type', 'events[0]');
      await expectRefused(
        { url: PUBLIC_URL, events: ['cod.settled', 'cod.settled'] },
        400,
        'duplicate_event_type',
        'events[1]',
      );
    });

    it('refuses wrong types, missing and unknown fields without coercing them', async () => {
      await expectRefused({ url: 42 }, 400, 'parameter_invalid', 'url');
      await expectRefused({ url: PUBLIC_URL, events: 'parcel.created' }, 400, 'parameter_invalid', 'events');
      await expectRefused({ url: PUBLIC_URL, events: [1, 2] }, 400, 'parameter_invalid', 'events.0');
      await expectRefused({ url: PUBLIC_URL, description: 7 }, 400, 'parameter_invalid', 'description');
      await expectRefused({ events: ['cod.settled'] }, 400, 'parameter_missing', 'url');
      await expectRefused({ url: PUBLIC_URL, secret: 'whsec_mine' }, 400, 'parameter_unknown', 'secret');
      await expectRefused([PUBLIC_URL], 400, 'invalid_request');
      await expectRefused({ url: PUBLIC_URL, description: 'd'.repeat(501) }, 400, 'parameter_invalid', 'description');
      await expectRefused({ url: PUBLIC_URL, description: 'a\u0000b' }, 400, 'parameter_invalid', 'description');
    });

    it('refuses bodies that are not JSON, or too large', async () => {
      const before = await endpointCount();
      const headers = { ...merchant.headers, 'content-type': 'application/json' };
      const broken = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers, payload: '{"url": ' });
      expect(broken.statusCode).toBe(400);
      expect(broken.json().error.code).toBe('invalid_json');
      const empty = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: merchant.headers });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().error).toMatchObject({ code: 'parameter_missing', param: 'url' });
      const text = await api.app.inject({
        method: 'POST',
        url: '/v1/webhooks',
        headers: { ...merchant.headers, 'content-type': 'text/plain' },
        payload: PUBLIC_URL,
      });
      expect(text.statusCode).toBe(415);
      const huge = await register({ url: PUBLIC_URL, description: 'x'.repeat(100_000) });
      expect(huge.statusCode).toBe(413);
      expect(huge.json().error.code).toBe('body_too_large');
      expect(await endpointCount()).toBe(before);
    });

    it('needs an API key with webhooks:manage', async () => {
      const anonymous = await register({ url: PUBLIC_URL }, {} as typeof merchant.headers);
      expect(anonymous.statusCode).toBe(401);
      const reader = await createAccountWithKey(api.pool, { scopes: ['network:read'] });
      const res = await register({ url: PUBLIC_URL }, reader.headers);
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toMatchObject({ code: 'insufficient_scope', scope: 'webhooks:manage' });
    });
  });

  describe('ordering', () => {
    it('registers and changes ordering (none by default, or parcel); GET shows it; a bad value is a 400', async () => {
      const created = await register({ url: PUBLIC_URL, ordering: 'parcel' });
      expect(created.statusCode, created.body).toBe(200);
      expect(created.json().ordering).toBe('parcel');
      const id = created.json().id as string;
      const patch = (payload: object) =>
        api.app.inject({ method: 'PATCH', url: `/v1/webhooks/${id}`, headers: merchant.headers, payload });
      const changed = await patch({ ordering: 'none' });
      expect(changed.statusCode, changed.body).toBe(200);
      expect(changed.json().ordering).toBe('none');
      expect((await patch({ description: 'kept' })).json().ordering).toBe('none');
      const read = await api.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: merchant.headers });
      expect(read.json().ordering).toBe('none');

      const badPatch = await patch({ ordering: 'fifo' });
      expect(badPatch.statusCode).toBe(400);
      expect(badPatch.json().error).toMatchObject({ code: 'parameter_invalid', param: 'ordering' });
      await expectRefused({ url: PUBLIC_URL, ordering: 'sorted' }, 400, 'parameter_invalid', 'ordering');
      await expectRefused({ url: PUBLIC_URL, ordering: null }, 400, 'parameter_invalid', 'ordering');
    });

    it('is declared in the OpenAPI document', async () => {
      const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json();
      const post = doc.paths['/v1/webhooks'].post;
      const values = (schema: { anyOf: { enum: string[] }[] }) => schema.anyOf.flatMap((s) => s.enum);
      expect(values(post.requestBody.content['application/json'].schema.properties.ordering)).toEqual([
        'none',
        'parcel',
      ]);
      const record = post.responses['200'].content['application/json'].schema;
      expect(record.required).toContain('ordering');
      expect(values(record.properties.ordering)).toEqual(['none', 'parcel']);
      const patch = doc.paths['/v1/webhooks/{id}'].patch;
      expect(values(patch.requestBody.content['application/json'].schema.properties.ordering)).toEqual([
        'none',
        'parcel',
      ]);
    });
  });

  describe('endpoint limit', () => {
    it(`caps endpoints at ${MAX_ENDPOINTS_PER_MODE} per account and mode (deleted ones aside); removing one makes room`, async () => {
      const owner = await createAccountWithKey(api.pool, { mode: 'test' });
      // All but one written directly: the limit is what is under test, not a hundred registrations.
      await api.pool.query(
        `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret)
         SELECT 'we_limit' || g || $2, $1, false, $3, 'whsec_x' FROM generate_series(1, $4::int) AS g`,
        [owner.accountId, owner.accountId.slice(-8), PUBLIC_URL, MAX_ENDPOINTS_PER_MODE - 1],
      );
      const last = await register({ url: PUBLIC_URL }, owner.headers);
      expect(last.statusCode, last.body).toBe(200);
      const over = await register({ url: PUBLIC_URL }, owner.headers);
      expect(over.statusCode).toBe(409);
      expect(over.json().error.code).toBe('endpoint_limit_reached');
      expect(over.json().livemode).toBe(false);
      const live = await createApiKey(api.pool, { accountId: owner.accountId, mode: 'live' });
      await api.pool.query(`UPDATE accounts SET status = 'active' WHERE id = $1`, [owner.accountId]);
      const otherMode = await register({ url: PUBLIC_URL }, { authorization: `Bearer ${live.key}` });
      expect(otherMode.statusCode, 'the live mode has its own budget').toBe(200);
      const removed = await api.app.inject({
        method: 'DELETE',
        url: `/v1/webhooks/${last.json().id}`,
        headers: owner.headers,
      });
      expect(removed.statusCode).toBe(200);
      expect((await register({ url: PUBLIC_URL }, owner.headers)).statusCode).toBe(200);
    });
  });

  describe('GET /v1/webhooks', () => {
    it('pages newest first with limit and starting_after', async () => {
      const owner = await createAccountWithKey(api.pool);
      const ids: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        ids.push((await register({ url: `${PUBLIC_URL}/${i}` }, owner.headers)).json().id);
      }
      const list = (query: string) =>
        api.app.inject({ method: 'GET', url: `/v1/webhooks${query}`, headers: owner.headers });
      const first = await list('?limit=2');
      expect(first.statusCode).toBe(200);
      expect(first.json()).toMatchObject({ object: 'list', has_more: true, url: '/v1/webhooks', livemode: false });
      expect(first.json().data.map((e: { id: string }) => e.id)).toEqual([ids[2], ids[1]]);
      expect(first.body).not.toContain('whsec_');
      const second = await list(`?limit=2&starting_after=${ids[1]}`);
      expect(second.json().data.map((e: { id: string }) => e.id)).toEqual([ids[0]]);
      expect(second.json().has_more).toBe(false);
      expect((await list('')).json().data).toHaveLength(3);
    });

    it('refuses bad paging parameters with 4xx', async () => {
      const list = (query: string) =>
        api.app.inject({ method: 'GET', url: `/v1/webhooks${query}`, headers: merchant.headers });
      // Not quietly read as another number: 1.5 and true were once taken as 1, 0x10 as 16.
      for (const query of [
        '?limit=0',
        '?limit=101',
        '?limit=abc',
        '?limit=-5',
        '?limit=1.5',
        '?limit=true',
        '?limit=0x10',
        '?limit=1&limit=2',
      ]) {
        const res = await list(query);
        expect(res.statusCode, query).toBe(400);
        expect(res.json().error).toMatchObject({ code: 'parameter_invalid', param: 'limit' });
      }
      expect((await list('?colour=red')).json().error).toMatchObject({ code: 'parameter_unknown', param: 'colour' });
      for (const cursor of ['we_nope', 'nope', '%00', 'x'.repeat(150)]) {
        const res = await list(`?starting_after=${cursor}`);
        expect(res.statusCode).toBe(404);
        expect(res.json().error).toMatchObject({ code: 'resource_missing', param: 'starting_after' });
      }
    });
  });

  describe('isolation and test mode', () => {
    it("another account's endpoint is 404 everywhere, never 403", async () => {
      const other = await createAccountWithKey(api.pool);
      const id = (await register({ url: PUBLIC_URL }, other.headers)).json().id;
      for (const [method, url] of [
        ['GET', `/v1/webhooks/${id}`],
        ['DELETE', `/v1/webhooks/${id}`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
        ['POST', `/v1/webhooks/${id}/secret/rotate`],
      ] as const) {
        const res = await api.app.inject({ method, url, headers: merchant.headers });
        expect(res.statusCode, `${method} ${url}`).toBe(404);
        expect(res.json().error.code).toBe('resource_missing');
      }
      const mine = await api.app.inject({ method: 'GET', url: '/v1/webhooks?limit=100', headers: merchant.headers });
      expect(mine.json().data.map((e: { id: string }) => e.id)).not.toContain(id);
      expect(
        (await api.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers: other.headers })).statusCode,
      ).toBe(200);
    });

    it('test keys see test-mode endpoints only, live keys live-mode ones', async () => {
      const test = await createAccountWithKey(api.pool);
      const live = await createAccountWithKey(api.pool, { mode: 'live' });
      // The same account's live key.
      await api.pool.query('UPDATE api_keys SET account_id = $1 WHERE id = $2', [test.accountId, live.keyId]);
      const testEndpoint = (await register({ url: PUBLIC_URL }, test.headers)).json();
      const liveEndpoint = (await register({ url: PUBLIC_URL }, live.headers)).json();
      expect(testEndpoint.livemode).toBe(false);
      expect(liveEndpoint.livemode).toBe(true);
      const read = (id: string, headers: typeof test.headers) =>
        api.app.inject({ method: 'GET', url: `/v1/webhooks/${id}`, headers });
      expect((await read(testEndpoint.id, live.headers)).statusCode).toBe(404);
      expect((await read(liveEndpoint.id, test.headers)).statusCode).toBe(404);
      const liveList = await api.app.inject({ method: 'GET', url: '/v1/webhooks', headers: live.headers });
      expect(liveList.json().data.map((e: { id: string }) => e.id)).toEqual([liveEndpoint.id]);
      expect(liveList.json().data[0].livemode).toBe(true);
      expect(liveList.json().livemode).toBe(true);
    });

    it('errors made with a key carry its livemode too (every response made with a key)', async () => {
      const live = await createAccountWithKey(api.pool, { mode: 'live' });
      for (const [headers, livemode] of [
        [merchant.headers, false],
        [live.headers, true],
      ] as const) {
        const missing = await api.app.inject({ method: 'GET', url: '/v1/webhooks/we_nope', headers });
        expect(missing.statusCode).toBe(404);
        expect(missing.json()).toMatchObject({ error: { code: 'resource_missing' }, livemode });
        const refused = await register({ url: 'http://example.com/' }, headers);
        expect(refused.json()).toMatchObject({ error: { code: 'url_not_https', param: 'url' }, livemode });
        const deleted = await api.app.inject({ method: 'DELETE', url: '/v1/webhooks/we_nope', headers });
        expect(deleted.json()).toMatchObject({ error: { code: 'resource_missing' }, livemode });
      }
    });

    it('answers hostile ids in paths with 404, never 500', async () => {
      // The router refuses these before any handler runs; they still get our error shape.
      for (const path of [`we_${'a'.repeat(300)}`, '%zz', 'we_%E0%A4%A']) {
        const res = await api.app.inject({ method: 'GET', url: `/v1/webhooks/${path}`, headers: merchant.headers });
        expect(res.statusCode).toBe(400);
        expect(res.json().error.code).toBe('invalid_request');
      }
      const ids = [
        '%00',
        'we_%00',
        `we_${'a'.repeat(150)}`,
        'we_%27%20OR%201%3D1--',
        '..%2F..%2Fetc',
        'we_%F0%9F%93%A6',
      ];
      for (const id of ids) {
        for (const method of ['GET', 'DELETE'] as const) {
          const res = await api.app.inject({ method, url: `/v1/webhooks/${id}`, headers: merchant.headers });
          expect(res.statusCode, `${method} ${id}`).toBe(404);
        }
        const deliveries = await api.app.inject({
          method: 'GET',
          url: `/v1/webhooks/${id}/deliveries`,
          headers: merchant.headers,
        });
        expect(deliveries.statusCode).toBe(404);
      }
    });
  });

  describe('DELETE /v1/webhooks/:id', () => {
    it('removes the endpoint: 404 afterwards, and the delivery engine sees it deleted', async () => {
      const id = (await register({ url: PUBLIC_URL })).json().id;
      const res = await api.app.inject({ method: 'DELETE', url: `/v1/webhooks/${id}`, headers: merchant.headers });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toEqual({ id, object: 'webhook_endpoint', deleted: true, livemode: false });
      for (const [method, url] of [
        ['GET', `/v1/webhooks/${id}`],
        ['DELETE', `/v1/webhooks/${id}`],
        ['GET', `/v1/webhooks/${id}/deliveries`],
        ['POST', `/v1/webhooks/${id}/secret/rotate`],
      ] as const) {
        expect((await api.app.inject({ method, url, headers: merchant.headers })).statusCode).toBe(404);
      }
      const list = await api.app.inject({ method: 'GET', url: '/v1/webhooks?limit=100', headers: merchant.headers });
      expect(list.json().data.map((e: { id: string }) => e.id)).not.toContain(id);
      expect((await loadEndpointForDelivery(api.pool, id))?.deleted).toBe(true);
    });

    it('takes an empty body sent as JSON as no body: many clients set Content-Type on every request', async () => {
      const json = { ...merchant.headers, 'content-type': 'application/json' };
      const id = (await register({ url: PUBLIC_URL })).json().id;
      const rotated = await api.app.inject({
        method: 'POST',
        url: `/v1/webhooks/${id}/secret/rotate`,
        headers: json,
        payload: '',
      });
      expect(rotated.statusCode, rotated.body).toBe(200);
      const deleted = await api.app.inject({ method: 'DELETE', url: `/v1/webhooks/${id}`, headers: json, payload: '' });
      expect(deleted.statusCode, deleted.body).toBe(200);
      const registered = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: json, payload: '' });
      expect(registered.json().error).toMatchObject({ code: 'parameter_missing', param: 'url' });
      const broken = await api.app.inject({ method: 'POST', url: '/v1/webhooks', headers: json, payload: '{"url":' });
      expect(broken.json().error.code).toBe('invalid_json');
    });
  });

  describe('POST /v1/webhooks/:id/secret/rotate', () => {
    it('returns a new secret once and keeps the old one signing during the grace', async () => {
      const created = (await register({ url: PUBLIC_URL })).json();
      const res = await api.app.inject({
        method: 'POST',
        url: `/v1/webhooks/${created.id}/secret/rotate`,
        headers: merchant.headers,
      });
      expect(res.statusCode).toBe(200);
      const rotated = res.json();
      expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9]{32}$/);
      expect(rotated.secret).not.toBe(created.secret);
      expect(rotated.id).toBe(created.id);
      const loaded = await loadEndpointForDelivery(api.pool, created.id);
      expect(loaded).toMatchObject({ deleted: false, accountSuspended: false, livemode: false, url: PUBLIC_URL });
      expect(loaded?.secrets).toEqual([rotated.secret, created.secret]);
    });

    it('needs webhooks:manage, like every webhook route (src/core/scopes.ts)', async () => {
      const created = (await register({ url: PUBLIC_URL })).json();
      const reader = await createApiKey(api.pool, {
        accountId: merchant.accountId,
        mode: 'test',
        scopes: ['network:read'],
      });
      const res = await api.app.inject({
        method: 'POST',
        url: `/v1/webhooks/${created.id}/secret/rotate`,
        headers: { authorization: `Bearer ${reader.key}` },
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().error).toMatchObject({ code: 'insufficient_scope', scope: 'webhooks:manage' });
      expect((await loadEndpointForDelivery(api.pool, created.id))?.secrets).toEqual([created.secret]);
    });

    it('drops the old secret at once with expires_in_seconds 0, and validates the body', async () => {
      const created = (await register({ url: PUBLIC_URL })).json();
      const rotate = (payload: object) =>
        api.app.inject({
          method: 'POST',
          url: `/v1/webhooks/${created.id}/secret/rotate`,
          headers: merchant.headers,
          payload,
        });
      const res = await rotate({ expires_in_seconds: 0 });
      expect(res.statusCode).toBe(200);
      expect((await loadEndpointForDelivery(api.pool, created.id))?.secrets).toEqual([res.json().secret]);
      for (const payload of [
        { expires_in_seconds: -1 },
        { expires_in_seconds: 604_801 },
        { expires_in_seconds: '60' },
        { grace: 1 },
      ]) {
        const bad = await rotate(payload);
        expect(bad.statusCode).toBe(400);
      }
    });
  });
});
