import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids';
import { markDeliverySkipped } from '../../../src/db/deliveries';
import { insertExpiry } from '../../../src/db/delivery-attempts';
import { softDeleteEndpoint, updateEndpoint } from '../../../src/db/endpoints';
import { createPool, type Pool } from '../../../src/db/pool';
import { testDatabaseUrl } from '../../helpers/database';
import { publishedToOneEndpoint } from '../../helpers/delivery';
import { dbSecond as dbSecondOf, freshSecond as freshSecondOf } from '../../helpers/db-clock';
import { createAccount } from '../../helpers/fixtures';

interface Token {
  wait_until_ms: number | null;
  reserved_second: number | null;
  granted_second: number | null;
}

const PLACES = 1000;

/**
 * Rate-limit places given back: a place held by a delivery that will never post in it (skipped, given up at its
 * max age, or its endpoint deleted, disabled or re-limited) is released, so the next delivery takes the earliest
 * free second again instead of queueing behind a thousand seconds nobody redeems.
 */
describe('rate places given back', () => {
  let pool: Pool;
  let accountId: string;
  let endpointId: string;
  let eventId: string;
  let deliveryId: string;
  const scope = () => ({ accountId, livemode: false });

  beforeAll(() => {
    pool = createPool(testDatabaseUrl());
  });
  afterAll(async () => {
    await pool?.end();
  });
  beforeEach(async () => {
    accountId = await createAccount(pool);
    const published = await publishedToOneEndpoint(pool, accountId);
    ({ endpointId, eventId } = published);
    deliveryId = published.input.deliveryId!;
    await pool.query('UPDATE webhook_endpoints SET rate_limit = 1 WHERE id = $1', [endpointId]);
  });

  /** A token or a place as an attempt asks for one (take_rate_token, as in the attempt's read). */
  async function take(limit: number | null = 1): Promise<Token> {
    const { rows } = await pool.query<Token>('SELECT * FROM take_rate_token($1, $2, NULL, NULL, true, 1000)', [
      endpointId,
      limit,
    ]);
    return rows[0]!;
  }
  const dbSecond = () => dbSecondOf(pool);
  /** `PLACES` places taken one after the other at a limit of 1 a second: seconds now+1 .. now+PLACES-1 and beyond. */
  async function takePlaces(): Promise<number[]> {
    const { rows } = await pool.query<{ s: string | null }>(
      `SELECT (take_rate_token($1, 1, NULL, NULL, true, 1000)).reserved_second AS s FROM generate_series(1, $2)`,
      [endpointId, PLACES],
    );
    return rows
      .map((r) => r.s)
      .filter((s): s is string => s !== null)
      .map(Number);
  }
  /** The second the next attempt posts in: its token's, or its place's. */
  async function nextSecond(): Promise<number> {
    const t = await take();
    return Number(t.granted_second ?? t.reserved_second);
  }
  /** Places of seconds to come still counted for the endpoint. */
  async function placesAhead(): Promise<number> {
    const { rows } = await pool.query<{ n: string }>(
      `SELECT coalesce(sum(taken), 0) AS n FROM endpoint_rate_tokens
        WHERE endpoint_id = $1 AND second > floor(extract(epoch FROM clock_timestamp()))`,
      [endpointId],
    );
    return Number(rows[0]!.n);
  }
  /** Places taken in `first` and every second after it: a count no second boundary changes. */
  async function placesFrom(first: number): Promise<number> {
    const { rows } = await pool.query<{ n: string }>(
      'SELECT coalesce(sum(taken), 0) AS n FROM endpoint_rate_tokens WHERE endpoint_id = $1 AND second >= $2',
      [endpointId, first],
    );
    return Number(rows[0]!.n);
  }

  /** Deliveries (and, with `events`, each its own event) copied from the published one, pending. */
  async function moreDeliveries(n: number, events: boolean): Promise<Array<{ eventId: string; deliveryId: string }>> {
    const ids = Array.from({ length: n }, () => ({
      eventId: events ? newId('event') : eventId,
      deliveryId: newId('delivery'),
    }));
    if (events) {
      await pool.query(
        `INSERT INTO events
         SELECT (jsonb_populate_record(NULL::events, to_jsonb(e) || jsonb_build_object('id', x.id))).*
           FROM events e, unnest($2::text[]) AS x(id) WHERE e.id = $1`,
        [eventId, ids.map((i) => i.eventId)],
      );
    }
    await pool.query(
      `INSERT INTO deliveries
       SELECT (jsonb_populate_record(NULL::deliveries,
                 to_jsonb(d) || jsonb_build_object('id', x.id, 'event_id', x.event_id, 'trigger', 'resend'))).*
         FROM deliveries d, unnest($2::text[], $3::text[]) AS x(id, event_id) WHERE d.id = $1`,
      [deliveryId, ids.map((i) => i.deliveryId), ids.map((i) => i.eventId)],
    );
    return ids;
  }

  it('a thousand places queue the next delivery a thousand seconds ahead while they are held', async () => {
    const places = await takePlaces();
    expect(places.length).toBeGreaterThanOrEqual(PLACES - 2);
    expect((await nextSecond()) - (await dbSecond())).toBeGreaterThanOrEqual(PLACES - 2);
  });

  it('gives back the places of deliveries skipped, and the next delivery posts at once', async () => {
    const places = await takePlaces();
    const held = await moreDeliveries(places.length, false);
    const ref = (i: number) => ({ ...held[i]!, endpointId, reservedSecond: places[i]! });
    for (let i = 0; i < places.length; i++) await markDeliverySkipped(pool, ref(i), 'account_suspended');
    expect(await placesAhead()).toBe(0);
    expect((await nextSecond()) - (await dbSecond())).toBeLessThanOrEqual(1);
  });

  /** The give-up of delivery `i` of `held` at its max age, which held place `places[i]`. */
  const expiry = (held: Array<{ eventId: string; deliveryId: string }>, places: number[], i: number) => ({
    id: `dlv_expiry${i}${held[i]!.deliveryId.slice(4)}`,
    endpointId,
    eventId: held[i]!.eventId,
    eventType: 'parcel.delivered',
    accountId,
    livemode: false,
    attempt: 1,
    deliveryId: held[i]!.deliveryId,
    finalAttempt: false,
    reservedSecond: places[i]!,
  });

  it('gives back the places of deliveries given up at their max age, and the next delivery posts at once', async () => {
    const places = await takePlaces();
    const held = await moreDeliveries(places.length, true);
    const record = (i: number) => expiry(held, places, i);
    for (let i = 0; i < places.length; i++) await insertExpiry(pool, record(i));
    expect(await placesAhead()).toBe(0);
    expect((await nextSecond()) - (await dbSecond())).toBeLessThanOrEqual(1);
  });

  it('gives a place back once however often its skip or give-up is written', async () => {
    const places = await takePlaces();
    const held = await moreDeliveries(2, true);
    // Places inside the queue, well ahead of the clock, so each is still to come when it is given back.
    const at = [places[500]!, places[600]!];
    const skipped = { ...held[0]!, endpointId, reservedSecond: at[0]! };
    const expired = expiry(held, at, 1);
    for (let i = 0; i < 3; i++) {
      await markDeliverySkipped(pool, skipped, 'account_suspended');
      await insertExpiry(pool, expired);
    }
    expect(await placesFrom(places[0]!)).toBe(places.length - 2);
  });

  it('gives back a place in the middle of the queue without moving the places behind it', async () => {
    const places = await takePlaces();
    const [delivery] = await moreDeliveries(1, false);
    await markDeliverySkipped(pool, { ...delivery!, endpointId, reservedSecond: places[10]! }, 'account_suspended');
    expect(await placesFrom(places[0]!)).toBe(places.length - 1);
    // The tail stays where it was: the next delivery still queues behind the places held.
    expect(await nextSecond()).toBe(places.at(-1)! + 1);
  });

  it('deletes the rows of a deleted endpoint with it', async () => {
    await takePlaces();
    expect(await softDeleteEndpoint(pool, scope(), endpointId)).toBe(true);
    const rows = async (table: string) =>
      Number(
        (await pool.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE endpoint_id = $1`, [endpointId]))
          .rows[0]!.n,
      );
    expect(await rows('endpoint_rate_tokens')).toBe(0);
    expect(await rows('endpoint_rate_queues')).toBe(0);
  });

  it('gives back every place of an endpoint disabled, and once enabled again its next delivery posts at once', async () => {
    await takePlaces();
    await updateEndpoint(pool, scope(), endpointId, { disabled: true });
    await updateEndpoint(pool, scope(), endpointId, { disabled: false });
    expect(await placesAhead()).toBe(0);
    expect((await nextSecond()) - (await dbSecond())).toBeLessThanOrEqual(1);
  });

  it('gives back every place of an endpoint whose rate_limit changes, and its next delivery posts at once', async () => {
    await takePlaces();
    await updateEndpoint(pool, scope(), endpointId, { settings: { rate_limit: 2 } });
    expect(await placesAhead()).toBe(0);
    expect((await nextSecond()) - (await dbSecond())).toBeLessThanOrEqual(1);
  });

  it('gives back every place of an endpoint whose rate_limit is removed', async () => {
    await takePlaces();
    await updateEndpoint(pool, scope(), endpointId, { settings: { rate_limit: null } });
    await updateEndpoint(pool, scope(), endpointId, { settings: { rate_limit: 1 } });
    expect(await placesAhead()).toBe(0);
    expect((await nextSecond()) - (await dbSecond())).toBeLessThanOrEqual(1);
  });

  it('keeps the queue of an endpoint updated without a change of its limit', async () => {
    await takePlaces();
    // The whole queue, read before and after: comparing counts of places still ahead would race the clock.
    const queue = async () =>
      (
        await pool.query<{ second: string; taken: number }>(
          'SELECT second, taken FROM endpoint_rate_tokens WHERE endpoint_id = $1 ORDER BY second',
          [endpointId],
        )
      ).rows;
    const before = await queue();
    expect(before.length).toBeGreaterThan(900);
    await updateEndpoint(pool, scope(), endpointId, { settings: { rate_limit: 1, description: 'same limit' } });
    expect(await queue()).toEqual(before);
  });

  const freshSecond = () => freshSecondOf(pool);
  const countsOf = async (second: number) =>
    (
      await pool.query<{ taken: number; granted: number }>(
        'SELECT taken, granted FROM endpoint_rate_tokens WHERE endpoint_id = $1 AND second = $2',
        [endpointId, second],
      )
    ).rows[0];

  it('keeps the tokens the current second handed out, to attempts that may be posting with them', async () => {
    await takePlaces();
    const now = await freshSecond();
    // Two tokens handed out in this second (two attempts posting now) and one place of it not yet redeemed.
    await pool.query(
      `INSERT INTO endpoint_rate_tokens (endpoint_id, second, taken, granted) VALUES ($1, $2, 3, 2)
       ON CONFLICT (endpoint_id, second) DO UPDATE SET taken = 3, granted = 2`,
      [endpointId, now],
    );
    await updateEndpoint(pool, scope(), endpointId, { settings: { rate_limit: 2 } });
    expect(await countsOf(now)).toEqual({ taken: 2, granted: 2 });
    // The second's tokens are spent at the new limit too: the next delivery takes the next second.
    expect(await nextSecond()).toBe(now + 1);
  });

  it('gives back nothing for a place whose second has come: its token may be posting', async () => {
    await takePlaces();
    const now = await freshSecond();
    await pool.query(
      `INSERT INTO endpoint_rate_tokens (endpoint_id, second, taken, granted) VALUES ($1, $2, 1, 1)
       ON CONFLICT (endpoint_id, second) DO UPDATE SET taken = 1, granted = 1`,
      [endpointId, now],
    );
    const [delivery] = await moreDeliveries(1, false);
    await markDeliverySkipped(pool, { ...delivery!, endpointId, reservedSecond: now }, 'account_suspended');
    expect(await countsOf(now)).toEqual({ taken: 1, granted: 1 });
  });
});
