import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { createAccountWithKey } from '../../helpers/fixtures';

/** Custom headers per endpoint through the API: the rules, the hidden values, sealing at rest, PATCH changes. */
describe('endpoint custom headers', () => {
  let api: ApiFixture;
  let headers: { authorization: string };

  beforeAll(async () => {
    api = await apiFixture({ env: { WEBHOOK_SECRET_ENCRYPTION_KEYS: 'a'.repeat(64) } });
    headers = (await createAccountWithKey(api.pool)).headers;
  });
  afterAll(async () => api?.close());

  const register = (extra: Record<string, unknown>) =>
    api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers,
      payload: { url: 'https://127.0.0.1:9/hooks', ...extra },
    });

  it('are {} by default, always present', async () => {
    const created = await register({});
    expect(created.statusCode).toBe(200);
    expect(created.json().headers).toEqual({});
    const read = await api.app.inject({ method: 'GET', url: `/v1/webhooks/${created.json().id}`, headers });
    expect(read.json().headers).toEqual({});
  });

  it('show plain values, hide credentials, and are sealed at rest', async () => {
    const created = await register({
      headers: {
        'X-Route': 'eu-1',
        Authorization: 'Bearer gateway-credential-1',
        'X-Api-Key': 'k-123',
        'X-Auth-Token': 't-456',
      },
    });
    expect(created.statusCode).toBe(200);
    const shown = { 'X-Route': 'eu-1', Authorization: '********', 'X-Api-Key': '********', 'X-Auth-Token': '********' };
    expect(created.json().headers).toEqual(shown);
    const list = await api.app.inject({ method: 'GET', url: '/v1/webhooks?limit=100', headers });
    expect(list.body).not.toContain('gateway-credential-1');
    expect(list.json().data.find((e: { id: string }) => e.id === created.json().id).headers).toEqual(shown);
    const { rows } = await api.pool.query<{ headers: string }>('SELECT headers FROM webhook_endpoints WHERE id = $1', [
      created.json().id,
    ]);
    expect(rows[0]!.headers).toMatch(/^enc:v2:/);
    expect(rows[0]!.headers).not.toContain('eu-1');
  });

  it('PATCH sets and removes names, leaving the others', async () => {
    const id = (await register({ headers: { 'X-One': '1', 'X-Two': '2' } })).json().id as string;
    const patched = await api.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${id}`,
      headers,
      payload: { headers: { 'x-one': 'uno', 'X-Two': null, 'X-Three': '3' } },
    });
    expect(patched.statusCode).toBe(200);
    expect(patched.json().headers).toEqual({ 'x-one': 'uno', 'X-Three': '3' });
  });

  it.each([
    ['Host', 'header_not_allowed'],
    ['content-type', 'header_not_allowed'],
    ['Content-Length', 'header_not_allowed'],
    ['Connection', 'header_not_allowed'],
    ['Transfer-Encoding', 'header_not_allowed'],
    ['Service-Signature', 'header_not_allowed'],
    ['WEBHOOK-ID', 'header_not_allowed'],
    ['traceparent', 'header_not_allowed'],
    ['TraceState', 'header_not_allowed'],
    ['Bad Name', 'parameter_invalid'],
    ['X'.repeat(65), 'parameter_invalid'],
  ])('refuses the name %s with %s and its param', async (name, code) => {
    const refused = await register({ headers: { [name]: 'v' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code, param: `headers.${name}` });
  });

  it('refuses bad values, too many headers, and the hidden mask sent back', async () => {
    for (const value of ['line\nbreak', 'x'.repeat(1001), '', '********']) {
      const refused = await register({ headers: { 'X-Value': value } });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toMatchObject({ code: 'parameter_invalid', param: 'headers.X-Value' });
    }
    const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, 'v']));
    const tooMany = await register({ headers: many });
    expect(tooMany.statusCode).toBe(400);
    expect(tooMany.json().error).toMatchObject({ code: 'parameter_invalid', param: 'headers' });
    const twenty = await register({ headers: Object.fromEntries(Object.entries(many).slice(0, 20)) });
    expect(twenty.statusCode).toBe(200);
  });
});
