import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_ACTIONS_PER_MINUTE } from '../../../src/dashboard/actions';
import { MAX_ENDPOINTS_PER_MODE } from '../../../src/domain/endpoints';
import { createSignInLink, findSession, openSession } from '../../../src/domain/dashboard-sessions';
import { publishEvent } from '../../../src/domain/events';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { createAccount, createApiKey } from '../../helpers/fixtures';

/**
 * The developers page's state-changing forms through the real app: pending means test only (client_not_active
 * for every live-mode change, nothing written), the per-session budget of changes, and the caps' messages.
 */
describe('developers page: what a change may do', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture({ env: { INTERNAL_API_TOKEN: 'internal-token-for-page-actions-01234' } });
  });
  afterAll(async () => {
    await f?.close();
  });

  /** A signed-in session of the account: its cookie and its form token. */
  async function session(accountId: string) {
    const link = await createSignInLink(f.pool, { accountId, origin: 'http://127.0.0.1' });
    const opened = await openSession(f.pool, link.url.split('/').pop() as string);
    const found = await findSession(f.pool, opened!.sessionId);
    const cookie = `parcel_dashboard_session=${opened!.sessionId}`;
    return (url: string, fields: Record<string, string> = {}) =>
      f.app.inject({
        method: 'POST',
        url,
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ _csrf: found!.csrfToken, ...fields }).toString(),
      });
  }

  const count = async (sql: string, accountId: string) => Number((await f.pool.query(sql, [accountId])).rows[0].n);
  const changesOf = async (accountId: string) => ({
    endpoints: await count(
      'SELECT count(*) AS n FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL AND disabled_at IS NULL',
      accountId,
    ),
    keys: await count('SELECT count(*) AS n FROM api_keys WHERE account_id = $1 AND revoked_at IS NULL', accountId),
    events: await count('SELECT count(*) AS n FROM events WHERE account_id = $1', accountId),
    outbox: await count(
      'SELECT count(*) AS n FROM deliveries WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE account_id = $1)',
      accountId,
    ),
  });

  it('refuses every live-mode change of a pending account with client_not_active, changing nothing; test mode works', async () => {
    const accountId = await createAccount(f.pool, { status: 'pending' });
    // What an operator may have prepared in live mode: an endpoint, a key, an event.
    const endpoint = await createEndpoint(f.pool, { accountId, url: 'https://93.184.215.14/live', livemode: true });
    const key = await createApiKey(f.pool, { accountId, mode: 'live' });
    const event = await publishEvent(
      { pool: f.pool },
      { accountId, livemode: true, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    const post = await session(accountId);
    const before = await changesOf(accountId);

    const live = '/dashboard/live';
    const attempts: Array<[string, Record<string, string>]> = [
      [`${live}/endpoints`, { url: 'https://93.184.215.14/new' }],
      [`${live}/endpoints/${endpoint.id}/test`, { type: 'parcel.delivered' }],
      [`${live}/endpoints/${endpoint.id}/recover`, { since: '2026-01-01T00:00:00Z' }],
      [`${live}/endpoints/${endpoint.id}/rotate`, { confirm: 'yes' }],
      [`${live}/endpoints/${endpoint.id}/update`, { url: 'https://93.184.215.14/changed' }],
      [`${live}/endpoints/${endpoint.id}/disable`, { confirm: 'yes' }],
      [`${live}/endpoints/${endpoint.id}/delete`, { confirm: 'yes' }],
      [`${live}/events/${event.event.id}/resend`, { endpoint_id: endpoint.id }],
      [`${live}/keys`, { scopes: 'network:read' }],
      [`${live}/keys/${key.id}/revoke`, { confirm: 'yes' }],
    ];
    for (const [url, fields] of attempts) {
      const res = await post(url, fields);
      expect(res.statusCode, url).toBe(403);
      expect(res.body, url).toContain('client_not_active');
      expect(res.body, url).toContain('Live mode needs an approved account');
    }
    expect(await changesOf(accountId)).toEqual(before);
    const stored = await f.pool.query('SELECT url, secret FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    expect(stored.rows[0]).toEqual({ url: 'https://93.184.215.14/live', secret: endpoint.secret });

    // Test mode is open to it.
    const created = await post('/dashboard/test/endpoints', { url: 'https://93.184.215.14/test' });
    expect(created.statusCode).toBe(200);
    expect(created.body).toContain('whsec_');
    // Approved, the same live change goes through.
    await f.pool.query(`UPDATE accounts SET status = 'active' WHERE id = $1`, [accountId]);
    expect((await post(`${live}/endpoints`, { url: 'https://93.184.215.14/new' })).statusCode).toBe(200);
  });

  it(`allows a session ${PAGE_ACTIONS_PER_MINUTE} changes a minute, then says so on the page`, async () => {
    const accountId = await createAccount(f.pool);
    const endpoint = await createEndpoint(f.pool, { accountId, url: 'https://93.184.215.14/budget' });
    const post = await session(accountId);
    const statuses: number[] = [];
    for (let i = 0; i < PAGE_ACTIONS_PER_MINUTE; i += 1) {
      statuses.push(
        (await post(`/dashboard/test/endpoints/${endpoint.id}/test`, { type: 'parcel.delivered' })).statusCode,
      );
    }
    expect(statuses.every((status) => status === 303)).toBe(true);
    const limited = await post('/dashboard/test/endpoints', { url: 'https://93.184.215.14/one-more' });
    expect(limited.statusCode).toBe(429);
    expect(limited.headers['content-type']).toContain('text/html');
    expect(limited.body).toContain('Too many');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(await changesOf(accountId)).toMatchObject({ endpoints: 1, events: PAGE_ACTIONS_PER_MINUTE });
    // The budget is the session's: another session of the same account still works.
    const other = await session(accountId);
    expect(
      (await other(`/dashboard/test/endpoints/${endpoint.id}/test`, { type: 'parcel.delivered' })).statusCode,
    ).toBe(303);
  });

  it("shows the endpoint cap in a merchant's words", async () => {
    const accountId = await createAccount(f.pool);
    for (let i = 0; i < MAX_ENDPOINTS_PER_MODE; i += 1)
      await createEndpoint(f.pool, { accountId, url: `https://93.184.215.14/cap${i}` });
    const res = await (await session(accountId))('/dashboard/test/endpoints', { url: 'https://93.184.215.14/over' });
    expect(res.statusCode).toBe(409);
    expect(res.body).toContain('You have reached the limit of webhook endpoints for this mode');
  });
});
