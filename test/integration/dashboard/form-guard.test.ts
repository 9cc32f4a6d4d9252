import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PAGE_ACTIONS_PER_MINUTE, spendPageAction } from '../../../src/dashboard/actions';
import { createSignInLink } from '../../../src/domain/dashboard-sessions';
import { publishEvent } from '../../../src/domain/events';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { createAccount, createApiKey } from '../../helpers/fixtures';
import { pageSession, snapshotOf } from '../../helpers/page-session';
import { servedRoutes } from '../../helpers/routes';

/**
 * Every route of the developers page that changes (any method but GET and HEAD), found in the app's router rather
 * than listed here, passes the one guard: a foreign origin or a wrong form token is 403 csrf_failed, a pending
 * account changes nothing in live mode, and a session past its budget changes nothing; in every case the database
 * is as it was. A route added later is enumerated too, so one that skipped the guard would fail here.
 */
describe('developers page: one guard for every form', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  /** What an account has in a mode, for filling a route's address. */
  async function holdings(accountId: string, livemode: boolean) {
    const endpoint = await createEndpoint(f.pool, {
      accountId,
      url: `https://93.184.215.14/${livemode ? 'live' : 'test'}`,
      livemode,
    });
    const key = await createApiKey(f.pool, { accountId, mode: livemode ? 'live' : 'test' });
    const event = await publishEvent(
      { pool: f.pool },
      { accountId, livemode, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    return { endpoint: endpoint.id, key: key.id, event: event.event.id };
  }

  /** The page's changing routes, as the router has them: "METHOD /dashboard/...". */
  const changingRoutes = () =>
    servedRoutes(f.app)
      .filter((route) => / \/dashboard/.test(route))
      .filter((route) => !/^(GET|HEAD) /.test(route))
      .map((route) => {
        const [method, path] = route.split(' ') as [string, string];
        return { method, path, name: route };
      });

  /** A fresh sign-in link's token for the account. */
  const linkToken = async (accountId: string) =>
    (await createSignInLink(f.pool, { accountId, origin: 'http://localhost:80' })).url.split('/').pop()!;

  /** A route's address for this mode and these rows (and this sign-in link's token). */
  function addressOf(
    path: string,
    mode: 'test' | 'live',
    rows: { endpoint: string; key: string; event: string },
    token = '',
  ) {
    const id = path.includes('/keys/') ? rows.key : path.includes('/events/') ? rows.event : rows.endpoint;
    return path
      .replace(':mode', mode)
      .replace(':id', id)
      .replace(':token', token)
      .replace(/\/?\*$/, `/${mode}/nowhere`);
  }

  /** Every field any form reads, so that a form that got past the guard would change something. */
  const fieldsFor = (rows: { endpoint: string }) => ({
    confirm: 'yes',
    url: 'https://93.184.215.14/changed',
    type: 'parcel.delivered',
    since: '2026-01-01T00:00',
    endpoint_id: rows.endpoint,
    scopes: 'network:read',
  });

  const SIGN_IN = 'POST /dashboard/sign-in/:token';
  /** The changing routes that name no mode, the catch-all 404 aside: the link's post and the sign-outs. */
  const WITHOUT_MODE = [SIGN_IN, 'POST /dashboard/sign-out', 'POST /dashboard/sign-out-everywhere'];

  it('finds every form in the router, the event-types page\'s "Send test event" among them', () => {
    const names = changingRoutes().map((route) => route.name);
    expect(names).toContain('POST /dashboard/:mode/event-types/test');
    expect(names).toContain('POST /dashboard/:mode/keys/:id/revoke');
    expect(names).toContain('POST /dashboard/:mode/events/:id/resend');
    expect(names.filter((name) => name.startsWith('POST /dashboard/:mode/')).length).toBeGreaterThanOrEqual(12);
    // A change is made in one mode, named in its address; only these name none.
    expect(names.filter((name) => !name.includes(':mode') && !name.endsWith('*')).sort()).toEqual(
      [...WITHOUT_MODE].sort(),
    );
  });

  it('refuses a foreign origin and a wrong or missing form token on every changing route with csrf_failed, changing nothing', async () => {
    const accountId = await createAccount(f.pool, { status: 'active' });
    const rows = { test: await holdings(accountId, false), live: await holdings(accountId, true) };
    const session = await pageSession(f.app, f.pool, accountId);
    const token = await linkToken(accountId);
    const before = await snapshotOf(f.pool, [accountId]);
    const exempt: string[] = [];
    for (const route of changingRoutes()) {
      for (const mode of ['test', 'live'] as const) {
        const url = addressOf(route.path, mode, rows[mode], token);
        const fields = fieldsFor(rows[mode]);
        for (const origin of ['https://evil.example', 'null']) {
          const res = await session.send(route.method, url, fields, { origin });
          expect(res.statusCode, `${route.name} from ${origin}`).toBe(403);
          expect(res.body, route.name).toContain('csrf_failed');
          expect(res.headers['set-cookie'], route.name).toBeUndefined();
        }
        if (route.name === SIGN_IN) {
          // No session exists before it: the single-use link in its address is the credential, not a form token.
          exempt.push(route.name);
          continue;
        }
        for (const csrf of [null, '', 'x', `${session.csrf}x`]) {
          const res = await session.send(route.method, url, fields, { csrf });
          expect(res.statusCode, `${route.name} with token ${JSON.stringify(csrf)}`).toBe(403);
          expect(res.body, route.name).toContain('csrf_failed');
        }
      }
    }
    expect([...new Set(exempt)]).toEqual([SIGN_IN]);
    expect(await snapshotOf(f.pool, [accountId])).toEqual(before);
  });

  it('refuses every live-mode change of a pending account, whatever the route, changing nothing', async () => {
    const accountId = await createAccount(f.pool, { status: 'pending' });
    const live = await holdings(accountId, true);
    const session = await pageSession(f.app, f.pool, accountId);
    const before = await snapshotOf(f.pool, [accountId]);
    const routes = changingRoutes().filter((route) => route.path.includes(':mode'));
    for (const route of routes) {
      const res = await session.send(route.method, addressOf(route.path, 'live', live), fieldsFor(live));
      expect(res.statusCode, route.name).toBe(403);
      expect(res.body, route.name).toContain('client_not_active');
    }
    expect(await snapshotOf(f.pool, [accountId])).toEqual(before);
    // The refusal is the mode's, not the form's: test mode is open to it, on the event-types page too.
    const test = await holdings(accountId, false);
    const sent = await session.send('POST', '/dashboard/test/event-types/test', {
      endpoint_id: test.endpoint,
      type: 'parcel.delivered',
    });
    expect(sent.statusCode, sent.body).toBe(303);
    const events = await f.pool.query('SELECT 1 FROM events WHERE account_id = $1 AND livemode = false', [accountId]);
    expect(events.rowCount).toBe(2);
  });

  it(`refuses every change of a session past its ${PAGE_ACTIONS_PER_MINUTE} a minute, changing nothing`, async () => {
    const accountId = await createAccount(f.pool, { status: 'active' });
    const test = await holdings(accountId, false);
    const session = await pageSession(f.app, f.pool, accountId);
    // The budget is kept per session token in this process: spent here, as that many forms would have.
    for (let i = 0; i < PAGE_ACTIONS_PER_MINUTE; i += 1) spendPageAction(session.csrf);
    const before = await snapshotOf(f.pool, [accountId]);
    for (const route of changingRoutes().filter((candidate) => candidate.path.includes(':mode'))) {
      const res = await session.send(route.method, addressOf(route.path, 'test', test), fieldsFor(test));
      expect(res.statusCode, route.name).toBe(429);
      expect(Number(res.headers['retry-after']), route.name).toBeGreaterThan(0);
    }
    expect(await snapshotOf(f.pool, [accountId])).toEqual(before);
    // Signing out is never refused for the budget.
    const out = await session.send('POST', '/dashboard/sign-out');
    expect(out.statusCode).toBe(303);
  });
});
