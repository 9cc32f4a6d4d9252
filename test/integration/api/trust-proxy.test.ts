import { describe, expect, it } from 'vitest';
import { SIGN_IN_FAILURES_PER_MINUTE } from '../../../src/dashboard/routes/sign-in';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { createAccount } from '../../helpers/fixtures';

/** TRUST_PROXY: which hops' X-Forwarded-For names the client that rate limits count. */
describe('behind a proxy', () => {
  const PROXY = '10.20.0.1';
  const guess = bearer(`svc_test_${'p'.repeat(32)}`);
  /** One unauthenticated API request's status, from `remoteAddress`, naming `forwardedFor` when given. */
  const status = async (f: ApiFixture, remoteAddress: string, forwardedFor?: string) => {
    const headers = forwardedFor ? { ...guess, 'x-forwarded-for': forwardedFor } : guess;
    return (await f.app.inject({ url: '/v1/towns', headers, remoteAddress })).statusCode;
  };
  /** Four unauthenticated API requests from one client: the last is over a budget of 3. */
  const burst = async (f: ApiFixture, remoteAddress: string, forwardedFor?: string) => {
    const statuses: number[] = [];
    for (let i = 0; i < 4; i += 1) statuses.push(await status(f, remoteAddress, forwardedFor));
    return statuses;
  };
  const LIMITED = [401, 401, 401, 429];

  it('trusted: each client behind the proxy has its own API budget, and the proxy itself is not a client', async () => {
    const f = await apiFixture({ env: { TRUST_PROXY: `${PROXY}, 10.30.0.0/16`, API_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      expect(await burst(f, PROXY, '203.0.113.1')).toEqual(LIMITED);
      // Another client through the same proxy: its own bucket.
      expect(await burst(f, PROXY, '203.0.113.2')).toEqual(LIMITED);
      // Through a second trusted hop (CIDR) the same client is the same bucket.
      expect(await status(f, PROXY, '203.0.113.1, 10.30.4.5')).toBe(429);
      // A client reaching the API directly cannot claim someone else's address: its own address counts.
      expect(await burst(f, '198.51.100.7', '203.0.113.9')).toEqual(LIMITED);
      expect(await status(f, PROXY, '203.0.113.9')).toBe(401);
    } finally {
      await f.close();
    }
  });

  it("untrusted (the default): X-Forwarded-For is ignored, the connection's address counts", async () => {
    const f = await apiFixture({ env: { API_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      expect(await burst(f, PROXY, '203.0.113.1')).toEqual(LIMITED);
      const other = await f.app.inject({
        url: '/v1/towns',
        headers: { ...guess, 'x-forwarded-for': '203.0.113.2' },
        remoteAddress: PROXY,
      });
      expect(other.statusCode).toBe(429);
    } finally {
      await f.close();
    }
  });

  it('a hop count trusts that many hops nearest the API', async () => {
    const f = await apiFixture({ env: { TRUST_PROXY: '1', API_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      expect(await burst(f, PROXY, '203.0.113.1')).toEqual(LIMITED);
      expect(await burst(f, PROXY, '192.0.2.1, 203.0.113.2')).toEqual(LIMITED);
      // Two hops would be needed to believe the leftmost address: the second bucket is 203.0.113.2's.
      expect(await status(f, PROXY, '192.0.2.9, 203.0.113.2')).toBe(429);
    } finally {
      await f.close();
    }
  });

  it('IPv6 clients share one budget per /64, and an IPv4-mapped address counts as its IPv4 address', async () => {
    const f = await apiFixture({ env: { TRUST_PROXY: PROXY, API_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      expect(await status(f, PROXY, '2001:db8:7:1::1')).toBe(401);
      expect(await status(f, PROXY, '2001:db8:7:1::2')).toBe(401);
      expect(await status(f, PROXY, '2001:db8:7:1:aaaa:bbbb:cccc:dddd')).toBe(401);
      expect(await status(f, PROXY, '2001:db8:7:1::4')).toBe(429);
      // The neighbouring /64 is another subscriber: its own budget.
      expect(await status(f, PROXY, '2001:db8:7:2::1')).toBe(401);
      expect(await burst(f, PROXY, '203.0.113.40')).toEqual(LIMITED);
      expect(await status(f, PROXY, '::ffff:203.0.113.40')).toBe(429);
    } finally {
      await f.close();
    }
  });

  it('the sign-in limit counts each client behind a trusted proxy, and ignores the header otherwise', async () => {
    const bad = `/dashboard/sign-in/${'q'.repeat(43)}`;
    const open = (f: ApiFixture, forwardedFor: string) =>
      f.app.inject({ url: bad, headers: { 'x-forwarded-for': forwardedFor }, remoteAddress: PROXY });
    const trusted = await apiFixture({ env: { TRUST_PROXY: PROXY } });
    const untrusted = await apiFixture();
    try {
      for (const f of [trusted, untrusted]) {
        for (let i = 0; i < SIGN_IN_FAILURES_PER_MINUTE; i += 1)
          expect((await open(f, '203.0.113.1')).statusCode).toBe(401);
        expect((await open(f, '203.0.113.1')).statusCode).toBe(429);
      }
      expect((await open(trusted, '203.0.113.2')).statusCode).toBe(401);
      expect((await open(untrusted, '203.0.113.2')).statusCode).toBe(429);
    } finally {
      await trusted.close();
      await untrusted.close();
    }
  });

  it('without PUBLIC_URL the cookie is Secure only when a trusted proxy says the request came over https', async () => {
    const token = 'internal-token-for-proxy-tests-0123456789';
    // The page's origin as the browser sees it: what the proxy says when trusted, else the connection's own.
    for (const [env, proto, origin, secure] of [
      [{ TRUST_PROXY: PROXY }, 'https', 'https://hooks.parcel.example', true],
      [{ TRUST_PROXY: PROXY }, 'http', 'http://hooks.parcel.example', false],
      [{}, 'https', 'http://hooks.parcel.example', false],
    ] as const) {
      const f = await apiFixture({ env: { ...env, INTERNAL_API_TOKEN: token } });
      try {
        const accountId = await createAccount(f.pool);
        const link = await f.app.inject({
          method: 'POST',
          url: '/internal/v1/dashboard/sessions',
          headers: { authorization: `Bearer ${token}` },
          payload: { account_id: accountId },
        });
        const path = new URL(link.json().url).pathname;
        const signedIn = await f.app.inject({
          method: 'POST',
          url: path,
          remoteAddress: PROXY,
          headers: {
            host: 'hooks.parcel.example',
            origin,
            'x-forwarded-proto': proto,
            'content-type': 'application/x-www-form-urlencoded',
          },
          payload: '',
        });
        expect(signedIn.statusCode, JSON.stringify(env) + proto).toBe(303);
        expect(String(signedIn.headers['set-cookie']).endsWith('; Secure'), JSON.stringify(env) + proto).toBe(secure);
        expect(signedIn.headers['strict-transport-security']).toBeUndefined();
      } finally {
        await f.close();
      }
    }
  });
});
