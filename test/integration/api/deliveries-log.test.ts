import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids';
import type { Pool } from '../../../src/db/pool';
import { testConfig } from '../../helpers/env';
import { createAccountWithKey } from '../../helpers/fixtures';
import { apiFixture, type ApiFixture } from '../../helpers/api';

type Merchant = Awaited<ReturnType<typeof createAccountWithKey>>;

/** Rows as the delivery engine writes them; inserted directly because the engine is built separately. */
async function insertEvent(pool: Pool, merchant: Merchant, type: string, endpointIds: string[]): Promise<string> {
  const id = newId('event');
  await pool.query(
    `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids)
     VALUES ($1, $2, false, $3, extract(epoch FROM now())::bigint, '{}', $4)`,
    [id, merchant.accountId, type, endpointIds],
  );
  return id;
}

interface AttemptInput {
  endpointId: string;
  eventId: string;
  eventType: string;
  attempt: number;
  statusCode: number | null;
  body: string | null;
  error: string | null;
  succeeded: boolean;
  /** Seconds before now, so the order is known. */
  ageSeconds: number;
}

async function insertAttempt(pool: Pool, merchant: Merchant, a: AttemptInput): Promise<string> {
  const id = newId('attempt');
  // Attempts belong to the event's automatic delivery to the endpoint, made with the first of them.
  await pool.query(
    `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger)
     VALUES ($1, $2, $3, $4, false, 'automatic') ON CONFLICT (event_id, endpoint_id) WHERE trigger = 'automatic' DO NOTHING`,
    [newId('delivery'), a.eventId, a.endpointId, merchant.accountId],
  );
  await pool.query(
    `INSERT INTO delivery_attempts (id, endpoint_id, event_id, event_type, account_id, livemode, attempt, status_code,
                                    response_body, error, duration_ms, succeeded, created_at, delivery_id)
     VALUES ($1, $2, $3, $4, $5, false, $6, $7, $8, $9, 42, $10, now() - $11 * interval '1 second',
             (SELECT id FROM deliveries WHERE event_id = $3 AND endpoint_id = $2 AND trigger = 'automatic'))`,
    [
      id,
      a.endpointId,
      a.eventId,
      a.eventType,
      merchant.accountId,
      a.attempt,
      a.statusCode,
      a.body,
      a.error,
      a.succeeded,
      a.ageSeconds,
    ],
  );
  return id;
}

