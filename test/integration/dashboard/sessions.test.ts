import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../../src/api/server';
import { SIGN_IN_FAILURES_PER_MINUTE } from '../../../src/dashboard/routes/sign-in';
import { createSignInLink } from '../../../src/domain/dashboard-sessions';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';

/** Sign-in links and sessions through the app (the browser flow is pages.test.ts). */
describe('developers page sessions', () => {
  const token = 'internal-token-for-session-tests';
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  let f: ApiFixture;
  beforeAll(async () => {
    const base = loggerOptions(testConfig()) as Record<string, unknown>;
    f = await apiFixture({
      env: { INTERNAL_API_TOKEN: token, PUBLIC_URL: 'https://hooks.parcel.example' },
      logger: { ...base, level: 'trace', stream: sink } as never,
    });
  });
  afterAll(async () => {
    await f?.close();
  });

  const createLink = (body: unknown, auth = `Bearer ${token}`) =>
    f.app.inject({
      method: 'POST',
      url: '/internal/v1/dashboard/sessions',
      headers: { authorization: auth },
      payload: body as object,
    });

  it('hands out links on PUBLIC_URL, behind the internal token, for accounts that exist', async () => {
    const accountId = await createAccount(f.pool);
    const created = await createLink({ account_id: accountId });
    expect(created.statusCode).toBe(201);
    expect(created.json().url).toMatch(/^https:\/\/hooks\.parcel\.example\/dashboard\/sign-in\/[A-Za-z0-9]{43}$/);
    expect((await createLink({ account_id: accountId }, 'Bearer wrong-token-wrong-token')).json().error.code).toBe(
      'invalid_internal_token',
    );
    const missing = await createLink({ account_id: 'acct_nobody' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('resource_missing');
    expect((await createLink({ account_id: accountId, extra: 1 })).json().error.code).toBe('parameter_unknown');
    // Only hashes are stored.
    const stored = await f.pool.query('SELECT token_hash FROM dashboard_sign_in_links WHERE account_id = $1', [
      accountId,
    ]);
    expect(stored.rows[0].token_hash).toHaveLength(32);
  });

  const ORIGIN = 'https://hooks.parcel.example';
  /** A fresh link's path, for a new account. */
  const linkPath = async (accountId?: string) =>
    new URL((await createLink({ account_id: accountId ?? (await createAccount(f.pool)) })).json().url).pathname;
  /** The Sign in button's post, as a browser sends it from the link's page. */
  const signIn = (path: string, remoteAddress: string, headers: Record<string, string | undefined> = {}) => {
    const sent = { origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...headers };
    const defined = Object.fromEntries(Object.entries(sent).filter(([, value]) => value !== undefined)) as Record<
      string,
      string
    >;
    return f.app.inject({ method: 'POST', url: path, remoteAddress, headers: defined, payload: '' });
  };
  const sessionOf = (response: { headers: Record<string, unknown> }) =>
    String(response.headers['set-cookie']).split(';')[0]!.split('=')[1]!;
  const keysPage = (sessionId: string) =>
    f.app.inject({ url: '/dashboard/test/keys', headers: { cookie: `__Host-parcel_dashboard_session=${sessionId}` } });

  it('opening a link (GET, HEAD) changes nothing: a page with a Sign in button, no account data, the usual headers', async () => {
    const accountId = await createAccount(f.pool);
    const path = await linkPath(accountId);
    for (let i = 0; i < 3; i += 1) {
      const head = await f.app.inject({ method: 'HEAD', url: path, remoteAddress: '10.1.0.1' });
      expect(head.statusCode).toBe(200);
      const opened = await f.app.inject({ url: path, remoteAddress: '10.1.0.1' });
      expect(opened.statusCode).toBe(200);
      expect(opened.headers['set-cookie']).toBeUndefined();
      expect(opened.headers['content-security-policy']).toContain("default-src 'none'");
      expect(opened.headers['x-frame-options']).toBe('DENY');
      expect(opened.headers['cache-control']).toBe('no-store');
      expect(opened.body).toMatch(
        new RegExp(`<form method="post" action="${path}"><button type="submit">Sign in</button></form>`),
      );
      expect(opened.body).not.toContain(accountId);
      expect(opened.body).not.toContain('Test merchant');
      expect(opened.body).not.toMatch(/<script(?![^>]*\ssrc=)/);
    }
    const stored = await f.pool.query('SELECT used_at FROM dashboard_sign_in_links WHERE account_id = $1', [accountId]);
    expect(stored.rows[0].used_at).toBeNull();
    expect((await f.pool.query('SELECT 1 FROM dashboard_sessions WHERE account_id = $1', [accountId])).rowCount).toBe(
      0,
    );
    // The button signs in, once.
    const signedIn = await signIn(path, '10.1.0.1');
    expect(signedIn.statusCode).toBe(303);
    expect(signedIn.headers.location).toBe('/dashboard');
    expect((await keysPage(sessionOf(signedIn))).statusCode).toBe(200);
    const again = await signIn(path, '10.1.0.1');
    expect(again.statusCode).toBe(401);
    expect(again.headers['set-cookie']).toBeUndefined();
    expect((await f.app.inject({ url: path, remoteAddress: '10.1.0.1' })).body).toContain(
      'This sign-in link cannot be used',
    );
  });

  it('the post is refused from another site, and the link stays usable', async () => {
    const path = await linkPath();
    for (const headers of [
      { origin: 'https://evil.example' },
      { origin: 'null' },
      { origin: undefined, 'sec-fetch-site': 'cross-site' },
    ]) {
      const forged = await signIn(path, '10.1.0.2', headers);
      expect(forged.statusCode).toBe(403);
      expect(forged.body).toContain('csrf_failed');
      expect(forged.headers['set-cookie']).toBeUndefined();
    }
    expect((await signIn(path, '10.1.0.2')).statusCode).toBe(303);
  });

  it('a new sign-in ends the session the browser presents; sign out everywhere ends every session of the account', async () => {
    const accountId = await createAccount(f.pool);
    const first = sessionOf(await signIn(await linkPath(accountId), '10.1.0.3'));
    const other = sessionOf(await signIn(await linkPath(accountId), '10.1.0.4'));
    const second = sessionOf(
      await signIn(await linkPath(accountId), '10.1.0.3', { cookie: `__Host-parcel_dashboard_session=${first}` }),
    );
    expect((await keysPage(first)).statusCode).toBe(401);
    expect((await keysPage(second)).statusCode).toBe(200);
    expect((await keysPage(other)).statusCode).toBe(200);
    const page = (await keysPage(second)).body;
    expect(page).toContain('Sign out everywhere');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1]!;
    // Another account's session is not touched.
    const stranger = sessionOf(await signIn(await linkPath(), '10.1.0.5'));
    const out = await f.app.inject({
      method: 'POST',
      url: '/dashboard/sign-out-everywhere',
      headers: {
        origin: ORIGIN,
        cookie: `__Host-parcel_dashboard_session=${second}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: `_csrf=${encodeURIComponent(csrf)}`,
    });
    expect(out.statusCode).toBe(303);
    expect(out.headers.location).toBe('/dashboard/sign-in?signed_out=everywhere');
    expect(out.headers['set-cookie']).toBe(
      '__Host-parcel_dashboard_session=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict; Secure',
    );
    expect((await keysPage(second)).statusCode).toBe(401);
    expect((await keysPage(other)).statusCode).toBe(401);
    expect((await keysPage(stranger)).statusCode).toBe(200);
    expect((await f.app.inject({ url: out.headers.location as string })).body).toContain(
      'You are signed out everywhere',
    );
  });

  it('a session ends after 30 minutes without a request, and records requests at most once a minute', async () => {
    const accountId = await createAccount(f.pool);
    const sessionId = sessionOf(await signIn(await linkPath(accountId), '10.1.0.6'));
    const lastSeen = async () =>
      (
        await f.pool.query<{ last_seen_at: Date }>(
          'SELECT last_seen_at FROM dashboard_sessions WHERE account_id = $1',
          [accountId],
        )
      ).rows[0]!.last_seen_at;
    // Seen 20 seconds ago: a request does not write.
    await f.pool.query(
      `UPDATE dashboard_sessions SET last_seen_at = now() - interval '20 seconds' WHERE account_id = $1`,
      [accountId],
    );
    const recent = await lastSeen();
    expect((await keysPage(sessionId)).statusCode).toBe(200);
    expect(await lastSeen()).toEqual(recent);
    // Seen 29 minutes ago: still live, and the request records itself.
    await f.pool.query(
      `UPDATE dashboard_sessions SET last_seen_at = now() - interval '29 minutes' WHERE account_id = $1`,
      [accountId],
    );
    expect((await keysPage(sessionId)).statusCode).toBe(200);
    expect(Date.now() - (await lastSeen()).getTime()).toBeLessThan(60_000);
    // Idle 31 minutes: over, though the 12-hour cap is far.
    await f.pool.query(
      `UPDATE dashboard_sessions SET last_seen_at = now() - interval '31 minutes' WHERE account_id = $1`,
      [accountId],
    );
    expect((await keysPage(sessionId)).statusCode).toBe(401);
  });

  it('an expired link opens nothing', async () => {
    const accountId = await createAccount(f.pool);
    const path = await linkPath(accountId);
    await f.pool.query(
      `UPDATE dashboard_sign_in_links SET expires_at = now() - interval '1 second' WHERE account_id = $1`,
      [accountId],
    );
    const opened = await f.app.inject({ url: path, remoteAddress: '10.0.0.1' });
    expect(opened.statusCode).toBe(401);
    expect(opened.headers['set-cookie']).toBeUndefined();
    expect(opened.body).toContain('This sign-in link cannot be used');
    const posted = await signIn(path, '10.0.0.1');
    expect(posted.statusCode).toBe(401);
    expect(posted.headers['set-cookie']).toBeUndefined();
  });

  it('on an https PUBLIC_URL: a Secure __Host- cookie for the whole host whatever the Host header, and HSTS', async () => {
    const path = await linkPath();
    const opened = await signIn(path, '10.0.0.2', { host: '127.0.0.1' });
    expect(opened.statusCode).toBe(303);
    // __Host-: Secure, Path=/ and no Domain, or a browser refuses it; so no sibling host or http page can plant one.
    expect(opened.headers['set-cookie']).toMatch(
      /^__Host-parcel_dashboard_session=[A-Za-z0-9]{43}; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/,
    );
    expect(opened.headers['set-cookie']).not.toMatch(/Domain=/i);
    // The name without the prefix is not read here: a cookie planted under it opens nothing.
    const planted = await f.app.inject({
      url: '/dashboard/test/keys',
      headers: { cookie: `parcel_dashboard_session=${sessionOf(opened)}` },
    });
    expect(planted.statusCode).toBe(401);
    expect(opened.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
    expect((await f.app.inject({ url: '/healthz' })).headers['strict-transport-security']).toBe(
      'max-age=31536000; includeSubDomains',
    );
    // Neither the link's token nor the session id reaches a log line.
    const sessionId = sessionOf(opened);
    await keysPage(sessionId);
    const logs = lines.join('');
    expect(logs).toContain('/dashboard/sign-in/[redacted]');
    expect(logs).not.toContain(path.split('/').pop()!);
    expect(logs).not.toContain(sessionId);
  });

  it('rate-limits failed link openings and uses per address; working links do not count', async () => {
    const working = await linkPath();
    for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE + 2; i += 1) {
      expect((await f.app.inject({ url: working, remoteAddress: '10.9.9.9' })).statusCode).toBe(200);
    }
    const statuses: number[] = [];
    for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE; i += 1) {
      const url = `/dashboard/sign-in/${'x'.repeat(43)}`;
      statuses.push(
        (i % 2 ? await signIn(url, '10.9.9.9') : await f.app.inject({ url, remoteAddress: '10.9.9.9' })).statusCode,
      );
    }
    expect(statuses).toEqual(Array(SIGN_IN_FAILURES_PER_MINUTE).fill(401));
    const limited = await f.app.inject({ url: `/dashboard/sign-in/${'y'.repeat(43)}`, remoteAddress: '10.9.9.9' });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect((await signIn(`/dashboard/sign-in/${'y'.repeat(43)}`, '10.9.9.9')).statusCode).toBe(429);
    // Another address is not held up.
    expect(
      (await f.app.inject({ url: `/dashboard/sign-in/${'z'.repeat(43)}`, remoteAddress: '10.9.9.8' })).statusCode,
    ).toBe(401);
  });

  it('answers unknown pages and assets under /dashboard with its own pages, with the security headers', async () => {
    const page = await f.app.inject({ url: '/dashboard/nowhere' });
    expect(page.statusCode).toBe(404);
    expect(page.headers['content-type']).toContain('text/html');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect((await f.app.inject({ url: '/dashboard/assets/app-0000000000.css' })).statusCode).toBe(404);
  });
});

/** Local development and tests: plain http on loopback, where a browser refuses a __Host- (Secure) cookie. */
describe('developers page sessions on loopback http', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture();
  });
  afterAll(async () => {
    await f?.close();
  });

  it('sets a cookie without the __Host- prefix, not Secure, on /dashboard, and reads only that name', async () => {
    const link = await createSignInLink(f.pool, {
      accountId: await createAccount(f.pool),
      origin: 'http://127.0.0.1:3000',
    });
    const opened = await f.app.inject({
      method: 'POST',
      url: new URL(link.url).pathname,
      headers: {
        host: '127.0.0.1:3000',
        origin: 'http://127.0.0.1:3000',
        'content-type': 'application/x-www-form-urlencoded',
      },
      payload: '',
    });
    expect(opened.statusCode).toBe(303);
    const cookie = String(opened.headers['set-cookie']);
    expect(cookie).toMatch(
      /^parcel_dashboard_session=[A-Za-z0-9]{43}; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    );
    const sessionId = cookie.split(';')[0]!.split('=')[1]!;
    const page = (name: string) =>
      f.app.inject({ url: '/dashboard/test/keys', headers: { cookie: `${name}=${sessionId}` } });
    expect((await page('parcel_dashboard_session')).statusCode).toBe(200);
    expect((await page('__Host-parcel_dashboard_session')).statusCode).toBe(401);
  });
});
