import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../../api/server';
import { SIGN_IN_ATTEMPTS_PER_MINUTE } from '../../../dashboard/routes/sign-in';
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
    f.app.inject({ method: 'POST', url: '/internal/v1/dashboard/sessions', headers: { authorization: auth }, payload: body as object });

  it('hands out links on PUBLIC_URL, behind the internal token, for accounts that exist', async () => {
    const accountId = await createAccount(f.pool);
    const created = await createLink({ account_id: accountId });
    expect(created.statusCode).toBe(201);
    expect(created.json().url).toMatch(/^https:\/\/hooks\.parcel\.example\/dashboard\/sign-in\/[A-Za-z0-9]{43}$/);
    expect((await createLink({ account_id: accountId }, 'Bearer wrong-token-wrong-token')).json().error.code).toBe('invalid_internal_token');
    const missing = await createLink({ account_id: 'acct_nobody' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('resource_missing');
    expect((await createLink({ account_id: accountId, extra: 1 })).json().error.code).toBe('parameter_unknown');
    // Only hashes are stored.
    const stored = await f.pool.query('SELECT token_hash FROM dashboard_sign_in_links WHERE account_id = $1', [accountId]);
    expect(stored.rows[0].token_hash).toHaveLength(32);
  });

  it('an expired link opens nothing', async () => {
    const accountId = await createAccount(f.pool);
    const url = new URL((await createLink({ account_id: accountId })).json().url);
    await f.pool.query(`UPDATE dashboard_sign_in_links SET expires_at = now() - interval '1 second' WHERE account_id = $1`, [accountId]);
    const opened = await f.app.inject({ url: url.pathname, remoteAddress: '10.0.0.1' });
    expect(opened.statusCode).toBe(401);
    expect(opened.headers['set-cookie']).toBeUndefined();
    expect(opened.body).toContain('This sign-in link cannot be used');
  });

  it('sets a Secure cookie on anything but loopback http', async () => {
    const accountId = await createAccount(f.pool);
    const url = new URL((await createLink({ account_id: accountId })).json().url);
    const opened = await f.app.inject({ url: url.pathname, headers: { host: 'hooks.parcel.example' }, remoteAddress: '10.0.0.2' });
    expect(opened.statusCode).toBe(200);
    expect(opened.headers['set-cookie']).toMatch(/^parcel_dashboard_session=[A-Za-z0-9]{43}; Path=\/dashboard; Max-Age=43200; HttpOnly; SameSite=Strict; Secure$/);
    // Neither the link's token nor the session id reaches a log line.
    const sessionId = String(opened.headers['set-cookie']).split(';')[0]!.split('=')[1]!;
    await f.app.inject({ url: '/dashboard/test/keys', headers: { cookie: `parcel_dashboard_session=${sessionId}` } });
    const logs = lines.join('');
    expect(logs).toContain('/dashboard/sign-in/[redacted]');
    expect(logs).not.toContain(url.pathname.split('/').pop()!);
    expect(logs).not.toContain(sessionId);
  });

  it('rate-limits link openings per address', async () => {
    const statuses: number[] = [];
    for (let i = 0; i <= SIGN_IN_ATTEMPTS_PER_MINUTE; i += 1) {
      statuses.push((await f.app.inject({ url: `/dashboard/sign-in/${'x'.repeat(43)}`, remoteAddress: '10.9.9.9' })).statusCode);
    }
    expect(statuses.slice(0, SIGN_IN_ATTEMPTS_PER_MINUTE).every((status) => status === 401)).toBe(true);
    const limited = await f.app.inject({ url: `/dashboard/sign-in/${'y'.repeat(43)}`, remoteAddress: '10.9.9.9' });
    expect(limited.statusCode).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    // Another address is not held up.
    expect((await f.app.inject({ url: `/dashboard/sign-in/${'z'.repeat(43)}`, remoteAddress: '10.9.9.8' })).statusCode).toBe(401);
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
