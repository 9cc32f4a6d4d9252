import { Webhook } from 'standardwebhooks';
import { Compile } from 'typebox/compile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  OPERATIONAL_EVENT_SCHEMAS,
  OPERATIONAL_EVENT_TYPES,
  type OperationalEventBody,
  type OperationalEventType,
} from '../../../src/core/operational-event-schemas';
import { CLI_ACTOR } from '../../../src/domain/audit-log';
import { pauseEndpoint, resumeEndpoint } from '../../../src/domain/endpoint-lifecycle';
import { updateEndpoint } from '../../../src/domain/endpoints';
import { publishEvent } from '../../../src/domain/events';
import { publishOperationalEvent } from '../../../src/domain/operational-webhooks';
import { withTransaction } from '../../../src/db/pool';
import { constructEvent } from '../../../src/receiver/index';
import type { Config } from '../../../src/infra/config';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { independentlyVerified } from '../../helpers/independent-verifier';
import type { ReceivedRequest } from '../../helpers/receiver';
import { waitFor } from '../../helpers/wait';

const TOKEN = 'internal-token-for-operational-webhooks';
const CHECKS = Object.fromEntries(
  OPERATIONAL_EVENT_TYPES.map((type) => [type, Compile(OPERATIONAL_EVENT_SCHEMAS[type])]),
) as Record<OperationalEventType, ReturnType<typeof Compile>>;

/**
 * Operational webhooks: the parcel system registers endpoints behind the internal token and is told, through the
 * one delivery engine (signed both ways, on the ladder), when a merchant endpoint is marked failing, recovers or is
 * disabled, and when a delivery is abandoned or expires. Real worker, Temporal, Postgres and HTTPS receivers.
 */
