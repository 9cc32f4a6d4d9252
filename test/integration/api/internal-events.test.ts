import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../../../src/api/server';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';

const TOKEN = 'internal-token-for-tests-0123456789';

describe('POST /internal/v1/events', () => {
  const config = testConfig({ INTERNAL_API_TOKEN: TOKEN, DELIVERY_RETRY_DELAYS: '10ms' });
  const h = useDeliveryHarness(config);
  let app: Awaited<ReturnType<typeof buildServer>>;
  let disabled: Awaited<ReturnType<typeof buildServer>>;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const post = (payload: unknown, headers: Record<string, string> = auth) =>
    app.inject({ method: 'POST', url: '/internal/v1/events', headers, payload: payload as object });

  beforeAll(async () => {
    app = await buildServer({ config, pool: h.tw.pool, temporal: h.tw.client }, { logger: false });
    disabled = await buildServer(
      { config: { ...config, internalApiToken: undefined }, pool: h.tw.pool, temporal: h.tw.client },
      { logger: false },
    );
  });
  afterAll(async () => {
    await app?.close();
    await disabled?.close();
  });

  it('does not exist without INTERNAL_API_TOKEN, and refuses a wrong token', async () => {
    const off = await disabled.inject({ method: 'POST', url: '/internal/v1/events', headers: auth, payload: {} });
    expect(off.statusCode).toBe(404);
    const missing = await post({}, {});
    expect(missing.statusCode).toBe(401);
    expect(missing.json().error.code).toBe('invalid_internal_token');
    const wrong = await post({}, { authorization: `Bearer ${TOKEN}x` });
    expect(wrong.statusCode).toBe(401);
  });

  it('publishes once per id and delivers', async () => {
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/internal`, livemode: true });
    const id = `evt_internal_${Date.now()}`;
    const body = {
      account_id: accountId,
      livemode: true,
      type: 'parcel.at_pickup_station',
      data: { parcel: parcel({ status: 'AT_PICKUP_STATION' }) },
      id,
    };
    const first = await post(body);
    expect(first.statusCode).toBe(201);
    expect(first.json()).toMatchObject({
      id,
      object: 'event',
      type: 'parcel.at_pickup_station',
      livemode: true,
      account_id: accountId,
      endpoint_count: 1,
    });
    expect(first.json().created).toBeTypeOf('number');
    const again = await post(body);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual(first.json());
    await deliveryResult(h.tw.client, id);
    expect(h.receiver.at('/internal')).toHaveLength(1);
    expect(JSON.parse(h.receiver.at('/internal')[0]!.rawBody.toString())).toEqual({
      id,
      object: 'event',
      type: 'parcel.at_pickup_station',
      created: first.json().created,
      data: body.data,
      livemode: true,
      sequence: 1,
    });
    expect(first.json().sequence).toBe(1);

    const other = await createAccount(h.tw.pool);
    const conflict = await post({ ...body, account_id: other });
    expect(conflict.statusCode).toBe(409);
    expect(conflict.json().error.code).toBe('idempotency_conflict');
  });

  it('rejects what cannot be published', async () => {
    const accountId = await createAccount(h.tw.pool);
    const data = { parcel: parcel() };
    const unknownType = await post({ account_id: accountId, livemode: false, type: 'parcel.teleported', data });
    expect(unknownType.statusCode).toBe(400);
    expect(unknownType.json().error.code).toBe('unknown_event_type');
    const noAccount = await post({ account_id: 'acct_missing', livemode: false, type: 'parcel.created', data });
    expect(noAccount.statusCode).toBe(404);
    const noParcel = await post({ account_id: accountId, livemode: false, type: 'parcel.created', data: {} });
    expect(noParcel.statusCode).toBe(400);
    expect(noParcel.json().error.param).toBe('data.parcel');
    const extra = await post({ account_id: accountId, livemode: false, type: 'parcel.created', data, colour: 'blue' });
    expect(extra.statusCode).toBe(400);
    const stringly = await post({ account_id: accountId, livemode: 'true', type: 'parcel.created', data });
    expect(stringly.statusCode).toBe(400);
    const missing = await post({ account_id: accountId, type: 'parcel.created', data });
    expect(missing.statusCode).toBe(400);
    expect(missing.json().error).toMatchObject({ code: 'parameter_missing', param: 'livemode' });
  });
});
