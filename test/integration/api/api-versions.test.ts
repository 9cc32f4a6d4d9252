import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { testConfig } from '../../helpers/env';

/** API versions at the API's edge: an endpoint's api_version, and the version events are read in. */
describe('API versions in the API', () => {
  let api: ApiFixture;
  let headers: Record<string, string>;
  let accountId: string;
  beforeAll(async () => {
    api = await apiFixture({ config: testConfig({ WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true' }) });
    const key = await api.key();
    headers = bearer(key.key);
    accountId = key.account_id;
  });
  afterAll(async () => {
    await api?.close();
  });

  const inject = (
    method: 'GET' | 'POST' | 'PATCH',
    url: string,
    payload?: object,
    extra: Record<string, string> = {},
  ) => api.app.inject({ method, url, headers: { ...headers, ...extra }, ...(payload ? { payload } : {}) });

  it('an endpoint gets the newest unless it names one; PATCH changes it; an unknown one is a 400 naming api_version', async () => {
    const plain = await inject('POST', '/v1/webhooks', { url: 'https://merchant.example/a' });
    expect(plain.statusCode).toBe(200);
    expect(plain.json().api_version).toBe('2026-12-01');
    const pinned = await inject('POST', '/v1/webhooks', {
      url: 'https://merchant.example/b',
      api_version: '2026-11-21',
    });
    expect(pinned.json().api_version).toBe('2026-11-21');
    const listed = await inject('GET', '/v1/webhooks');
    expect(
      listed
        .json()
        .data.map((e: { api_version: string }) => e.api_version)
        .sort(),
    ).toEqual(['2026-11-21', '2026-12-01']);

    const moved = await inject('PATCH', `/v1/webhooks/${pinned.json().id}`, { api_version: '2026-12-01' });
    expect(moved.statusCode).toBe(200);
    expect(moved.json().api_version).toBe('2026-12-01');

    for (const [method, url] of [
      ['POST', '/v1/webhooks'],
      ['PATCH', `/v1/webhooks/${pinned.json().id}`],
    ] as const) {
      const refused = await inject(method, url, { url: 'https://merchant.example/c', api_version: '2025-01-01' });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().error).toMatchObject({ code: 'unknown_api_version', param: 'api_version' });
    }
    expect((await inject('GET', `/v1/webhooks/${pinned.json().id}`)).json().api_version).toBe('2026-12-01');
  });

  it('GET /v1/events and /v1/events/:id answer in the Service-Version asked for, else the newest', async () => {
    // Published in the older shape: that version reads it back exactly as sent.
    const olderData = {
      cod_settlement: {
        id: 'cods_9',
        parcel_id: 'p_api',
        parcel_number: 'PCL-7',
        amount: 10,
        currency: 'KES',
        settled_at: 1764000000,
      },
    };
    const published = await publishEvent(
      { pool: api.pool },
      { accountId, livemode: false, type: 'cod.settled', data: olderData },
    );
    const url = `/v1/events/${published.event.id}`;
    const newest = await inject('GET', url);
    expect(newest.headers['service-version']).toBe('2026-12-01');
    expect(newest.json()).toMatchObject({
      sequence: 1,
      data: { parcel: { id: 'p_api', parcel_number: 'PCL-7' }, cod_settlement: { id: 'cods_9' } },
    });
    expect(newest.json().data.cod_settlement).not.toHaveProperty('parcel_id');

    const older = await inject('GET', url, undefined, { 'service-version': '2026-11-21' });
    expect(older.headers['service-version']).toBe('2026-11-21');
    expect(older.json().data).toEqual(olderData);
    expect(older.json()).toMatchObject({ sequence: 1, deliveries: expect.any(Array) });

    const list = await inject('GET', `/v1/events?id=${published.event.id}`, undefined, {
      'service-version': '2026-11-21',
    });
    expect(list.json().data[0].data).toEqual(older.json().data);

    for (const target of [url, '/v1/events']) {
      const unknown = await inject('GET', target, undefined, { 'service-version': 'latest' });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().error).toMatchObject({ code: 'unknown_api_version', param: 'Service-Version' });
    }
  });
});
