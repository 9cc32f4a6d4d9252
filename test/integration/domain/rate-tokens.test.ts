import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadDeliveryContext } from '../../../src/attempt';
import { createPool, type Pool } from '../../../src/db/pool';
import { publishedToOneEndpoint } from '../../helpers/delivery';
import { dbSecond as dbSecondOf, freshSecond as freshSecondOf } from '../../helpers/db-clock';
import { createAccount } from '../../helpers/fixtures';
import { testDatabaseUrl } from '../../helpers/database';
import { waitFor } from '../../helpers/wait';

interface Token {
  wait_until_ms: number | null;
  reserved_second: number | null;
  granted_second: number | null;
}

/**
 * The rate tokens (take_rate_token, asked in the attempt's read): counted per endpoint per clock second of the
 * database as they are handed out; a throttled attempt holds a place in the queue (the earliest second with room),
 * redeemed in that second or, when it asks late, in the first second with a token left.
 */
describe('rate tokens', () => {
  let pool: Pool;
  beforeAll(() => {
    pool = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await pool?.end();
  });

  const endpoint = () => `we_tok${randomUUID().replace(/-/g, '').slice(0, 16)}`;
  /** Whole-second usable window: the test decides seconds, not the clock's position within one. */
  async function take(
    id: string,
    limit: number | null,
    options: { reserved?: number; reserve?: boolean; notBefore?: string } = {},
  ): Promise<Token> {
    const { rows } = await pool.query<Token>('SELECT * FROM take_rate_token($1, $2, $3::timestamptz, $4, $5, 1000)', [
      id,
      limit,
      options.notBefore ?? null,
      options.reserved ?? null,
      options.reserve ?? true,
    ]);
    return rows[0]!;
  }
  const dbSecond = () => dbSecondOf(pool);
  /** The answer to a take given a place in `second`, told to ask again `offsetMs` into it. */
  const placed = (second: number, offsetMs = 0): Token => ({
    wait_until_ms: second * 1000 + offsetMs,
    reserved_second: second,
    granted_second: null,
  });
  /** The answer to a take granted a token of `second`. */
  const grantedIn = (second: number): Token => ({ wait_until_ms: null, reserved_second: null, granted_second: second });
  const freshSecond = () => freshSecondOf(pool);

  it('hands out the limit in the current second, then reserves the earliest later second with room', async () => {
    const id = endpoint();
    const now = await freshSecond();
    expect(await take(id, 2)).toEqual(grantedIn(now));
    expect(await take(id, 2)).toEqual(grantedIn(now));
    expect(await take(id, 2)).toEqual(placed(now + 1));
    // The second reservation of a second wakes later within it (half the usable window spread over the limit).
    expect(await take(id, 2)).toEqual(placed(now + 1, 250));
    expect(await take(id, 2)).toEqual(placed(now + 2));
    // Asking again before its second comes keeps the same reservation and counts nothing more.
    expect(await take(id, 2, { reserved: now + 2 })).toEqual(placed(now + 2));
    // The early attempt reserves nothing: it learns when room comes, and leaves it.
    expect(await take(id, 2, { reserve: false })).toEqual({
      wait_until_ms: (now + 2) * 1000,
      reserved_second: null,
      granted_second: null,
    });
    const { rows } = await pool.query(
      'SELECT second, taken FROM endpoint_rate_tokens WHERE endpoint_id = $1 ORDER BY second',
      [id],
    );
    expect(rows.map((r) => [Number(r.second) - now, r.taken])).toEqual([
      [0, 2],
      [1, 2],
      [2, 1],
    ]);
  });

  it('redeems a place in its own second without taking a place again', async () => {
    const id = endpoint();
    const now = await freshSecond();
    expect(await take(id, 1, { reserved: now })).toEqual(grantedIn(now));
    const { rows } = await pool.query(
      'SELECT second, taken, granted FROM endpoint_rate_tokens WHERE endpoint_id = $1',
      [id],
    );
    expect(rows.map((r) => [Number(r.second) - now, r.taken, r.granted])).toEqual([[0, 0, 1]]);
  });

  it('grants a place that comes due late in the second it asks in, ahead of attempts without one', async () => {
    const id = endpoint();
    const now = await freshSecond();
    // Woken seconds after its place (a busy worker): it posts now, and keeps its place in the queue.
    expect(await take(id, 2, { reserved: now - 5 })).toEqual(grantedIn(now));
    // A newcomer gets the second's last token; the next newcomer queues behind.
    expect(await take(id, 2)).toEqual(grantedIn(now));
    expect(await take(id, 2)).toEqual(placed(now + 1));
    // The second's tokens are gone: a due place is not lost, nor sent to the back of the queue; it is asked
    // again early in the coming seconds, at most `limit` such asks a second, spread as reservations are.
    expect(await take(id, 2, { reserved: now - 4 })).toEqual(placed(now + 1));
    expect(await take(id, 2, { reserved: now - 4 })).toEqual(placed(now + 1, 250));
    expect(await take(id, 2, { reserved: now - 4 })).toEqual(placed(now + 2));
    const { rows } = await pool.query(
      'SELECT second, taken, granted, deferred FROM endpoint_rate_tokens WHERE endpoint_id = $1 ORDER BY second',
      [id],
    );
    expect(rows.map((r) => [Number(r.second) - now, r.taken, r.granted, r.deferred])).toEqual([
      [0, 1, 2, 0],
      [1, 1, 0, 2],
      [2, 0, 0, 1],
    ]);
  });

  it('never hands out more than the limit in a second, however many places come due in it', async () => {
    const id = endpoint();
    const now = await freshSecond();
    const asks = await Promise.all(Array.from({ length: 12 }, (_, i) => take(id, 3, { reserved: now - 1 - (i % 4) })));
    expect(asks.filter((t) => t.granted_second === now)).toHaveLength(3);
    // Nobody lost a place: every other ask is told when to ask again, early in a coming second.
    for (const t of asks.filter((a) => a.granted_second === null)) {
      expect(t.reserved_second).toBeGreaterThan(now);
      expect(t.wait_until_ms).toBeLessThan(t.reserved_second! * 1000 + 500);
    }
  });

  it('a backlog whose wake-ups all come seconds late still drains at the limit, in place, with no token lost', async () => {
    const id = endpoint();
    const limit = 4;
    await freshSecond();
    // Three seconds' worth of attempts ask at once: the first second's share posts, the rest get places.
    const first = await Promise.all(Array.from({ length: 3 * limit }, () => take(id, limit)));
    const placed = first.filter((t) => t.reserved_second !== null);
    expect(placed.length).toBeGreaterThanOrEqual(2 * limit);
    // Every waiter wakes late: after its place's second is over (a worker or a Temporal server too busy).
    const lastPlace = Math.max(...placed.map((t) => t.reserved_second!));
    await waitFor(async () => (await dbSecond()) > lastPlace, { intervalMs: 100, what: 'the places to pass' });
    let waiting = placed.map((t) => ({ reserved: t.reserved_second!, untilMs: 0 }));
    const granted: number[] = [];
    await waitFor(
      async () => {
        const nowMs = Date.now();
        const due = waiting.filter((w) => w.untilMs <= nowMs);
        const answers = await Promise.all(due.map((w) => take(id, limit, { reserved: w.reserved })));
        waiting = waiting.filter((w) => !due.includes(w));
        answers.forEach((a) => {
          if (a.granted_second !== null) granted.push(a.granted_second);
          else waiting.push({ reserved: a.reserved_second!, untilMs: a.wait_until_ms! });
        });
        return waiting.length === 0;
      },
      { timeoutMs: 30_000, intervalMs: 50, what: 'every late waiter to be granted' },
    );
    // Every late waiter posted (none was sent to the back of the queue, which would take a new place), and no
    // second handed out more than the limit.
    expect(granted).toHaveLength(placed.length);
    const { rows } = await pool.query<{ taken: number; granted: number }>(
      'SELECT coalesce(sum(taken), 0)::int AS taken, coalesce(max(granted), 0)::int AS granted FROM endpoint_rate_tokens WHERE endpoint_id = $1',
      [id],
    );
    expect(rows[0]).toEqual({ taken: 3 * limit, granted: limit });
  });

  it('holds every attempt until not_before (Retry-After), with or without a limit, and never counts without one', async () => {
    const id = endpoint();
    const now = await freshSecond();
    const notBefore = new Date((now + 5) * 1000 + 250).toISOString();
    expect(await take(id, null, { notBefore })).toEqual({
      wait_until_ms: (now + 5) * 1000 + 250,
      reserved_second: null,
      granted_second: null,
    });
    expect(await take(id, 3, { notBefore })).toEqual(placed(now + 6));
    expect(await take(id, null)).toEqual({ wait_until_ms: null, reserved_second: null, granted_second: null });
    const { rows } = await pool.query('SELECT second FROM endpoint_rate_tokens WHERE endpoint_id = $1', [id]);
    expect(rows.map((r) => Number(r.second) - now)).toEqual([6]);
  });

  it('queues places behind the tail of the queue, or from not_before when that lies beyond it', async () => {
    const id = endpoint();
    const now = await freshSecond();
    for (let i = 0; i < 4; i++) await take(id, 2);
    // Seconds now and now+1 are full: the fifth place opens now+2.
    expect((await take(id, 2)).reserved_second).toBe(now + 2);
    const notBefore = new Date((now + 10) * 1000).toISOString();
    expect((await take(id, 2, { notBefore })).reserved_second).toBe(now + 10);
    // The queue's tail moved with it: later places follow it, not the gap before it.
    expect((await take(id, 2)).reserved_second).toBe(now + 10);
    expect((await take(id, 2)).reserved_second).toBe(now + 11);
    const { rows } = await pool.query('SELECT place_second, places FROM endpoint_rate_queues WHERE endpoint_id = $1', [
      id,
    ]);
    expect(rows.map((r) => [Number(r.place_second) - now, r.places])).toEqual([[11, 1]]);
  });

  it('a take visits as many rows at 100,000 queued places as at an empty queue', async () => {
    const limit = 50;
    const empty = endpoint();
    const deep = endpoint();
    const now = await dbSecond();
    // 100,000 places, 2,000 full seconds from the next one on, as takes leave them: a row per second and the tail.
    const seconds = 100_000 / limit;
    await pool.query(
      `INSERT INTO endpoint_rate_tokens (endpoint_id, second, taken) SELECT $1, $2::bigint + s, $3 FROM generate_series(1, $4::int) s`,
      [deep, now, limit, seconds],
    );
    await pool.query('INSERT INTO endpoint_rate_queues VALUES ($1, $2, $3, 0, 0)', [deep, now + seconds, limit]);
    // Plans of the function's statements are cached per connection: warm them on a third endpoint first.
    const client = await pool.connect();
    try {
      /** Shared pages the takes touch, as EXPLAIN (ANALYZE, BUFFERS) counts them for each take. */
      const pagesOf = async (id: string, takes: number) => {
        let pages = 0;
        for (let i = 0; i < takes; i++) {
          const { rows } = await client.query<{ 'QUERY PLAN': [{ Plan: Record<string, number> }] }>(
            `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) SELECT * FROM take_rate_token($1, $2, null, null, true, 500)`,
            [id, limit],
          );
          const plan = rows[0]!['QUERY PLAN'][0].Plan;
          pages += (plan['Shared Hit Blocks'] ?? 0) + (plan['Shared Read Blocks'] ?? 0);
        }
        return pages;
      };
      await pagesOf(endpoint(), 3 * limit);
      const atEmpty = await pagesOf(empty, 3 * limit);
      const atDeep = await pagesOf(deep, 3 * limit);
      expect(atDeep).toBeLessThanOrEqual(2 * atEmpty);
    } finally {
      client.release();
    }
    // The queue is real to the function: the next place is the one after the 100,000th (and the 150 just taken).
    expect((await take(deep, limit)).reserved_second).toBe(now + seconds + 4);
  });

  it('deletes seconds long past when it opens a new one', async () => {
    const id = endpoint();
    const now = await dbSecond();
    await pool.query('INSERT INTO endpoint_rate_tokens (endpoint_id, second, taken) VALUES ($1, $2, 5), ($1, $3, 5)', [
      id,
      now - 600,
      now - 10,
    ]);
    await take(id, 5);
    const { rows } = await pool.query(
      'SELECT second FROM endpoint_rate_tokens WHERE endpoint_id = $1 ORDER BY second',
      [id],
    );
    expect(rows.map((r) => Number(r.second) - now).filter((s) => s < -1)).toEqual([-10]);
  });

  it("an endpoint without a limit or Retry-After takes no token and writes nothing in the attempt's read", async () => {
    const accountId = await createAccount(pool);
    const { endpointId, eventId, input } = await publishedToOneEndpoint(pool, accountId);
    const token = { reserve: true, usableMs: 1000 };
    const context = await loadDeliveryContext(pool, endpointId, eventId, undefined, undefined, input.deliveryId, token);
    expect(context?.throttled).toBeUndefined();
    expect(context?.token).toBeUndefined();
    expect(
      (await pool.query('SELECT count(*)::int AS n FROM endpoint_rate_tokens WHERE endpoint_id = $1', [endpointId]))
        .rows[0].n,
    ).toBe(0);

    await pool.query('UPDATE webhook_endpoints SET rate_limit = 1 WHERE id = $1', [endpointId]);
    const first = await loadDeliveryContext(pool, endpointId, eventId, undefined, undefined, input.deliveryId, token);
    const second = await loadDeliveryContext(pool, endpointId, eventId, undefined, undefined, input.deliveryId, token);
    const taken = [first, second].filter((c) => c?.token !== undefined).length;
    const throttled = [first, second].filter((c) => c?.throttled !== undefined).length;
    // One second's one token, unless the clock ticked between the two reads.
    expect(taken + throttled).toBe(2);
    expect(taken).toBeGreaterThanOrEqual(1);
  });
});
