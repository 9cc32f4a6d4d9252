import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { testConfig } from '../../helpers/env';
import { createAccountWithKey } from '../../helpers/fixtures';
import { pageSession, type PageSession } from '../../helpers/page-session';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/**
 * The developers page's endpoint change form and custom headers: a URL change to another origin drops the hidden
 * headers unless the form enters them again (checked on real POSTs to an HTTPS receiver on loopback), refused
 * names answer 400 with the API's code, and the page says so next to the field.
 */
describe('developers page: custom headers and the URL', () => {
  const config = testConfig({ WEBHOOK_SECRET_ENCRYPTION_KEYS: 'b'.repeat(64) });
  let api: ApiFixture;
  let tw: TestWorker;
  let receiver: Receiver;
  let merchant: { accountId: string; headers: { authorization: string } };
  let page: PageSession;

  beforeAll(async () => {
    api = await apiFixture({ config });
    tw = await startTestWorker(config);
    receiver = await startReceiver();
    merchant = await createAccountWithKey(api.pool);
    page = await pageSession(api.app, api.pool, merchant.accountId);
  });
  afterAll(async () => {
    await receiver?.close();
    await tw?.stop();
    await api?.close();
  });

  const credentials = { Authorization: 'Bearer gw-1', 'X-Api-Key': 'k-1', Cookie: 's=1', 'X-Auth': 'a-1' };

  async function register(url: string): Promise<string> {
    const created = await api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: merchant.headers,
      payload: { url, headers: { 'X-Route': 'eu-1', ...credentials } },
    });
    expect(created.statusCode).toBe(200);
    return created.json().id as string;
  }

  const change = (id: string, fields: Record<string, string>) =>
    page.send('POST', `/dashboard/test/endpoints/${id}/update`, fields);

  /** The headers of the next POST to `path`: a test event sent through the real worker. */
  async function nextPost(id: string, path: string) {
    const before = receiver.at(path).length;
    const sent = await api.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${id}/test`,
      headers: merchant.headers,
      payload: {},
    });
    expect(sent.statusCode).toBe(202);
    const requests = await waitFor(() => receiver.at(path).length > before && receiver.at(path), {
      what: `a POST to ${path}`,
    });
    return requests[before]!.headers;
  }

  it('says next to the headers field that another host drops the hidden headers', async () => {
    const id = await register('https://127.0.0.1:9/note');
    const shown = await api.app.inject({
      method: 'GET',
      url: `/dashboard/test/endpoints/${id}`,
      headers: { cookie: page.cookie },
    });
    expect(shown.statusCode).toBe(200);
    expect(shown.body).toContain(
      'Changing the URL to another host drops the hidden headers (credentials) unless you enter them again.',
    );
    for (const value of Object.values(credentials)) expect(shown.body).not.toContain(value);
  });

  it('a URL change to another origin drops the hidden headers, keeping the others', async () => {
    const id = await register('https://127.0.0.1:9/page-old');
    const changed = await change(id, { url: `${receiver.url}/page-moved`, headers: '' });
    expect(changed.statusCode, changed.body).toBe(303);
    const sent = await nextPost(id, '/page-moved');
    expect(sent['x-route']).toBe('eu-1');
    for (const name of ['authorization', 'x-api-key', 'cookie', 'x-auth']) expect(sent[name]).toBeUndefined();
  });

  it('keeps a hidden header the form enters again, and every header on a same-origin path change', async () => {
    const id = await register('https://127.0.0.1:9/page-again');
    const changed = await change(id, { url: `${receiver.url}/page-again`, headers: 'Authorization: Bearer gw-2' });
    expect(changed.statusCode, changed.body).toBe(303);
    const moved = await nextPost(id, '/page-again');
    expect(moved.authorization).toBe('Bearer gw-2');
    expect(moved['x-route']).toBe('eu-1');
    expect(moved['x-api-key']).toBeUndefined();

    const same = await register(`${receiver.url}/page-first`);
    const renamed = await change(same, { url: `${receiver.url}/page-second`, headers: '' });
    expect(renamed.statusCode, renamed.body).toBe(303);
    const kept = await nextPost(same, '/page-second');
    expect(kept.authorization).toBe('Bearer gw-1');
    expect(kept['x-api-key']).toBe('k-1');
    expect(kept.cookie).toBe('s=1');
    expect(kept['x-auth']).toBe('a-1');
  });

  it('a refused form brings the headers back without the hidden values', async () => {
    const id = await register('https://127.0.0.1:9/page-echo');
    const refused = await change(id, {
      url: 'https://127.0.0.1:9/page-echo',
      headers: 'X-Route: eu-2\nAuthorization: Bearer page-credential-9\nX-Api-Key:\nHost: evil.example',
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.body).not.toContain('page-credential-9');
    expect(refused.body).toMatch(/<textarea id="change-headers"[^>]*>X-Route: eu-2\nX-Api-Key:\nHost: evil.example</);
  });

  it.each(['Keep-Alive', 'Upgrade', 'Expect', 'TE', 'Trailer', 'Proxy-Authorization'])(
    'refuses the name %s as the API does (header_not_allowed), marking the field',
    async (name) => {
      const id = await register('https://127.0.0.1:9/page-refused');
      const refused = await change(id, { url: 'https://127.0.0.1:9/page-refused', headers: `${name}: v` });
      expect(refused.statusCode).toBe(400);
      expect(refused.body).toContain(`The header ${name} is set by the service or changes the request`);
      expect(refused.body).toMatch(/<textarea id="change-headers"[^>]*aria-invalid="true"/);
    },
  );
});
