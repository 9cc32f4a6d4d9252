import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../helpers/env';
import { createAccountWithKey } from '../../helpers/fixtures';
import { apiFixture, type ApiFixture } from '../../helpers/api';

// A public address literal: passes the SSRF guard without any DNS.
const PUBLIC_URL = 'https://93.184.215.14/limited';

/** An endpoint's rate_limit through the API: set, read, changed, removed, refused, and declared. */
describe('webhook endpoints API: rate_limit', () => {
  let api: ApiFixture;
  let merchant: Awaited<ReturnType<typeof createAccountWithKey>>;

  beforeAll(async () => {
    api = await apiFixture({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' }) });
    merchant = await createAccountWithKey(api.pool);
  });
  afterAll(async () => {
    await api?.close();
  });

  const call = (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown) =>
    api.app.inject({
      method,
      url,
      headers: merchant.headers,
      ...(payload === undefined ? {} : { payload: payload as object }),
    });

  it('is set at registration, shown by GET and the list, changed and removed with PATCH', async () => {
    const created = await call('POST', '/v1/webhooks', { url: PUBLIC_URL, rate_limit: 50 });
    expect(created.statusCode, created.body).toBe(200);
    const { id } = created.json();
    expect(created.json().rate_limit).toBe(50);
    expect((await call('GET', `/v1/webhooks/${id}`)).json().rate_limit).toBe(50);
    const listed = (await call('GET', '/v1/webhooks?limit=100')).json().data.find((e: { id: string }) => e.id === id);
    expect(listed.rate_limit).toBe(50);

    const changed = await call('PATCH', `/v1/webhooks/${id}`, { rate_limit: 1000 });
    expect(changed.statusCode, changed.body).toBe(200);
    expect(changed.json().rate_limit).toBe(1000);
    // Another field changed leaves the limit as it is.
    expect((await call('PATCH', `/v1/webhooks/${id}`, { description: 'orders' })).json().rate_limit).toBe(1000);
    expect((await call('PATCH', `/v1/webhooks/${id}`, { rate_limit: null })).json().rate_limit).toBeNull();
    expect((await call('GET', `/v1/webhooks/${id}`)).json().rate_limit).toBeNull();
    const { rows } = await api.pool.query('SELECT rate_limit FROM webhook_endpoints WHERE id = $1', [id]);
    expect(rows[0].rate_limit).toBeNull();
  });

  it('is null when unset', async () => {
    const created = await call('POST', '/v1/webhooks', { url: PUBLIC_URL });
    expect(created.json()).toHaveProperty('rate_limit', null);
    expect((await call('POST', '/v1/webhooks', { url: PUBLIC_URL, rate_limit: null })).json()).toHaveProperty(
      'rate_limit',
      null,
    );
  });

  it('refuses anything but a whole number from 1 to 1000, with param rate_limit, at registration and in PATCH', async () => {
    const { id } = (await call('POST', '/v1/webhooks', { url: PUBLIC_URL, rate_limit: 7 })).json();
    for (const bad of [0, -1, 1001, 1.5, '5', true, [5], { n: 5 }]) {
      const registered = await call('POST', '/v1/webhooks', { url: PUBLIC_URL, rate_limit: bad });
      expect(registered.statusCode, `${JSON.stringify(bad)}: ${registered.body}`).toBe(400);
      expect(registered.json().error).toMatchObject({ code: 'parameter_invalid', param: 'rate_limit' });
      const patched = await call('PATCH', `/v1/webhooks/${id}`, { rate_limit: bad });
      expect(patched.statusCode, `${JSON.stringify(bad)}: ${patched.body}`).toBe(400);
      expect(patched.json().error).toMatchObject({ code: 'parameter_invalid', param: 'rate_limit' });
    }
    expect((await call('GET', `/v1/webhooks/${id}`)).json().rate_limit).toBe(7);
  });

  it('is declared in the OpenAPI document: an integer from 1 to 1000, or null', async () => {
    const doc = (await api.app.inject({ url: '/openapi.json' })).json();
    const schemaOf = (route: string, method: string, where: 'request' | 'response') => {
      const op = doc.paths[route][method];
      return where === 'request'
        ? op.requestBody.content['application/json'].schema
        : op.responses['200'].content['application/json'].schema;
    };
    const resolve = (schema: { $ref?: string }) =>
      schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop() as string] : schema;
    const declared = [
      resolve(schemaOf('/v1/webhooks', 'post', 'request')).properties.rate_limit,
      resolve(schemaOf('/v1/webhooks/{id}', 'patch', 'request')).properties.rate_limit,
      resolve(schemaOf('/v1/webhooks/{id}', 'get', 'response')).properties.rate_limit,
    ];
    for (const schema of declared) {
      const text = JSON.stringify(schema);
      expect(text).toContain('"type":"integer"');
      expect(text).toContain('"minimum":1');
      expect(text).toContain('"maximum":1000');
      expect(text).toContain('null');
    }
  });
});
