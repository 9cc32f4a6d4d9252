import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { testConfig } from '../../helpers/env';
import { createAccountWithKey } from '../../helpers/fixtures';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/**
 * Custom headers per endpoint through the API: the rules, the hidden values, sealing at rest, PATCH changes, and
 * hidden headers not following a URL to another origin (checked on real POSTs to an HTTPS receiver on loopback).
 */
describe('endpoint custom headers', () => {
  const config = testConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: 'a'.repeat(64) });
  let api: ApiFixture;
  let tw: TestWorker;
  let receiver: Receiver;
  let headers: { authorization: string };

  beforeAll(async () => {
    api = await apiFixture({ config });
    tw = await startTestWorker(config);
    receiver = await startReceiver();
    headers = (await createAccountWithKey(api.pool)).headers;
  });
  afterAll(async () => {
    await receiver?.close();
    await tw?.stop();
    await api?.close();
  });

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
        Cookie: 'session=cookie-credential-2',
        'X-Password': 'password-credential-3',
        'X-Auth': 'auth-credential-4',
        'X-Client-Secret': 'secret-credential-5',
      },
    });
    expect(created.statusCode).toBe(200);
    const shown = {
      'X-Route': 'eu-1',
      Authorization: '********',
      'X-Api-Key': '********',
      'X-Auth-Token': '********',
      Cookie: '********',
      'X-Password': '********',
      'X-Auth': '********',
      'X-Client-Secret': '********',
    };
    expect(created.json().headers).toEqual(shown);
    const list = await api.app.inject({ method: 'GET', url: '/v1/webhooks?limit=100', headers });
    for (const credential of [
      'gateway-credential-1',
      'k-123',
      't-456',
      'credential-2',
      'credential-3',
      'credential-4',
    ]) {
      expect(created.body).not.toContain(credential);
      expect(list.body).not.toContain(credential);
    }
    expect(list.body).not.toContain('secret-credential-5');
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

  /** One endpoint every refused name is also PATCHed onto (an account holds at most 20 per mode). */
  let patchTarget: Promise<string> | undefined;
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
    ['Keep-Alive', 'header_not_allowed'],
    ['upgrade', 'header_not_allowed'],
    ['Expect', 'header_not_allowed'],
    ['TE', 'header_not_allowed'],
    ['Trailer', 'header_not_allowed'],
    ['Proxy-Authorization', 'header_not_allowed'],
    ['proxy-connection', 'header_not_allowed'],
    ['Bad Name', 'parameter_invalid'],
    ['X'.repeat(65), 'parameter_invalid'],
  ])('refuses the name %s with %s and its param', async (name, code) => {
    const refused = await register({ headers: { [name]: 'v' } });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().error).toMatchObject({ code, param: `headers.${name}` });
    patchTarget ??= register({}).then((created) => created.json().id as string);
    const id = await patchTarget;
    const patched = await api.app.inject({
      method: 'PATCH',
      url: `/v1/webhooks/${id}`,
      headers,
      payload: { headers: { [name]: 'v' } },
    });
    expect(patched.statusCode).toBe(400);
    expect(patched.json().error).toMatchObject({ code, param: `headers.${name}` });
  });

  const credentials = { Authorization: 'Bearer gw-1', 'X-Api-Key': 'k-1', Cookie: 's=1', 'X-Password': 'p-1' };
  const patch = (id: string, payload: Record<string, unknown>) =>
    api.app.inject({ method: 'PATCH', url: `/v1/webhooks/${id}`, headers, payload });
  /** The headers of the next POST to `path`: a test event sent through the real worker. */
  async function nextPost(id: string, path: string) {
    const before = receiver.at(path).length;
    const sent = await api.app.inject({ method: 'POST', url: `/v1/webhooks/${id}/test`, headers, payload: {} });
    expect(sent.statusCode).toBe(202);
    const requests = await waitFor(() => receiver.at(path).length > before && receiver.at(path), {
      what: `a POST to ${path}`,
    });
    return requests[before]!.headers;
  }

  it('a URL change to another origin drops the hidden headers, keeping the others', async () => {
    const id = (await register({ headers: { 'X-Route': 'eu-1', ...credentials } })).json().id as string;
    const moved = await patch(id, { url: `${receiver.url}/moved` });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().headers).toEqual({ 'X-Route': 'eu-1' });
    const sent = await nextPost(id, '/moved');
    expect(sent['x-route']).toBe('eu-1');
    for (const name of ['authorization', 'x-api-key', 'cookie', 'x-password']) expect(sent[name]).toBeUndefined();
  });

  it('a URL change to another origin keeps the hidden headers the same request sets again', async () => {
    const id = (await register({ headers: { 'X-Route': 'eu-1', ...credentials } })).json().id as string;
    const moved = await patch(id, {
      url: `${receiver.url}/moved-again`,
      headers: { Authorization: 'Bearer gw-2', 'X-Route': null },
    });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().headers).toEqual({ Authorization: '********' });
    const sent = await nextPost(id, '/moved-again');
    expect(sent.authorization).toBe('Bearer gw-2');
    expect(sent['x-api-key']).toBeUndefined();
    expect(sent['x-route']).toBeUndefined();
  });

  it('a path change on the same origin keeps every header', async () => {
    const created = await api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers,
      payload: { url: `${receiver.url}/first-path`, headers: { 'X-Route': 'eu-1', ...credentials } },
    });
    expect(created.statusCode).toBe(200);
    const id = created.json().id as string;
    const moved = await patch(id, { url: `${receiver.url}/second-path?q=1` });
    expect(moved.statusCode).toBe(200);
    const sent = await nextPost(id, '/second-path');
    expect(sent['x-route']).toBe('eu-1');
    expect(sent.authorization).toBe('Bearer gw-1');
    expect(sent['x-api-key']).toBe('k-1');
    expect(sent.cookie).toBe('s=1');
    expect(sent['x-password']).toBe('p-1');
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
