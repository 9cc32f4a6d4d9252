import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedApiKey } from '../../../src/domain/api-keys';
import { publishEvent } from '../../../src/domain/events';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { useDeliveryHarness } from '../../helpers/harness';
import { independentlyVerified } from '../../helpers/independent-verifier';
import { waitFor } from '../../helpers/wait';

/**
 * The merchant self-service API against the real app, worker, dev server, Postgres and an HTTPS receiver:
 * events, resend, recover, test events and endpoint changes.
 */
describe('merchant self-service API', () => {
  const config = testConfig({
    DELIVERY_RETRY_DELAYS: '100ms,100ms',
    DELIVERY_TIMEOUT: '2s',
    RECOVER_RATE_PER_SECOND: '2',
  });
  const h = useDeliveryHarness(config);
  let api: ApiFixture;
  beforeAll(async () => {
    api = await apiFixture({ config });
  });
  afterAll(async () => {
    await api?.close();
  });

  const call = (key: CreatedApiKey, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
    api.app.inject({ method, url, headers: bearer(key.key), ...(payload ? { payload } : {}) });

  async function merchantWithEndpoint(pathname: string, events?: string[]) {
    const key = await api.key({ status: 'active' });
    const res = await call(key, 'POST', '/v1/webhooks', {
      url: `${h.receiver.url}${pathname}`,
      ...(events ? { events } : {}),
    });
    expect(res.statusCode, res.body).toBe(200);
    return { key, endpoint: res.json<{ id: string; secret: string }>() };
  }

  const publish = (accountId: string, type = 'parcel.delivered') =>
    publishEvent({ pool: api.pool }, { accountId, livemode: false, type, data: { parcel: parcel() } });

  const deliveriesOf = async (key: CreatedApiKey, eventId: string) =>
    (await call(key, 'GET', `/v1/events/${eventId}`)).json().deliveries;

  /** Every delivery of the event to have ended (none pending). */
  const settled = (key: CreatedApiKey, eventId: string, count: number) =>
    waitFor(
      async () => {
        const body = (await call(key, 'GET', `/v1/events/${eventId}`)).json();
        return body.deliveries.length === count && body.pending_webhooks === 0 ? body : undefined;
      },
      { timeoutMs: 30_000, what: `${count} deliveries of ${eventId} to end` },
    );

  it('lists events newest first with pagination and a type filter, and shows one with its deliveries', async () => {
    const { key, endpoint } = await merchantWithEndpoint('/ss-list');
    const first = await publish(key.account_id, 'parcel.created');
    const second = await publish(key.account_id, 'parcel.delivered');
    const third = await publish(key.account_id, 'parcel.created');
    const page = (await call(key, 'GET', '/v1/events?limit=2')).json();
    expect(page).toMatchObject({ object: 'list', has_more: true, url: '/v1/events', livemode: false });
    expect(page.data.map((e: { id: string }) => e.id)).toEqual([third.event.id, second.event.id]);
    const rest = (await call(key, 'GET', `/v1/events?limit=2&starting_after=${second.event.id}`)).json();
    expect(rest.data.map((e: { id: string }) => e.id)).toEqual([first.event.id]);
    expect(rest.has_more).toBe(false);
    const created = (await call(key, 'GET', '/v1/events?type=parcel.created')).json();
    expect(created.data.map((e: { id: string }) => e.id)).toEqual([third.event.id, first.event.id]);

    const event = await settled(key, first.event.id, 1);
    expect(event).toMatchObject({ ...first.event, pending_webhooks: 0 });
    expect(event.deliveries).toEqual([
      expect.objectContaining({
        endpoint_id: endpoint.id,
        trigger: 'automatic',
        status: 'succeeded',
        attempts: 1,
        last_status_code: 200,
      }),
    ]);
    expect(event.deliveries[0].last_attempt_at).toEqual(expect.any(Number));
  });

  it('refuses bad queries with 4xx and hides another account or mode behind 404', async () => {
    const { key } = await merchantWithEndpoint('/ss-iso');
    const other = await api.key({ status: 'active' });
    const live = await api.key({ status: 'active', mode: 'live' });
    const mine = await publish(key.account_id);
    for (const [url, status, code, param] of [
      ['/v1/events?type=parcel.teleported', 400, 'unknown_event_type', 'type'],
      ['/v1/events?limit=0', 400, 'parameter_invalid', 'limit'],
      ['/v1/events?colour=red', 400, 'parameter_unknown', 'colour'],
      ['/v1/events?starting_after=evt_nope', 404, 'resource_missing', 'starting_after'],
      ['/v1/events/evt_nope', 404, 'resource_missing', undefined],
      ['/v1/events/%00', 404, 'resource_missing', undefined],
    ] as const) {
      const res = await call(key, 'GET', url);
      expect(res.statusCode, `${url}: ${res.body}`).toBe(status);
      expect(res.json().error).toMatchObject({ code, ...(param ? { param } : {}) });
    }
    for (const stranger of [other, live]) {
      expect((await call(stranger, 'GET', `/v1/events/${mine.event.id}`)).statusCode).toBe(404);
      expect((await call(stranger, 'POST', `/v1/events/${mine.event.id}/resend`, {})).statusCode).toBe(404);
      expect((await call(stranger, 'GET', `/v1/events?starting_after=${mine.event.id}`)).statusCode).toBe(404);
    }
    const noScope = await api.key({ status: 'active', scopes: ['parcels:read'] });
    expect((await call(noScope, 'GET', '/v1/events')).json().error).toMatchObject({
      code: 'insufficient_scope',
      scope: 'webhooks:manage',
    });
  });

  it('resends the same bytes with a fresh signature that an independent verifier accepts, recorded with trigger resend', async () => {
    const { key, endpoint } = await merchantWithEndpoint('/ss-resend');
    const published = await publish(key.account_id);
    await settled(key, published.event.id, 1);
    const res = await call(key, 'POST', `/v1/events/${published.event.id}/resend`, { endpoint_id: endpoint.id });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({
      object: 'resend',
      event_id: published.event.id,
      endpoint_ids: [endpoint.id],
      livemode: false,
    });
    const event = await settled(key, published.event.id, 2);
    expect(event.deliveries.map((d: { trigger: string; status: string }) => [d.trigger, d.status])).toEqual([
      ['automatic', 'succeeded'],
      ['resend', 'succeeded'],
    ]);
    const [original, resent] = h.receiver.at('/ss-resend');
    expect(resent!.rawBody.equals(original!.rawBody)).toBe(true);
    expect(resent!.headers['service-delivery']).not.toBe(original!.headers['service-delivery']);
    expect(independentlyVerified(resent!.headers['service-signature'], resent!.rawBody, endpoint.secret)).toBe(true);
    const log = (await call(key, 'GET', `/v1/webhooks/${endpoint.id}/deliveries`)).json().data;
    expect(log.map((a: { trigger: string; attempt: number }) => [a.trigger, a.attempt])).toEqual([
      ['resend', 1],
      ['automatic', 1],
    ]);
    // The operator's view: its own workflow with a summary that says what it is. The outbox records a first try
    // before it starts the workflow, so the workflow may appear a moment after the delivery reads succeeded.
    const { rows } = await api.pool.query("SELECT id FROM deliveries WHERE event_id = $1 AND trigger = 'resend'", [
      published.event.id,
    ]);
    const described = await waitFor(() => h.tw.client.workflow.getHandle(`delivery:${rows[0].id}`).describe(), {
      what: 'the resend delivery workflow to exist',
    });
    expect(await described.staticSummary()).toBe(
      `resend parcel.delivered ${published.event.id} -> ${endpoint.id} (${key.account_id}, test)`,
    );
  });

  it('resends to every live endpoint of the event, and refuses unsubscribed, disabled and unknown endpoints', async () => {
    const { key, endpoint } = await merchantWithEndpoint('/ss-all-a');
    const second = (await call(key, 'POST', '/v1/webhooks', { url: `${h.receiver.url}/ss-all-b` })).json();
    const published = await publish(key.account_id);
    await settled(key, published.event.id, 2);
    const narrow = (
      await call(key, 'POST', '/v1/webhooks', { url: `${h.receiver.url}/ss-narrow`, events: ['cod.settled'] })
    ).json();
    const all = await call(key, 'POST', `/v1/events/${published.event.id}/resend`, {});
    expect(all.statusCode, all.body).toBe(202);
    expect(all.json().endpoint_ids).toEqual([endpoint.id, second.id].sort());
    await settled(key, published.event.id, 4);

    const refused = async (body: object, status: number, code: string) => {
      const res = await call(key, 'POST', `/v1/events/${published.event.id}/resend`, body);
      expect(res.statusCode, res.body).toBe(status);
      expect(res.json().error).toMatchObject({ code, param: 'endpoint_id' });
    };
    await refused({ endpoint_id: narrow.id }, 400, 'endpoint_not_subscribed');
    await refused({ endpoint_id: 'we_nope' }, 404, 'resource_missing');
    await call(key, 'PATCH', `/v1/webhooks/${second.id}`, { disabled: true });
    await refused({ endpoint_id: second.id }, 400, 'endpoint_disabled');
    expect((await call(key, 'POST', `/v1/events/${published.event.id}/resend`, { endpoint_id: 7 })).statusCode).toBe(
      400,
    );
  });

  it('recovers exactly the events that never reached the endpoint, at a bounded pace; a second call starts nothing', async () => {
    const { key, endpoint } = await merchantWithEndpoint('/ss-recover');
    let up = false;
    h.receiver.script('/ss-recover', () => ({ status: up ? 200 : 503 }));
    const since = Math.floor(Date.now() / 1000) - 1;
    const failed = [];
    for (let i = 0; i < 3; i++) failed.push((await publish(key.account_id)).event.id);
    for (const id of failed) await settled(key, id, 1);
    up = true;
    const ok = (await publish(key.account_id)).event.id;
    await settled(key, ok, 1);
    const before = h.receiver.at('/ss-recover').length;

    const res = await call(key, 'POST', `/v1/webhooks/${endpoint.id}/recover`, { since });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({
      object: 'recovery',
      endpoint_id: endpoint.id,
      event_count: 3,
      id: expect.stringMatching(/^rcv_/),
    });
    const again = await call(key, 'POST', `/v1/webhooks/${endpoint.id}/recover`, { since });
    expect(again.json()).toMatchObject({ event_count: 0, id: null });

    for (const id of failed) await settled(key, id, 2);
    const recovered = h.receiver.at('/ss-recover').slice(before);
    expect(recovered.map((r) => JSON.parse(r.rawBody.toString()).id).sort()).toEqual([...failed].sort());
    // RECOVER_RATE_PER_SECOND=2: each is due half a second after the one before, and none started before it was due.
    // The dispatcher marks a delivery dispatched after its start returns, so a fast delivery can end first: wait for
    // all three marks.
    const paced = await waitFor(
      async () => {
        const { rows } = await api.pool.query<{ due_ms: number; early: boolean | null }>(
          `SELECT (EXTRACT(EPOCH FROM dispatch_after - min(dispatch_after) OVER ()) * 1000)::float8 AS due_ms,
                dispatched_at < dispatch_after AS early
           FROM deliveries WHERE recovery_id = $1 ORDER BY dispatch_after`,
          [res.json().id],
        );
        return rows.every((row) => row.early !== null) ? rows : undefined;
      },
      { timeoutMs: 10_000, what: 'the three recovered deliveries to be marked dispatched' },
    );
    expect(paced.map((row) => [Math.round(row.due_ms), row.early])).toEqual([
      [0, false],
      [500, false],
      [1000, false],
    ]);
    // At the receiver: spread out, not all at once (each start's own latency blurs the exact spacing).
    const times = recovered.map((r) => r.receivedAt).sort((a, b) => a - b);
    expect(times[2]! - times[0]!).toBeGreaterThanOrEqual(500);
    expect(await deliveriesOf(key, ok)).toHaveLength(1);
    const third = await call(key, 'POST', `/v1/webhooks/${endpoint.id}/recover`, { since });
    expect(third.json().event_count).toBe(0);

    for (const [body, code, param] of [
      [{ since: Math.floor(Date.now() / 1000) + 3600 }, 'parameter_invalid', 'since'],
      [{ since, until: since - 10 }, 'parameter_invalid', 'until'],
      [{}, 'parameter_missing', 'since'],
      [{ since, extra: 1 }, 'parameter_unknown', 'extra'],
    ] as const) {
      const bad = await call(key, 'POST', `/v1/webhooks/${endpoint.id}/recover`, body);
      expect(bad.statusCode, bad.body).toBe(400);
      expect(bad.json().error).toMatchObject({ code, param });
    }
  });

  it('sends a test event of each kind with sample data, listed among the events, to that endpoint only', async () => {
    const { key, endpoint } = await merchantWithEndpoint('/ss-test');
    const bystander = (await call(key, 'POST', '/v1/webhooks', { url: `${h.receiver.url}/ss-bystander` })).json();
    const res = await call(key, 'POST', `/v1/webhooks/${endpoint.id}/test`, {});
    expect(res.statusCode, res.body).toBe(202);
    const event = res.json();
    expect(event).toMatchObject({
      object: 'event',
      type: 'parcel.created',
      livemode: false,
      data: { parcel: { status: expect.any(String) } },
    });
    const settledEvent = await settled(key, event.id, 1);
    expect(settledEvent.deliveries[0]).toMatchObject({
      endpoint_id: endpoint.id,
      trigger: 'test',
      status: 'succeeded',
    });
    const [request] = h.receiver.at('/ss-test');
    expect(JSON.parse(request!.rawBody.toString())).toEqual(event);
    expect(independentlyVerified(request!.headers['service-signature'], request!.rawBody, endpoint.secret)).toBe(true);
    expect(h.receiver.at('/ss-bystander')).toHaveLength(0);
    expect(bystander.id).toMatch(/^we_/);
    expect((await call(key, 'GET', '/v1/events?limit=1')).json().data[0].id).toBe(event.id);

    const settlement = (await call(key, 'POST', `/v1/webhooks/${endpoint.id}/test`, { type: 'cod.settled' })).json();
    expect(settlement.data.cod_settlement).toMatchObject({
      id: expect.stringMatching(/^cods_/),
      amount: expect.any(Number),
      currency: 'KES',
    });
    const bad = await call(key, 'POST', `/v1/webhooks/${endpoint.id}/test`, { type: 'parcel.teleported' });
    expect(bad.json().error).toMatchObject({ code: 'unknown_event_type', param: 'type' });
    expect(
      (await call(await api.key({ status: 'active' }), 'POST', `/v1/webhooks/${endpoint.id}/test`, {})).statusCode,
    ).toBe(404);
  });

  it('accepts a resend with no Temporal at all: the API only stores it, and a worker delivers it', async () => {
    const { key, endpoint } = await merchantWithEndpoint('/ss-no-temporal');
    const published = await publish(key.account_id);
    await settled(key, published.event.id, 1);
    // The same database, a Temporal address where nothing listens: the API never calls it for a resend.
    const alone = await apiFixture({ config: testConfig({ TEMPORAL_ADDRESS: '127.0.0.1:1' }) });
    try {
      const res = await alone.app.inject({
        method: 'POST',
        url: `/v1/events/${published.event.id}/resend`,
        headers: bearer(key.key),
        payload: { endpoint_id: endpoint.id },
      });
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toEqual({
        object: 'resend',
        event_id: published.event.id,
        endpoint_ids: [endpoint.id],
        livemode: false,
      });
    } finally {
      await alone.close();
    }
    const event = await settled(key, published.event.id, 2);
    expect(event.deliveries[1]).toMatchObject({ trigger: 'resend', status: 'succeeded' });
  });

  it('documents every new route in the OpenAPI document', async () => {
    const doc = (await api.app.inject({ method: 'GET', url: '/docs/json' })).json();
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        '/v1/events',
        '/v1/events/{id}',
        '/v1/events/{id}/resend',
        '/v1/webhooks/{id}/recover',
        '/v1/webhooks/{id}/test',
      ]),
    );
    expect(doc.paths['/v1/webhooks/{id}'].patch).toBeDefined();
  });

  it('changes an endpoint with registration checks; a disabled endpoint receives nothing and its pending retries stop', async () => {
    const { key, endpoint } = await merchantWithEndpoint('/ss-patch');
    const patch = (body: object) => call(key, 'PATCH', `/v1/webhooks/${endpoint.id}`, body);
    const changed = await patch({ events: ['parcel.delivered'], description: 'orders' });
    expect(changed.json()).toMatchObject({ events: ['parcel.delivered'], description: 'orders', status: 'enabled' });
    expect((await patch({ description: null })).json().description).toBeNull();
    for (const [body, code, param] of [
      [{ url: 'http://example.com/hook' }, 'url_not_https', 'url'],
      [{ events: ['parcel.teleported'] }, 'unknown_event_type', 'events[0]'],
      [{ disabled: 'yes' }, 'parameter_invalid', 'disabled'],
      [{ secret: 'x' }, 'parameter_unknown', 'secret'],
    ] as const) {
      const res = await patch(body);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatchObject({ code, param });
    }

    // A ladder waiting between attempts, then the endpoint disabled: no further attempt, the delivery skipped.
    h.receiver.script('/ss-patch', { status: 500 });
    const pending = await publish(key.account_id);
    await waitFor(() => h.receiver.at('/ss-patch').length >= 1, { what: 'attempt 1' });
    expect((await patch({ disabled: true })).json().status).toBe('disabled');
    const stopped = await settled(key, pending.event.id, 1);
    expect(stopped.deliveries[0]).toMatchObject({ status: 'skipped', reason: 'endpoint_disabled' });
    const afterDisable = h.receiver.at('/ss-patch').length;
    const missed = await publish(key.account_id);
    expect(missed.endpointIds).toEqual([]);
    await h.tw.client.workflow.getHandle(`event:${pending.event.id}`).result();
    expect(h.receiver.at('/ss-patch').length).toBe(afterDisable);
    expect(afterDisable).toBeLessThanOrEqual(2);

    // Enabled again: nothing replayed; the next event arrives.
    h.receiver.script('/ss-patch', { status: 200 });
    expect((await patch({ disabled: false })).json().status).toBe('enabled');
    const next = await publish(key.account_id);
    await settled(key, next.event.id, 1);
    expect(h.receiver.at('/ss-patch').map((r) => JSON.parse(r.rawBody.toString()).id)).not.toContain(missed.event.id);
    expect(
      (await call(await api.key({ status: 'active' }), 'PATCH', `/v1/webhooks/${endpoint.id}`, { disabled: true }))
        .statusCode,
    ).toBe(404);
  });
});
