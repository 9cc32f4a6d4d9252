import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreatedApiKey } from '../../../src/domain/api-keys';
import { publishEvent } from '../../../src/domain/events';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { attemptsOf, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { useDeliveryHarness } from '../../helpers/harness';
import type { ReceivedRequest } from '../../helpers/receiver';
import { waitFor } from '../../helpers/wait';

interface AuditEntry {
  action: string;
  actor: { type: string; id: string | null };
  target: { type: string; id: string };
}

const bodyOf = (request: ReceivedRequest) =>
  JSON.parse(request.rawBody.toString()) as { id: string; sequence?: number; data: { parcel: { id: string } } };

/**
 * Pause, resume and 410 Gone through the API, against the real app, worker, dev server, Postgres and an HTTPS
 * receiver: a paused endpoint is posted nothing and counts nothing; once resumed, what was held goes out once each,
 * in parcel order and within its rate limit. An endpoint that answers 410 is disabled at once.
 */
describe('webhook endpoints API: pause, resume, 410 Gone', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '3s,3s', DELIVERY_TIMEOUT: '2s' });
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

  async function merchantWithEndpoint(pathname: string, settings: object = {}) {
    const key = await api.key({ status: 'active' });
    const res = await call(key, 'POST', '/v1/webhooks', { url: `${h.receiver.url}${pathname}`, ...settings });
    expect(res.statusCode, res.body).toBe(200);
    return { key, endpointId: res.json<{ id: string }>().id };
  }

  const publish = async (accountId: string, parcelId: string, type = 'parcel.in_transit') =>
    (
      await publishEvent(
        { pool: api.pool },
        { accountId, livemode: false, type, data: { parcel: parcel({ id: parcelId }) } },
      )
    ).event.id;

  /** The summaries of the event's timers so far (the Temporal UI's timer bars). */
  async function timerSummaries(eventId: string): Promise<string[]> {
    const history = await h.tw.client.workflow.getHandle(`event:${eventId}`).fetchHistory();
    return (history.events ?? [])
      .filter((e) => e.timerStartedEventAttributes)
      .map((e) => {
        const data = e.userMetadata?.summary?.data;
        return data ? (JSON.parse(Buffer.from(data).toString()) as string) : '';
      });
  }

  /** The event's ladder has been held at least once: its timer says so. */
  const held = (eventId: string) =>
    waitFor(async () => (await timerSummaries(eventId)).some((s) => s.startsWith('held: ')), {
      timeoutMs: 30_000,
      what: `a held timer in event:${eventId}`,
    });

  it('pause and resume answer the record: paused since when, then the status it had before', async () => {
    const { key, endpointId } = await merchantWithEndpoint('/lc-record');
    const shown = await call(key, 'GET', `/v1/webhooks/${endpointId}`);
    expect(shown.json()).toMatchObject({ status: 'enabled', paused_at: null, disabled_reason: null });

    const before = Math.floor(Date.now() / 1000);
    const paused = await call(key, 'POST', `/v1/webhooks/${endpointId}/pause`);
    expect(paused.statusCode, paused.body).toBe(200);
    expect(paused.json()).toMatchObject({ id: endpointId, object: 'webhook_endpoint', status: 'paused' });
    const pausedAt = paused.json().paused_at as number;
    expect(pausedAt).toBeGreaterThanOrEqual(before - 1);
    // Pausing again keeps the first pause's time.
    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/pause`)).json().paused_at).toBe(pausedAt);
    expect((await call(key, 'GET', `/v1/webhooks/${endpointId}`)).json()).toMatchObject({ status: 'paused' });

    const resumed = await call(key, 'POST', `/v1/webhooks/${endpointId}/resume`);
    expect(resumed.statusCode, resumed.body).toBe(200);
    expect(resumed.json()).toMatchObject({ status: 'enabled', paused_at: null });

    // A failing endpoint comes back failing: the mark stays beneath the pause.
    await api.pool.query(`UPDATE webhook_endpoints SET status = 'failing' WHERE id = $1`, [endpointId]);
    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/pause`)).json().status).toBe('paused');
    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/resume`)).json().status).toBe('failing');

    // Another account's endpoint, or none, is a 404; a key of another account changes nothing.
    const other = await api.key({ status: 'active' });
    const foreign = await call(other, 'POST', `/v1/webhooks/${endpointId}/pause`);
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().error.code).toBe('resource_missing');
    expect((await call(key, 'POST', '/v1/webhooks/we_nope/resume')).statusCode).toBe(404);
    expect((await call(key, 'POST', '/v1/webhooks/nonsense/pause')).statusCode).toBe(404);
    expect((await call(key, 'GET', `/v1/webhooks/${endpointId}`)).json().status).toBe('failing');

    // One audit entry per pause and per resume that changed the endpoint, by the key; the repeated pause made none.
    const audit = (await call(key, 'GET', '/v1/audit_log?limit=100')).json<{ data: AuditEntry[] }>().data;
    expect(
      audit.filter((e) => e.target.id === endpointId && e.action !== 'endpoint.updated').map((e) => e.action),
    ).toEqual(['endpoint.resumed', 'endpoint.paused', 'endpoint.resumed', 'endpoint.paused', 'endpoint.created']);
    for (const entry of audit.filter((e) => e.action === 'endpoint.paused' || e.action === 'endpoint.resumed'))
      expect(entry.actor).toEqual({ type: 'api_key', id: key.id });
  });

  it('holds what a paused ordered endpoint is sent, then delivers each once in parcel order on resume', async () => {
    const { key, endpointId } = await merchantWithEndpoint('/lc-ordered', { ordering: 'parcel' });
    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/pause`)).statusCode).toBe(200);
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i++) eventIds.push(await publish(key.account_id, 'p_lc_ordered'));

    // The head of the parcel is held (re-checked on a timer), the others wait for it; nothing posted or counted.
    await held(eventIds[0]!);
    await waitFor(async () => (await timerSummaries(eventIds[0]!)).filter((s) => s.startsWith('held: ')).length >= 2, {
      timeoutMs: 30_000,
      what: 'a second held re-check',
    });
    expect(h.receiver.at('/lc-ordered')).toHaveLength(0);
    expect(await attemptsOf(api.pool, endpointId)).toHaveLength(0);
    for (const id of eventIds) {
      const deliveries = (await call(key, 'GET', `/v1/events/${id}`)).json().deliveries;
      expect(deliveries).toMatchObject([{ endpoint_id: endpointId, status: 'pending', attempts: 0 }]);
    }
    const row = await api.pool.query('SELECT abandoned_streak, status FROM webhook_endpoints WHERE id = $1', [
      endpointId,
    ]);
    expect(row.rows[0]).toMatchObject({ abandoned_streak: 0, status: 'enabled' });

    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/resume`)).json().status).toBe('enabled');
    for (const id of eventIds) {
      expect(await deliveryResult(h.tw.client, id, 60_000)).toMatchObject({
        endpoints: [{ endpointId, outcome: 'delivered', attempts: 1 }],
      });
    }
    const posted = h.receiver.at('/lc-ordered').map(bodyOf);
    expect(posted.map((b) => b.id)).toEqual(eventIds);
    expect(posted.map((b) => b.sequence)).toEqual([1, 2, 3]);
  }, 120_000);

  it('holds a retry pending at the pause, re-checks it as a lone ladder would, and posts it once on resume', async () => {
    const { key, endpointId } = await merchantWithEndpoint('/lc-retry');
    const fast = await call(key, 'POST', '/v1/webhooks', { url: `${h.receiver.url}/lc-retry-fast` });
    const fastId = fast.json<{ id: string }>().id;
    h.receiver.script('/lc-retry', (index) => ({ status: index === 0 ? 500 : 200 }));
    const eventId = await publish(key.account_id, 'p_lc_retry');
    await waitFor(async () => (await attemptsOf(api.pool, endpointId)).length === 1, {
      timeoutMs: 30_000,
      what: 'attempt 1 failed',
    });
    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/pause`)).statusCode).toBe(200);

    // The retry falls due while paused: held, not posted, not counted.
    await held(eventId);
    expect(h.receiver.at('/lc-retry')).toHaveLength(1);
    expect(await attemptsOf(api.pool, endpointId)).toHaveLength(1);
    const deliveries = (await call(key, 'GET', `/v1/events/${eventId}`)).json().deliveries as object[];
    expect(deliveries).toContainEqual(
      expect.objectContaining({ endpoint_id: endpointId, status: 'pending', attempts: 1 }),
    );
    // Paused for seconds: a re-check within 1 s and a fifth, though the workflow has two ladders.
    const history = await h.tw.client.workflow.getHandle(`event:${eventId}`).fetchHistory();
    const heldTimers = (history.events ?? []).filter((e) =>
      Buffer.from(e.userMetadata?.summary?.data ?? [])
        .toString()
        .includes('held: '),
    );
    expect(heldTimers.length).toBeGreaterThan(0);
    for (const timer of heldTimers) {
      const timeout = timer.timerStartedEventAttributes?.startToFireTimeout;
      expect(Number(timeout?.seconds ?? 0) * 1000 + (timeout?.nanos ?? 0) / 1e6).toBeLessThanOrEqual(1_200);
    }

    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/resume`)).statusCode).toBe(200);
    expect(await deliveryResult(h.tw.client, eventId, 60_000)).toMatchObject({
      endpoints: expect.arrayContaining([
        { endpointId, outcome: 'delivered', attempts: 2 },
        { endpointId: fastId, outcome: 'delivered', attempts: 1 },
      ]),
    });
    expect(h.receiver.at('/lc-retry').map((r) => bodyOf(r).id)).toEqual([eventId, eventId]);
    expect((await attemptsOf(api.pool, endpointId)).map((a) => a.status_code)).toEqual([500, 200]);
  }, 120_000);

  it('holds a rate-limited endpoint (the early attempt 1 too), then delivers within its limit on resume', async () => {
    const { key, endpointId } = await merchantWithEndpoint('/lc-limited', { rate_limit: 1 });
    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/pause`)).statusCode).toBe(200);
    const eventIds: string[] = [];
    for (let i = 0; i < 4; i++) eventIds.push(await publish(key.account_id, `p_lc_limited_${i}`));
    for (const id of eventIds) await held(id);
    expect(h.receiver.at('/lc-limited')).toHaveLength(0);
    // A held attempt takes no place in the endpoint's queue.
    const places = await api.pool.query('SELECT count(*)::int AS n FROM endpoint_rate_tokens WHERE endpoint_id = $1', [
      endpointId,
    ]);
    expect(places.rows[0].n).toBe(0);

    expect((await call(key, 'POST', `/v1/webhooks/${endpointId}/resume`)).statusCode).toBe(200);
    for (const id of eventIds) {
      expect(await deliveryResult(h.tw.client, id, 60_000)).toMatchObject({
        endpoints: [{ endpointId, outcome: 'delivered', attempts: 1 }],
      });
    }
    const posted = h.receiver.at('/lc-limited');
    expect(posted.map((r) => bodyOf(r).id).sort()).toEqual([...eventIds].sort());
    const perSecond = new Map<number, number>();
    for (const r of posted)
      perSecond.set(Math.floor(r.receivedAt / 1000), (perSecond.get(Math.floor(r.receivedAt / 1000)) ?? 0) + 1);
    expect(Math.max(...perSecond.values())).toBe(1);
  }, 120_000);

  it('410 Gone: the endpoint is disabled with reason gone, its other deliveries end skipped, nothing more is posted', async () => {
    const { key, endpointId } = await merchantWithEndpoint('/lc-gone');
    // The first event's attempt 1 fails (its retry waits 3 s); the next answer is 410.
    h.receiver.script('/lc-gone', (index) => ({ status: index === 0 ? 500 : 410, body: 'gone' }));
    const first = await publish(key.account_id, 'p_gone_1');
    await waitFor(async () => (await attemptsOf(api.pool, endpointId, first)).length === 1, {
      what: 'the first attempt recorded',
    });
    const second = await publish(key.account_id, 'p_gone_2');

    expect(await deliveryResult(h.tw.client, second)).toMatchObject({
      endpoints: [{ endpointId, outcome: 'gone', attempts: 1 }],
    });
    const endpoint = (await call(key, 'GET', `/v1/webhooks/${endpointId}`)).json();
    expect(endpoint).toMatchObject({ status: 'disabled', disabled_reason: 'gone' });
    // The engine's own disable is on the audit log, by the engine.
    const audit = (await call(key, 'GET', '/v1/audit_log?action=endpoint.disabled')).json<{ data: AuditEntry[] }>();
    expect(audit.data).toMatchObject([
      { action: 'endpoint.disabled', actor: { type: 'system', id: null }, target: { id: endpointId } },
    ]);
    const gone = (await call(key, 'GET', `/v1/events/${second}`)).json().deliveries;
    expect(gone).toMatchObject([{ status: 'failed', reason: 'endpoint_gone', attempts: 1, last_status_code: 410 }]);
    expect((await attemptsOf(api.pool, endpointId, second)).map((a) => a.status_code)).toEqual([410]);

    // The first event's retry reads the endpoint disabled: no second attempt to it.
    expect(await deliveryResult(h.tw.client, first)).toMatchObject({
      endpoints: [{ endpointId, outcome: 'skipped', attempts: 1 }],
    });
    const skipped = (await call(key, 'GET', `/v1/events/${first}`)).json().deliveries;
    expect(skipped).toMatchObject([{ status: 'skipped', reason: 'endpoint_disabled', attempts: 1 }]);
    expect(h.receiver.at('/lc-gone')).toHaveLength(2);

    // A new event is not sent to it either; enabling it again clears the reason.
    const third = await publish(key.account_id, 'p_gone_3');
    const shown = (await call(key, 'GET', `/v1/events/${third}`)).json();
    expect(shown.deliveries).toEqual([]);
    const enabled = await call(key, 'PATCH', `/v1/webhooks/${endpointId}`, { disabled: false });
    expect(enabled.json()).toMatchObject({ status: 'enabled', disabled_reason: null });
    expect(h.receiver.at('/lc-gone')).toHaveLength(2);
  }, 60_000);

  it('a merchant disable has no reason', async () => {
    const { key, endpointId } = await merchantWithEndpoint('/lc-disabled');
    const disabled = await call(key, 'PATCH', `/v1/webhooks/${endpointId}`, { disabled: true });
    expect(disabled.json()).toMatchObject({ status: 'disabled', disabled_reason: null });
  });

  it('declares pause, resume, paused_at and disabled_reason in the OpenAPI document', async () => {
    const doc = (await api.app.inject({ url: '/openapi.json' })).json();
    for (const action of ['pause', 'resume']) expect(doc.paths[`/v1/webhooks/{id}/${action}`].post).toBeDefined();
    const text = JSON.stringify(doc);
    expect(text).toContain('"disabled_reason"');
    expect(text).toContain('"paused_at"');
    expect(text).toContain('"paused"');
  });
});
