import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UNKNOWN_SESSIONS_PER_MINUTE } from '../../../src/dashboard/guard';
import { SESSION_COOKIE } from '../../../src/dashboard/session';
import { apiFixture, type ApiFixture } from '../../helpers/api';

/** Guessed session cookies: each costs a lookup, so an address has only so many a minute. */
describe('unknown session cookies', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture({ env: { TRUST_PROXY: '10.20.0.1' } });
  });
  afterAll(async () => {
    await f?.close();
  });

  const guess = (i: number, client: string) =>
    f.app.inject({
      url: '/dashboard/test/endpoints',
      remoteAddress: '10.20.0.1',
      headers: {
        cookie: `${SESSION_COOKIE}=${String(i).padStart(43, 'g')}`,
        'x-forwarded-for': client,
      },
    });

  it('past the allowance an address gets the sign-in page (429) without a database query', async () => {
    for (let i = 0; i < UNKNOWN_SESSIONS_PER_MINUTE; i += 1)
      expect((await guess(i, '2001:db8:9:1::1')).statusCode).toBe(401);
    const queries = vi.spyOn(f.pool, 'query');
    const connects = vi.spyOn(f.pool, 'connect');
    try {
      // Another address of the same /64: the same client.
      const refused = await guess(99, '2001:db8:9:1::2');
      expect(refused.statusCode).toBe(429);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(refused.body).toContain('Too many sign-in attempts');
      expect(queries).not.toHaveBeenCalled();
      expect(connects).not.toHaveBeenCalled();
      // Another client still has its own allowance, and its guess is looked up.
      expect((await guess(100, '203.0.113.50')).statusCode).toBe(401);
      expect(queries.mock.calls.length + connects.mock.calls.length).toBeGreaterThan(0);
    } finally {
      queries.mockRestore();
      connects.mockRestore();
    }
  });
});
