import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type RunningApi } from '../../../api/server';
import { createPool, type Pool } from '../../../db/pool';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';

/** INTERNAL_PORT: the internal routes on a port of their own, the public port without them. */
describe('internal routes on INTERNAL_PORT', () => {
  const token = 'internal-token-for-port-tests-0123456789';
  let api: RunningApi;
  let pool: Pool;
  beforeAll(async () => {
    const config = testConfig({ INTERNAL_API_TOKEN: token, HOST: '127.0.0.1', PORT: '0', INTERNAL_PORT: '0' });
    api = await startApi(config);
    pool = createPool(config.databaseUrl);
  });
  afterAll(async () => {
    await api?.close();
    await pool?.end();
  });

  const signInLink = (base: string, accountId: string) =>
    fetch(`${base}/internal/v1/dashboard/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: accountId }),
    });

  it('serves the internal routes on the internal port only', async () => {
    expect(api.internalUrl).not.toBe(api.url);
    const accountId = await createAccount(pool);
    const created = await signInLink(api.internalUrl, accountId);
    expect(created.status).toBe(201);
    // Built on the public address (PUBLIC_URL, else the listening one), never on the internal port browsers cannot reach.
    const { url } = (await created.json()) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/sign-in\/[A-Za-z0-9]{43}$/);
    expect(url.startsWith(api.internalUrl)).toBe(false);
    const wrong = await fetch(`${api.internalUrl}/internal/v1/events`, { method: 'POST', headers: { authorization: 'Bearer nope' } });
    expect(wrong.status).toBe(401);

    for (const url of ['/internal/v1/dashboard/sessions', '/internal/v1/events']) {
      const refused = await fetch(`${api.url}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ account_id: accountId }),
      });
      expect(refused.status, url).toBe(404);
      expect(((await refused.json()) as { error: { code: string } }).error.code, url).toBe('route_not_found');
    }
  });

  it('answers nothing else on the internal port, and everything else on the public one', async () => {
    for (const url of ['/healthz', '/v1/towns', '/dashboard/sign-in', '/docs']) {
      expect((await fetch(`${api.internalUrl}${url}`)).status, url).toBe(404);
    }
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${api.url}/dashboard/sign-in`)).status).toBe(200);
  });

  it('closes both ports', async () => {
    const config = testConfig({ INTERNAL_API_TOKEN: token, HOST: '127.0.0.1', PORT: '0', INTERNAL_PORT: '0' });
    const other = await startApi(config);
    await other.close();
    await expect(fetch(`${other.internalUrl}/internal/v1/events`, { method: 'POST' })).rejects.toThrow();
    await expect(fetch(`${other.url}/healthz`)).rejects.toThrow();
  });
});
