import { createHmac, timingSafeEqual } from 'node:crypto';
import { WorkflowNotFoundError } from '@temporalio/client';
import { beforeEach, describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/** Written here from the signature scheme as merchants read it (src/receiver/README.md), independent of src/core/signing.ts. */
function verifySignature(header: string, rawBody: Buffer, secret: string, toleranceS = 300): boolean {
  const parts = header.split(',').map((chunk) => chunk.split('=', 2) as [string, string]);
  const t = parts.find(([k]) => k === 't')?.[1];
  const v1s = parts.filter(([k]) => k === 'v1').map(([, v]) => v);
  if (!t || v1s.length === 0) return false;
  if (Math.abs(Date.now() / 1000 - Number(t)) > toleranceS) return false;
  const expected = createHmac('sha256', secret)
    .update(Buffer.concat([Buffer.from(`${t}.`), rawBody]))
    .digest();
  return v1s.some((v) => {
    const given = Buffer.from(v, 'hex');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
}

describe('delivery: success, retries, abandonment', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '50ms,50ms,50ms,50ms,50ms', DELIVERY_TIMEOUT: '2s' });
  const h = useDeliveryHarness(config);
  let accountId: string;
  const publish = (input: { type?: string; data?: unknown; id?: string; livemode?: boolean }) =>
    publishEvent(
      { pool: h.tw.pool },
      {
        accountId,
        livemode: input.livemode ?? false,
        type: input.type ?? 'parcel.delivered',
        data: input.data ?? { parcel: parcel() },
        id: input.id,
      },
    );

  // One account per test: every endpoint of an account receives its events.
  beforeEach(async () => {
    accountId = await createAccount(h.tw.pool);
  });

  it('delivers on the first attempt, signed, with the stored bytes and the recorded attempt id', async () => {
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/ok` });
    h.receiver.script('/ok', { status: 200, body: 'stored' });
    const published = await publish({});
    expect(published.endpointIds).toEqual([endpoint.id]);
    expect(published.event).toMatchObject({ object: 'event', type: 'parcel.delivered', livemode: false });
    expect(published.event.id).toMatch(/^evt_/);

    const result = await deliveryResult(h.tw.client, published.event.id);
    expect(result).toMatchObject({ endpoints: [{ endpointId: endpoint.id, outcome: 'delivered', attempts: 1 }] });

    const [request] = h.receiver.at('/ok');
    const { rows } = await h.tw.pool.query('SELECT body FROM events WHERE id = $1', [published.event.id]);
    expect(request?.rawBody.toString()).toBe(rows[0].body);
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['user-agent']).toMatch(/^ParcelWebhooks\//);
    expect(request?.headers['service-event']).toBe('parcel.delivered');
    expect(verifySignature(String(request?.headers['service-signature']), request!.rawBody, endpoint.secret)).toBe(
      true,
    );
    expect(verifySignature(String(request?.headers['service-signature']), request!.rawBody, 'whsec_wrong')).toBe(false);
    const body = JSON.parse(request!.rawBody.toString());
    expect(body).toMatchObject({
      id: published.event.id,
      object: 'event',
      created: published.event.created,
      data: { parcel: { status: 'DELIVERED' } },
    });

    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      attempt: 1,
      status_code: 200,
      response_body: 'stored',
      error: null,
      succeeded: true,
    });
    expect(attempts[0]?.id).toBe(request?.headers['service-delivery']);
    expect(attempts[0]?.id).toMatch(/^dlv_[0-9a-f]{32}$/);
  });

  it('retries failures and succeeds at attempt 3 with the same event and bytes each time', async () => {
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/flaky` });
    h.receiver.script('/flaky', (index) => (index < 2 ? { status: 503, body: 'busy' } : { status: 204, body: '' }));
    const published = await publish({ type: 'parcel.in_transit', data: { parcel: parcel({ status: 'IN_TRANSIT' }) } });
    const result = await deliveryResult(h.tw.client, published.event.id);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 3 }] });

    const requests = h.receiver.at('/flaky');
    expect(requests).toHaveLength(3);
    expect(new Set(requests.map((r) => r.rawBody.toString('hex'))).size).toBe(1);
    for (const r of requests)
      expect(verifySignature(String(r.headers['service-signature']), r.rawBody, endpoint.secret)).toBe(true);
    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.succeeded, a.error])).toEqual([
      [1, 503, false, null],
      [2, 503, false, null],
      [3, 204, true, null],
    ]);
    expect(attempts.map((a) => a.id)).toEqual(requests.map((r) => r.headers['service-delivery']));
    expect(new Set(attempts.map((a) => a.id)).size).toBe(3);
  });

  it('abandons after six failed attempts', async () => {
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/down` });
    h.receiver.script('/down', { status: 500, body: 'boom' });
    const published = await publish({});
    const result = await deliveryResult(h.tw.client, published.event.id);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'abandoned', attempts: 6 }] });
    expect(h.receiver.at('/down')).toHaveLength(6);
    const attempts = await attemptsOf(h.tw.pool, endpoint.id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(attempts.every((a) => !a.succeeded && a.status_code === 500 && a.response_body === 'boom')).toBe(true);
    // The supervisor counts the abandonment in its own workflow, after this one completed: wait for its write.
    const endpointRow = async () =>
      (await h.tw.pool.query('SELECT abandoned_streak, status FROM webhook_endpoints WHERE id = $1', [endpoint.id]))
        .rows[0];
    await waitFor(async () => (await endpointRow())?.abandoned_streak === 1, { what: 'the abandoned streak' });
    expect(await endpointRow()).toEqual({ abandoned_streak: 1, status: 'enabled' });
  });

  it('treats the same id twice as one event and one delivery', async () => {
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/idem` });
    const id = `evt_idem_${Date.now()}`;
    const first = await publish({ id });
    const second = await publish({ id, data: { parcel: parcel({ description: 'changed' }) } });
    expect(first.created).toBe(true);
    expect(second.created).toBe(false);
    expect(second.event).toEqual(first.event);
    await deliveryResult(h.tw.client, id);
    expect(h.receiver.at('/idem')).toHaveLength(1);
    expect(await attemptsOf(h.tw.pool, endpoint.id)).toHaveLength(1);
  });

  it('treats the same id published 20 times at once as one event, one workflow, one delivery per endpoint', async () => {
    const endpoints = [
      await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/race-a` }),
      await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/race-b` }),
    ];
    const id = `evt_race_${Date.now()}`;
    const results = await Promise.all(Array.from({ length: 20 }, () => publish({ id })));
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(new Set(results.map((r) => JSON.stringify(r.event))).size).toBe(1);
    expect(new Set(results.map((r) => r.workflowId))).toEqual(new Set([`event:${id}`]));
    await deliveryResult(h.tw.client, id);
    const { rows } = await h.tw.pool.query('SELECT count(*)::int AS n FROM events WHERE id = $1', [id]);
    expect(rows[0].n).toBe(1);
    // Visibility lists the workflow once the server has loaded its record (about once a second): awaited.
    const runs = await waitFor(
      async () => {
        const listed = [];
        for await (const run of h.tw.client.workflow.list({ query: `WorkflowId = "event:${id}"` })) listed.push(run);
        return listed.length > 0 ? listed : undefined;
      },
      { what: 'the workflow in visibility' },
    );
    expect(runs).toHaveLength(1);
    expect(h.receiver.at('/race-a')).toHaveLength(1);
    expect(h.receiver.at('/race-b')).toHaveLength(1);
    for (const endpoint of endpoints) expect(await attemptsOf(h.tw.pool, endpoint.id)).toHaveLength(1);
  });

  it(
    'does not deliver again when an id is re-published after Temporal forgot its finished workflow (retention)',
    { timeout: 120_000 },
    async () => {
      const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/retention` });
      const id = `evt_retention_${Date.now()}`;
      await publish({ id });
      await deliveryResult(h.tw.client, id);
      // What the namespace's retention period does to a finished workflow.
      await h.tw.client.workflowService.deleteWorkflowExecution({
        namespace: config.temporal.namespace,
        workflowExecution: { workflowId: `event:${id}` },
      });
      await waitFor(
        async () =>
          h.tw.client.workflow
            .getHandle(`event:${id}`)
            .describe()
            .then(
              () => false,
              (err) => err instanceof WorkflowNotFoundError,
            ),
        // Deletion is asynchronous in Temporal and slow under load.
        { what: 'the workflow to be deleted', timeoutMs: 90_000, intervalMs: 200 },
      );
      const again = await publish({ id });
      expect(again.created).toBe(false);
      // publishEvent awaits the start of any workflow it starts: none exists, so nothing can deliver again.
      const restarted = await h.tw.client.workflow
        .getHandle(`event:${id}`)
        .describe()
        .then(
          () => true,
          () => false,
        );
      expect(restarted).toBe(false);
      expect(h.receiver.at('/retention')).toHaveLength(1);
      expect(await attemptsOf(h.tw.pool, endpoint.id)).toHaveLength(1);
    },
  );

  it("fans out by mode and subscription, and refuses another account's id", async () => {
    const other = await createAccount(h.tw.pool);
    const all = await createEndpoint(h.tw.pool, { accountId: other, url: `${h.receiver.url}/fan-all`, livemode: true });
    const cod = await createEndpoint(h.tw.pool, {
      accountId: other,
      url: `${h.receiver.url}/fan-cod`,
      livemode: true,
      events: ['cod.settled'],
    });
    await createEndpoint(h.tw.pool, { accountId: other, url: `${h.receiver.url}/fan-test`, livemode: false });
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId: other, livemode: true, type: 'parcel.created', data: { parcel: parcel({ status: 'CREATED' }) } },
    );
    expect(published.endpointIds).toEqual([all.id]);
    expect(published.endpointIds).not.toContain(cod.id);
    await deliveryResult(h.tw.client, published.event.id);
    expect(h.receiver.at('/fan-all')).toHaveLength(1);
    expect(h.receiver.at('/fan-test')).toHaveLength(0);

    await expect(publish({ id: published.event.id })).rejects.toMatchObject({
      code: 'idempotency_conflict',
      status: 409,
    });
  });

  it('validates type, id and data', async () => {
    await expect(publish({ type: 'parcel.lost' })).rejects.toMatchObject({ code: 'unknown_event_type' });
    await expect(publish({ id: 'evt_bad-id' })).rejects.toMatchObject({
      code: 'parameter_invalid',
      extra: { param: 'id' },
    });
    await expect(publish({ data: { parcel: { status: 'DELIVERED' } } })).rejects.toMatchObject({
      code: 'invalid_event_data',
      extra: { param: 'data.parcel.id' },
    });
    await expect(publish({ data: { parcel: parcel({ total_fee: '350' }) } })).rejects.toMatchObject({
      code: 'invalid_event_data',
      status: 400,
      extra: { param: 'data.parcel.total_fee' },
    });
    await expect(publish({ type: 'cod.settled', data: { parcel: parcel() } })).rejects.toMatchObject({
      code: 'invalid_event_data',
      extra: { param: 'data.cod_settlement' },
    });
    await expect(
      publishEvent(
        { pool: h.tw.pool },
        { accountId: 'acct_nope', livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
      ),
    ).rejects.toMatchObject({ code: 'resource_missing', status: 404 });
  });
});