describe('GET /v1/webhooks/:id/deliveries', () => {
  let api: ApiFixture;
  let merchant: Merchant;
  let endpointId: string;
  let otherEndpointId: string;
  let eventA: string;
  let eventB: string;
  /** Newest first. */
  const attemptIds: string[] = [];

  beforeAll(async () => {
    api = await apiFixture({ config: testConfig() });
    merchant = await createAccountWithKey(api.pool);
    const register = async () =>
      (
        await api.app.inject({
          method: 'POST',
          url: '/v1/webhooks',
          headers: merchant.headers,
          payload: { url: 'https://127.0.0.1:9/hook' },
        })
      ).json().id as string;
    endpointId = await register();
    otherEndpointId = await register();
    eventA = await insertEvent(api.pool, merchant, 'parcel.delivered', [endpointId, otherEndpointId]);
    eventB = await insertEvent(api.pool, merchant, 'cod.settled', [endpointId]);
    const base = { endpointId, body: null, error: null };
    // Event A: timeout, then 500, then success. Event B: connection refused.
    const rows: AttemptInput[] = [
      {
        ...base,
        eventId: eventA,
        eventType: 'parcel.delivered',
        attempt: 1,
        statusCode: null,
        error: 'timeout',
        succeeded: false,
        ageSeconds: 50,
      },
      {
        ...base,
        eventId: eventA,
        eventType: 'parcel.delivered',
        attempt: 2,
        statusCode: 500,
        body: 'x'.repeat(500),
        succeeded: false,
        ageSeconds: 40,
      },
      {
        ...base,
        eventId: eventB,
        eventType: 'cod.settled',
        attempt: 1,
        statusCode: null,
        error: 'connection_refused',
        succeeded: false,
        ageSeconds: 30,
      },
      {
        ...base,
        eventId: eventA,
        eventType: 'parcel.delivered',
        attempt: 3,
        statusCode: 200,
        body: 'ok',
        succeeded: true,
        ageSeconds: 20,
      },
    ];
    for (const row of rows) attemptIds.unshift(await insertAttempt(api.pool, merchant, row));
    await insertAttempt(api.pool, merchant, { ...rows[0]!, endpointId: otherEndpointId, ageSeconds: 10 });
  });
  afterAll(async () => {
    await api?.close();
  });

  const deliveries = (query = '', id = endpointId, headers = merchant.headers) =>
    api.app.inject({ method: 'GET', url: `/v1/webhooks/${id}/deliveries${query}`, headers });

  it('lists every attempt of the endpoint, newest first, with the recorded fields', async () => {
    const res = await deliveries();
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({
      object: 'list',
      has_more: false,
      url: `/v1/webhooks/${endpointId}/deliveries`,
      livemode: false,
    });
    expect(body.data.map((d: { id: string }) => d.id)).toEqual(attemptIds);
    expect(body.data[0]).toEqual({
      id: attemptIds[0],
      object: 'delivery_attempt',
      endpoint_id: endpointId,
      event_id: eventA,
      event_type: 'parcel.delivered',
      attempt: 3,
      trigger: 'automatic',
      status_code: 200,
      response_body: 'ok',
      error: null,
      duration_ms: 42,
      succeeded: true,
      reason: null,
      livemode: false,
      created: expect.any(Number),
    });
    const timedOut = body.data[3];
    expect(timedOut).toMatchObject({ status_code: null, error: 'timeout', succeeded: false, response_body: null });
    expect(body.data[2].response_body).toHaveLength(500);
    expect(body.data[0].created).toBeGreaterThan(timedOut.created);
  });

  it('pages with limit and starting_after', async () => {
    const first = (await deliveries('?limit=3')).json();
    expect(first.has_more).toBe(true);
    expect(first.data.map((d: { id: string }) => d.id)).toEqual(attemptIds.slice(0, 3));
    const rest = (await deliveries(`?limit=3&starting_after=${attemptIds[2]}`)).json();
    expect(rest.has_more).toBe(false);
    expect(rest.data.map((d: { id: string }) => d.id)).toEqual(attemptIds.slice(3));
  });

  it('filters by event_id and outcome', async () => {
    const forB = (await deliveries(`?event_id=${eventB}`)).json();
    expect(forB.data.map((d: { event_id: string }) => d.event_id)).toEqual([eventB]);
    const succeeded = (await deliveries('?outcome=succeeded')).json();
    expect(succeeded.data.map((d: { id: string }) => d.id)).toEqual([attemptIds[0]]);
    const failedA = (await deliveries(`?outcome=failed&event_id=${eventA}`)).json();
    expect(failedA.data.map((d: { attempt: number }) => d.attempt)).toEqual([2, 1]);
    expect((await deliveries('?event_id=evt_unknown')).json().data).toEqual([]);
  });

  it('refuses bad query parameters with 4xx, never 500', async () => {
    const cases: Array<[string, number, string]> = [
      ['?outcome=maybe', 400, 'parameter_invalid'],
      ['?limit=0', 400, 'parameter_invalid'],
      ['?limit=1000', 400, 'parameter_invalid'],
      ['?since=1', 400, 'parameter_unknown'],
      ['?event_id=%00', 400, 'parameter_invalid'],
      [`?event_id=${'e'.repeat(300)}`, 400, 'parameter_invalid'],
      ['?starting_after=dlv_nope', 404, 'resource_missing'],
      ['?starting_after=%00', 404, 'resource_missing'],
    ];
    for (const [query, status, code] of cases) {
      const res = await deliveries(query);
      expect(res.statusCode, query).toBe(status);
      expect(res.json().error.code, query).toBe(code);
    }
    // An attempt of another endpoint is no cursor here.
    const foreign = (await deliveries('', otherEndpointId)).json().data[0].id;
    expect((await deliveries(`?starting_after=${foreign}`)).statusCode).toBe(404);
  });

  it("is 404 for another account's endpoint, the other mode, and a removed endpoint", async () => {
    const stranger = await createAccountWithKey(api.pool);
    expect((await deliveries('', endpointId, stranger.headers)).json().error.code).toBe('resource_missing');
    const live = await createAccountWithKey(api.pool, { mode: 'live' });
    await api.pool.query('UPDATE api_keys SET account_id = $1 WHERE id = $2', [merchant.accountId, live.keyId]);
    expect((await deliveries('', endpointId, live.headers)).statusCode).toBe(404);

    await api.app.inject({ method: 'DELETE', url: `/v1/webhooks/${otherEndpointId}`, headers: merchant.headers });
    const removed = await deliveries('', otherEndpointId);
    expect(removed.statusCode).toBe(404);
    expect(removed.json().error.code).toBe('resource_missing');
  });
});