describe('operational webhooks', () => {
  let config: Config;
  let api: ApiFixture;
  beforeAll(() => {
    // 3 attempts 50 ms apart; a Retry-After of an hour runs into the 4 s max age.
    config = testConfig({
      INTERNAL_API_TOKEN: TOKEN,
      DELIVERY_RETRY_DELAYS: '50ms,50ms',
      DELIVERY_MAX_AGE: '4s',
    });
  });
  const h = useDeliveryHarness(() => config);
  beforeAll(async () => {
    api = await apiFixture({ config, pool: h.tw.pool });
  });
  afterAll(async () => {
    await api?.close();
  });

  const register = (body: unknown, headers: Record<string, string> = bearer(TOKEN)) =>
    api.app.inject({ method: 'POST', url: '/internal/v1/operational-webhooks', headers, payload: body as object });
  const list = () =>
    api.app.inject({ method: 'GET', url: '/internal/v1/operational-webhooks', headers: bearer(TOKEN) });

  interface Registered {
    id: string;
    secret: string;
    path: string;
  }
  async function registered(path: string, events?: string[]): Promise<Registered> {
    const response = await register({ url: `${h.receiver.url}${path}`, ...(events ? { events } : {}) });
    expect(response.statusCode).toBe(201);
    const body = response.json<{ id: string; secret: string }>();
    return { id: body.id, secret: body.secret, path };
  }

  const bodyOf = (request: ReceivedRequest) => JSON.parse(request.rawBody.toString()) as OperationalEventBody;
  /** What an operational endpoint received about one merchant endpoint, answered or not. */
  const receivedAbout = (path: string, endpointId: string) =>
    h.receiver.at(path).filter((request) => bodyOf(request).data.endpoint.id === endpointId);
  const kindsAbout = (path: string, endpointId: string) =>
    receivedAbout(path, endpointId).map((request) => bodyOf(request).type);

  /** Signed under the operational endpoint's secret, both ways, and of its kind's schema. */
  function expectSignedAndShaped(request: ReceivedRequest, secret: string): OperationalEventBody {
    expect(independentlyVerified(request.headers['service-signature'], request.rawBody, secret)).toBe(true);
    // The receiver kit merchants use accepts it as it is.
    expect(constructEvent(request.rawBody, request.headers['service-signature'], secret).id).toBe(bodyOf(request).id);
    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(() => new Webhook(secret).verify(request.rawBody.toString(), headers)).not.toThrow();
    const body = bodyOf(request);
    expect(headers['webhook-id']).toBe(body.id);
    expect(request.headers['service-event']).toBe(body.type);
    expect(CHECKS[body.type].Check(body)).toBe(true);
    return body;
  }

  describe('registration', () => {
    it('refuses a caller without the internal token (401)', async () => {
      for (const headers of [{}, bearer('wrong')]) {
        const response = await register({ url: `${h.receiver.url}/x` }, headers);
        expect(response.statusCode).toBe(401);
        expect(response.json().error.code).toBe('invalid_internal_token');
      }
      const listed = await api.app.inject({ method: 'GET', url: '/internal/v1/operational-webhooks' });
      expect(listed.statusCode).toBe(401);
      const removed = await api.app.inject({ method: 'DELETE', url: '/internal/v1/operational-webhooks/owe_abc' });
      expect(removed.statusCode).toBe(401);
    });

    it('refuses bad input with the catalogue codes, storing nothing', async () => {
      const before = (await list()).json().data.length;
      const cases: Array<[unknown, string, string | undefined]> = [
        [{}, 'parameter_missing', 'url'],
        [{ url: 'not a url' }, 'invalid_url', undefined],
        [{ url: 'http://ops.example.com/hooks' }, 'url_not_https', undefined],
        [{ url: `${h.receiver.url}/x`, events: ['parcel.delivered'] }, 'unknown_event_type', 'events[0]'],
        [
          { url: `${h.receiver.url}/x`, events: ['endpoint.failing', 'endpoint.failing'] },
          'duplicate_event_type',
          'events[1]',
        ],
        [{ url: `${h.receiver.url}/x`, extra: true }, 'parameter_unknown', undefined],
      ];
      for (const [body, code, param] of cases) {
        const response = await register(body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json().error.code, JSON.stringify(body)).toBe(code);
        if (param) expect(response.json().error.param).toBe(param);
      }
      expect((await list()).json().data.length).toBe(before);
    });

    it('shows the secret once, lists without it, and removes one', async () => {
      const response = await register({ url: `${h.receiver.url}/listed`, events: ['delivery.expired'] });
      expect(response.statusCode).toBe(201);
      const created = response.json();
      expect(created).toMatchObject({
        object: 'operational_webhook_endpoint',
        url: `${h.receiver.url}/listed`,
        events: ['delivery.expired'],
      });
      expect(created.id).toMatch(/^owe_[A-Za-z0-9]+$/);
      expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
      const all = await register({ url: `${h.receiver.url}/listed-all` });
      expect(all.json().events).toEqual([...OPERATIONAL_EVENT_TYPES]);

      const listed = (await list()).json();
      expect(listed.object).toBe('list');
      const shown = listed.data.find((entry: { id: string }) => entry.id === created.id);
      expect(shown).toEqual({
        id: created.id,
        object: 'operational_webhook_endpoint',
        url: created.url,
        events: ['delivery.expired'],
        created: created.created,
      });
      expect(JSON.stringify(listed)).not.toContain(created.secret);

      for (const id of [created.id, all.json().id]) {
        const removed = await api.app.inject({
          method: 'DELETE',
          url: `/internal/v1/operational-webhooks/${id}`,
          headers: bearer(TOKEN),
        });
        expect(removed.statusCode).toBe(200);
        expect(removed.json()).toEqual({ id, object: 'operational_webhook_endpoint', deleted: true });
      }
      const again = await api.app.inject({
        method: 'DELETE',
        url: `/internal/v1/operational-webhooks/${created.id}`,
        headers: bearer(TOKEN),
      });
      expect(again.statusCode).toBe(404);
      expect(again.json().error.code).toBe('resource_missing');
      // A merchant endpoint's id is not an operational one.
      const merchant = await api.app.inject({
        method: 'DELETE',
        url: '/internal/v1/operational-webhooks/we_abc',
        headers: bearer(TOKEN),
      });
      expect(merchant.statusCode).toBe(404);
      expect((await list()).json().data.some((entry: { id: string }) => entry.id === created.id)).toBe(false);
    });
  });

  describe('delivery', () => {
    let all: Registered;
    let expiredOnly: Registered;
    beforeAll(async () => {
      all = await registered('/ops');
      expiredOnly = await registered('/ops-expired', ['delivery.expired']);
    });

    const publish = (accountId: string, livemode: boolean) =>
      publishEvent(
        { pool: h.tw.pool },
        { accountId, livemode, type: 'parcel.returned', data: { parcel: parcel({ status: 'RETURNED' }) } },
      );

    it('the merchant publish API refuses the operational kinds', async () => {
      const accountId = await createAccount(h.tw.pool);
      for (const type of OPERATIONAL_EVENT_TYPES) {
        await expect(
          publishEvent({ pool: h.tw.pool }, { accountId, livemode: false, type, data: { endpoint: {} } }),
        ).rejects.toMatchObject({ code: 'unknown_event_type' });
      }
      const response = await api.app.inject({
        method: 'POST',
        url: '/internal/v1/events',
        headers: bearer(TOKEN),
        payload: { account_id: accountId, livemode: false, type: 'endpoint.failing', data: {} },
      });
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('unknown_event_type');
      // Nor is a merchant event published to the operational endpoints' own account.
      const toOperational = await api.app.inject({
        method: 'POST',
        url: '/internal/v1/events',
        headers: bearer(TOKEN),
        payload: {
          account_id: 'acct_operational',
          livemode: true,
          type: 'parcel.delivered',
          data: { parcel: parcel() },
        },
      });
      expect(toOperational.statusCode).toBe(404);
      expect(toOperational.json().error.code).toBe('resource_missing');
    });

    it('tells of three abandoned deliveries, the failing mark and the recovery, each once, signed', async () => {
      const accountId = await createAccount(h.tw.pool, { email: 'ops@merchant.test' });
      const url = `${h.receiver.url}/merchant-failing/a-secret-path`;
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url, livemode: true });
      let healthy = false;
      h.receiver.script('/merchant-failing/a-secret-path', () => (healthy ? { status: 200 } : { status: 500 }));

      const eventIds: string[] = [];
      for (let i = 0; i < 3; i++) {
        const published = await publish(accountId, true);
        eventIds.push(published.event.id);
        await deliveryResult(h.tw.client, published.event.id);
      }
      await waitFor(() => kindsAbout(all.path, endpoint.id).includes('endpoint.failing'), {
        what: 'endpoint.failing at the operational endpoint',
      });
      healthy = true;
      await deliveryResult(h.tw.client, (await publish(accountId, true)).event.id);
      await waitFor(() => kindsAbout(all.path, endpoint.id).includes('endpoint.recovered'), {
        what: 'endpoint.recovered at the operational endpoint',
      });
      // Every operational delivery of this endpoint has ended: nothing more comes.
      await waitFor(
        async () =>
          (
            await h.tw.pool.query(
              `SELECT count(*)::int AS n FROM deliveries d JOIN events e ON e.id = d.event_id
                WHERE e.account_id = 'acct_operational' AND e.body LIKE '%' || $1 || '%' AND d.status = 'pending'`,
              [endpoint.id],
            )
          ).rows[0].n === 0,
        { what: 'operational deliveries ended' },
      );

      const kinds = kindsAbout(all.path, endpoint.id).sort();
      expect(kinds).toEqual([
        'delivery.abandoned',
        'delivery.abandoned',
        'delivery.abandoned',
        'endpoint.failing',
        'endpoint.recovered',
      ]);
      const bodies = receivedAbout(all.path, endpoint.id).map((request) => expectSignedAndShaped(request, all.secret));
      for (const body of bodies) {
        expect(body).toMatchObject({ account_id: accountId, livemode: true, object: 'event' });
        expect(body.id).toMatch(/^evt_/);
        expect(body.data.endpoint).toMatchObject({ id: endpoint.id, url });
      }
      const abandoned = bodies.filter((body) => body.type === 'delivery.abandoned');
      expect(abandoned.map((body) => body.data.delivery?.event_id).sort()).toEqual([...eventIds].sort());
      for (const body of abandoned) {
        expect(body.data.delivery).toMatchObject({
          event_type: 'parcel.returned',
          attempts: 3,
          reason: 'attempts_exhausted',
        });
      }
      expect(bodies.find((body) => body.type === 'endpoint.failing')?.data.endpoint.status).toBe('failing');
      expect(bodies.find((body) => body.type === 'endpoint.recovered')?.data.endpoint.status).toBe('enabled');
      expect(kindsAbout(expiredOnly.path, endpoint.id)).toEqual([]);

      // A delivery like any other: its workflow is in Temporal, and its history holds no URL path.
      const failing = bodies.find((body) => body.type === 'endpoint.failing')!;
      const handle = h.tw.client.workflow.getHandle(`event:${failing.id}`);
      expect((await handle.describe()).status.name).toBe('COMPLETED');
      const history = JSON.stringify(await handle.fetchHistory());
      expect(history).not.toContain('a-secret-path');
      expect(history).not.toContain('/ops');

      // The merchant is still emailed once for the mark: its notification row, one.
      const { rows } = await h.tw.pool.query('SELECT kind FROM notifications WHERE endpoint_id = $1', [endpoint.id]);
      expect(rows).toEqual([{ kind: 'endpoint_failing' }]);
    });

    it('tells of an expired delivery, to the endpoint that takes only that kind too', async () => {
      const accountId = await createAccount(h.tw.pool);
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-slow` });
      h.receiver.script('/merchant-slow', { status: 503, headers: { 'retry-after': '3600' } });
      const published = await publish(accountId, false);
      expect(await deliveryResult(h.tw.client, published.event.id)).toMatchObject({
        endpoints: [{ endpointId: endpoint.id, outcome: 'expired' }],
      });
      for (const target of [all, expiredOnly]) {
        const [request] = await waitFor(
          () => {
            const found = receivedAbout(target.path, endpoint.id);
            return found.length > 0 ? found : undefined;
          },
          { what: `delivery.expired at ${target.path}` },
        );
        const body = expectSignedAndShaped(request!, target.secret);
        expect(body).toMatchObject({
          type: 'delivery.expired',
          account_id: accountId,
          livemode: false,
          data: {
            endpoint: { id: endpoint.id, status: 'enabled' },
            delivery: { event_id: published.event.id, event_type: 'parcel.returned', attempts: 1, reason: 'expired' },
          },
        });
      }
      // The expired delivery is not an abandonment: no delivery.abandoned for it.
      expect(kindsAbout(all.path, endpoint.id)).toEqual(['delivery.expired']);
    });

    it('tells of a merchant disabling an endpoint, retrying on the ladder while the receiver fails', async () => {
      const flaky = await registered('/ops-flaky', ['endpoint.disabled']);
      h.receiver.script('/ops-flaky', (index) => (index < 2 ? { status: 500 } : { status: 200 }));
      const accountId = await createAccount(h.tw.pool);
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-disabled` });
      await updateEndpoint(
        { pool: h.tw.pool, config },
        { accountId, livemode: false },
        endpoint.id,
        { disabled: true },
        CLI_ACTOR,
      );

      const requests = await waitFor(
        () => {
          const found = receivedAbout(flaky.path, endpoint.id);
          return found.length === 3 ? found : undefined;
        },
        { what: 'three attempts at the flaky operational endpoint' },
      );
      const bodies = requests.map((request) => expectSignedAndShaped(request, flaky.secret));
      expect(new Set(bodies.map((body) => body.id)).size).toBe(1);
      expect(new Set(requests.map((request) => request.headers['service-delivery'])).size).toBe(3);
      expect(bodies[0]).toMatchObject({
        type: 'endpoint.disabled',
        account_id: accountId,
        livemode: false,
        data: { endpoint: { id: endpoint.id, status: 'disabled' } },
      });
      expect(bodies[0]!.data.delivery).toBeUndefined();
      await waitFor(async () => (await deliveryResult(h.tw.client, bodies[0]!.id)) !== undefined, {
        what: 'the operational delivery ended',
      });
      const { rows } = await h.tw.pool.query('SELECT status, attempts FROM deliveries WHERE endpoint_id = $1', [
        flaky.id,
      ]);
      expect(rows).toEqual([{ status: 'succeeded', attempts: 3 }]);
      // The endpoint that takes every kind was told once; the expired-only one not at all.
      expect(kindsAbout(all.path, endpoint.id)).toEqual(['endpoint.disabled']);
      expect(kindsAbout(expiredOnly.path, endpoint.id)).toEqual([]);
    });

    it('tells of a merchant pausing and resuming an endpoint, once each, and of the engine disabling it on a 410', async () => {
      const lifecycle = await registered('/ops-lifecycle', [
        'endpoint.paused',
        'endpoint.resumed',
        'endpoint.disabled',
      ]);
      const accountId = await createAccount(h.tw.pool, { status: 'active' });
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-lifecycle` });
      const scope = { accountId, livemode: false };
      await pauseEndpoint({ pool: h.tw.pool, config }, scope, endpoint.id, CLI_ACTOR);
      // Pausing again changes nothing and tells nothing.
      await pauseEndpoint({ pool: h.tw.pool, config }, scope, endpoint.id, CLI_ACTOR);
      await waitFor(() => kindsAbout(lifecycle.path, endpoint.id).length === 1, { what: 'endpoint.paused' });
      await resumeEndpoint({ pool: h.tw.pool, config }, scope, endpoint.id, CLI_ACTOR);
      await waitFor(() => kindsAbout(lifecycle.path, endpoint.id).length === 2, { what: 'endpoint.resumed' });
      h.receiver.script('/merchant-lifecycle', { status: 410 });
      await publishEvent(
        { pool: h.tw.pool },
        { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
      );
      await waitFor(() => kindsAbout(lifecycle.path, endpoint.id).length === 3, { what: 'endpoint.disabled' });
      const bodies = receivedAbout(lifecycle.path, endpoint.id).map((r) => expectSignedAndShaped(r, lifecycle.secret));
      expect(bodies.map((b) => [b.type, b.data.endpoint.status])).toEqual([
        ['endpoint.paused', 'paused'],
        ['endpoint.resumed', 'enabled'],
        ['endpoint.disabled', 'disabled'],
      ]);
    });

    it("never holds up a merchant's deliveries: they go out while an operational receiver keeps its post open", async () => {
      const stuck = await registered('/ops-stuck', ['endpoint.paused']);
      let release!: () => void;
      const answered = new Promise<void>((resolve) => (release = resolve));
      h.receiver.script('/ops-stuck', { status: 200, until: answered });
      try {
        const accountId = await createAccount(h.tw.pool, { status: 'active' });
        const paused = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-paused` });
        await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-beside-stuck` });
        await pauseEndpoint({ pool: h.tw.pool, config }, { accountId, livemode: false }, paused.id, CLI_ACTOR);
        await waitFor(() => receivedAbout(stuck.path, paused.id).length === 1, { what: 'the stuck operational post' });
        const eventIds: string[] = [];
        for (let i = 0; i < 3; i++)
          eventIds.push(
            (
              await publishEvent(
                { pool: h.tw.pool },
                { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
              )
            ).event.id,
          );
        // The merchant's unpaused endpoint has every event while the operational post is still unanswered.
        await waitFor(() => h.receiver.at('/merchant-beside-stuck').length === 3, {
          what: "the merchant's deliveries",
          timeoutMs: 30_000,
        });
        expect(h.receiver.at('/merchant-beside-stuck').map((r) => bodyOf(r).id)).toEqual(
          expect.arrayContaining(eventIds),
        );
        expect(receivedAbout(stuck.path, paused.id)).toHaveLength(1);
      } finally {
        release();
      }
    });

    it('tells of a delivery ended by a 410 Gone as abandoned with the reason endpoint_gone', async () => {
      const accountId = await createAccount(h.tw.pool, { status: 'active' });
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-gone` });
      h.receiver.script('/merchant-gone', { status: 410 });
      const published = await publish(accountId, false);
      await deliveryResult(h.tw.client, published.event.id);
      const told = await waitFor(
        () => {
          const found = receivedAbout(all.path, endpoint.id);
          return found.length === 2 ? found : undefined;
        },
        { what: 'endpoint.disabled and delivery.abandoned at the operational endpoint' },
      );
      const bodies = told.map((request) => expectSignedAndShaped(request, all.secret));
      expect(bodies.map((body) => body.type).sort()).toEqual(['delivery.abandoned', 'endpoint.disabled']);
      const abandoned = bodies.find((body) => body.type === 'delivery.abandoned')!;
      expect(abandoned.data).toMatchObject({
        endpoint: { id: endpoint.id, status: 'disabled' },
        delivery: { event_id: published.event.id, event_type: 'parcel.returned', attempts: 1, reason: 'endpoint_gone' },
      });
      // As the merchant's deliveries log has it.
      const { rows } = await h.tw.pool.query('SELECT status, reason, attempts FROM deliveries WHERE event_id = $1', [
        published.event.id,
      ]);
      expect(rows).toEqual([{ status: 'failed', reason: 'endpoint_gone', attempts: 1 }]);
      expect(kindsAbout(expiredOnly.path, endpoint.id)).toEqual([]);
    });

    it('publishOperationalEvent stores an event only with the transaction that makes the change', async () => {
      const accountId = await createAccount(h.tw.pool);
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-paused` });
      const count = async () =>
        (
          await h.tw.pool.query(
            `SELECT count(*)::int AS n FROM events WHERE account_id = 'acct_operational' AND body LIKE '%' || $1 || '%'`,
            [endpoint.id],
          )
        ).rows[0].n as number;
      await expect(
        withTransaction(h.tw.pool, async (tx) => {
          await publishOperationalEvent(tx, 'endpoint.paused', { endpointId: endpoint.id });
          throw new Error('rolled back');
        }),
      ).rejects.toThrow('rolled back');
      expect(await count()).toBe(0);
      const id = await withTransaction(h.tw.pool, (tx) =>
        publishOperationalEvent(tx, 'endpoint.paused', { endpointId: endpoint.id }),
      );
      expect(id).toMatch(/^evt_/);
      const [request] = await waitFor(
        () => {
          const found = receivedAbout(all.path, endpoint.id);
          return found.length > 0 ? found : undefined;
        },
        { what: 'endpoint.paused at the operational endpoint' },
      );
      expect(expectSignedAndShaped(request!, all.secret)).toMatchObject({ id, type: 'endpoint.paused' });

      // Nothing about an operational endpoint itself, nor about a `listen` session's endpoint.
      const listening = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/merchant-listen` });
      await h.tw.pool.query(`UPDATE webhook_endpoints SET local_certificate = 'pem' WHERE id = $1`, [listening.id]);
      for (const endpointId of [all.id, listening.id]) {
        expect(
          await withTransaction(h.tw.pool, (tx) => publishOperationalEvent(tx, 'endpoint.paused', { endpointId })),
        ).toBeNull();
      }
    });
  });
});
