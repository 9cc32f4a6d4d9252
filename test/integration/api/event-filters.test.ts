import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids';
import type { Pool } from '../../../src/db/pool';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccountWithKey } from '../../helpers/fixtures';

type Merchant = Awaited<ReturnType<typeof createAccountWithKey>>;
type Status = 'pending' | 'succeeded' | 'failed' | 'skipped';

/**
 * GET /v1/events filters: delivery_state (derived from the event's deliveries, the best per endpoint), id, and
 * parcel (a parcel's id, number or tracking number, or a settlement's). Rows written as the engine writes them.
 */
describe('GET /v1/events filters', () => {
  let api: ApiFixture;
  let merchant: Merchant;
  let other: Merchant;
  const ids: Record<string, string> = {};

  async function endpoint(accountId: string): Promise<string> {
    const id = newId('endpoint');
    await api.pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret) VALUES ($1, $2, false, 'https://shop.example/h', 'whsec_x')`,
      [id, accountId],
    );
    return id;
  }

  /** An event with these deliveries: [endpoint, status, trigger]. */
  async function event(
    pool: Pool,
    accountId: string,
    type: string,
    data: unknown,
    deliveries: [string, Status, string?][],
  ): Promise<string> {
    const id = newId('event');
    const created = Math.floor(Date.now() / 1000);
    const body = JSON.stringify({ id, object: 'event', type, created, data, livemode: false });
    await pool.query(
      `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, dispatched_at) VALUES ($1, $2, false, $3, $4, $5, '{}', now())`,
      [id, accountId, type, created, body],
    );
    for (const [endpointId, status, trigger = 'automatic'] of deliveries) {
      await pool.query(
        `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger, status, dispatched_at) VALUES ($1, $2, $3, $4, false, $5, $6, now())`,
        [newId('delivery'), id, endpointId, accountId, trigger, status],
      );
    }
    return id;
  }

  beforeAll(async () => {
    api = await apiFixture({ config: testConfig() });
    merchant = await createAccountWithKey(api.pool);
    other = await createAccountWithKey(api.pool);
    const [a, b] = [await endpoint(merchant.accountId), await endpoint(merchant.accountId)];
    const p = (n: number) => ({
      parcel: parcel({ id: `parcel-${n}`, parcel_number: `PCL-${n}`, tracking_number: `TRK-${n}` }),
    });
    ids.delivered = await event(api.pool, merchant.accountId, 'parcel.delivered', p(1), [
      [a, 'succeeded'],
      [b, 'succeeded'],
    ]);
    ids.retrying = await event(api.pool, merchant.accountId, 'parcel.in_transit', p(2), [
      [a, 'succeeded'],
      [b, 'pending'],
    ]);
    ids.abandoned = await event(api.pool, merchant.accountId, 'parcel.created', p(3), [
      [a, 'failed'],
      [b, 'succeeded'],
    ]);
    // Abandoned, then resent with success: delivered after all.
    ids.recovered = await event(api.pool, merchant.accountId, 'parcel.created', p(4), [
      [a, 'failed'],
      [a, 'succeeded', 'resend'],
    ]);
    // Abandoned and being resent: retrying.
    ids.resending = await event(api.pool, merchant.accountId, 'parcel.returned', p(5), [
      [a, 'failed'],
      [a, 'pending', 'resend'],
    ]);
    ids.none = await event(api.pool, merchant.accountId, 'parcel.cancelled', p(6), [[a, 'skipped']]);
    ids.cod = await event(
      api.pool,
      merchant.accountId,
      'cod.settled',
      { cod_settlement: { id: 'cod_1', parcel_id: 'parcel-1', parcel_number: 'PCL-1', amount: 350 } },
      [[a, 'succeeded']],
    );
    // Another merchant's event about the same parcel number is never found.
    await event(api.pool, other.accountId, 'parcel.delivered', p(1), [[await endpoint(other.accountId), 'failed']]);
  });
  afterAll(async () => {
    await api?.close();
  });

  const list = async (query: string) => {
    const response = await api.app.inject({ url: `/v1/events?${query}`, headers: merchant.headers });
    return {
      status: response.statusCode,
      body: response.json<{
        data: { id: string; delivery_state: string }[];
        error?: { code: string; param?: string };
      }>(),
    };
  };
  const found = async (query: string) => {
    const { status, body } = await list(query);
    expect(status, JSON.stringify(body)).toBe(200);
    return body.data.map((event) => event.id).sort();
  };

  it('says where each event stands, the best delivery per endpoint counting', async () => {
    const { body } = await list('limit=100');
    const state = Object.fromEntries(body.data.map((event) => [event.id, event.delivery_state]));
    expect(state).toEqual({
      [ids.delivered!]: 'delivered',
      [ids.retrying!]: 'retrying',
      [ids.abandoned!]: 'abandoned',
      [ids.recovered!]: 'delivered',
      [ids.resending!]: 'retrying',
      [ids.none!]: 'none',
      [ids.cod!]: 'delivered',
    });
  });

  it('filters by delivery state; not_delivered is retrying and abandoned', async () => {
    expect(await found('delivery_state=not_delivered')).toEqual([ids.retrying, ids.abandoned, ids.resending].sort());
    expect(await found('delivery_state=retrying')).toEqual([ids.retrying, ids.resending].sort());
    expect(await found('delivery_state=abandoned')).toEqual([ids.abandoned]);
    expect(await found('delivery_state=delivered')).toEqual([ids.delivered, ids.recovered, ids.cod].sort());
    expect(await found('delivery_state=none')).toEqual([ids.none]);
    expect(await found('delivery_state=not_delivered&type=parcel.returned')).toEqual([ids.resending]);
  });

  it('pages through a filtered list', async () => {
    const first = await list('delivery_state=not_delivered&limit=2');
    expect(first.body.data).toHaveLength(2);
    const last = first.body.data[1]!.id;
    const second = await list(`delivery_state=not_delivered&limit=2&starting_after=${last}`);
    expect([...first.body.data, ...second.body.data].map((event) => event.id).sort()).toEqual(
      [ids.retrying, ids.abandoned, ids.resending].sort(),
    );
  });

  it('finds events by a parcel id, number or tracking number, and one event by its id', async () => {
    expect(await found('parcel=PCL-1')).toEqual([ids.delivered, ids.cod].sort());
    expect(await found('parcel=parcel-1')).toEqual([ids.delivered, ids.cod].sort());
    expect(await found('parcel=TRK-3')).toEqual([ids.abandoned]);
    expect(await found('parcel=TRK-nothing')).toEqual([]);
    expect(await found(`id=${ids.none}`)).toEqual([ids.none]);
    expect(await found('id=not-an-event-id')).toEqual([]);
  });

  it('refuses an unknown state or an empty parcel with 400 naming the parameter', async () => {
    for (const [query, param] of [
      ['delivery_state=lost', 'delivery_state'],
      ['parcel=', 'parcel'],
      ['parcels=PCL-1', 'parcels'],
    ] as const) {
      const { status, body } = await list(query);
      expect(status, query).toBe(400);
      expect(body.error?.param, query).toBe(param);
    }
  });

  it('declares the filters in the OpenAPI document', async () => {
    const doc = (await api.app.inject({ url: '/docs/json' })).json<{
      paths: Record<string, { get?: { parameters?: { name: string; schema: unknown }[] } }>;
    }>();
    const names = (doc.paths['/v1/events']?.get?.parameters ?? []).map((parameter) => parameter.name);
    expect(names).toEqual(expect.arrayContaining(['delivery_state', 'id', 'parcel']));
  });
});
