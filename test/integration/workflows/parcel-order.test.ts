import { beforeEach, describe, expect, it } from 'vitest';
import { deleteEndpoint, registerEndpoint } from '../../../src/domain/endpoints';
import { publishEvent } from '../../../src/domain/events';
import type { Pool } from '../../../src/db/pool';
import { deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import type { ReceivedRequest } from '../../helpers/receiver';
import { waitFor } from '../../helpers/wait';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/** Order per parcel: sequence numbers at publish, and ordered endpoints posted one parcel event at a time. */
describe('order per parcel', () => {
  // Three attempts two seconds apart: long enough to see a successor held back while its predecessor retries.
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '2s,2s', DELIVERY_TIMEOUT: '1s' });
  const h = useDeliveryHarness(config);
  let accountId: string;
  const scope = () => ({ accountId, livemode: false });

  beforeEach(async () => {
    accountId = await createAccount(h.tw.pool);
  });

  const endpointAt = async (pathname: string, ordering: 'none' | 'parcel') =>
    (
      await registerEndpoint(
        { pool: h.tw.pool, config },
        scope(),
        { url: `${h.receiver.url}${pathname}`, ordering },
        CLI_ACTOR,
      )
    ).id;

  const publish = async (parcelId: string, type = 'parcel.in_transit', livemode = false, account = accountId) =>
    (
      await publishEvent(
        { pool: h.tw.pool },
        { accountId: account, livemode, type, data: { parcel: parcel({ id: parcelId }) } },
      )
    ).event;

  const bodyOf = (request: ReceivedRequest) =>
    JSON.parse(request.rawBody.toString()) as { id: string; sequence?: number };
  const idsAt = (pathname: string) => h.receiver.at(pathname).map((r) => bodyOf(r).id);

  async function deliveryOf(pool: Pool, eventId: string, endpointId: string) {
    const { rows } = await pool.query<{
      status: string;
      reason: string | null;
      waiting_for: string | null;
      attempts: number;
    }>(
      `SELECT status, reason, waiting_for, attempts FROM deliveries WHERE event_id = $1 AND endpoint_id = $2 AND trigger = 'automatic'`,
      [eventId, endpointId],
    );
    return rows[0]!;
  }

  it('numbers each parcel 1..n in publish order, per account and mode, in the posted body', async () => {
    await endpointAt('/numbered', 'none');
    const a = [await publish('p_a'), await publish('p_a'), await publish('p_a')];
    const b = [await publish('p_b'), await publish('p_b')];
    const live = await publish('p_a', 'parcel.in_transit', true);
    const otherAccount = await publish('p_a', 'parcel.in_transit', false, await createAccount(h.tw.pool));
    const settlement = await publishEvent(
      { pool: h.tw.pool },
      {
        accountId,
        livemode: false,
        type: 'cod.settled',
        data: {
          cod_settlement: {
            id: 'cs_1',
            parcel_id: 'p_a',
            parcel_number: 'PCL-1',
            amount: 350,
            currency: 'KES',
            settled_at: 1764000000,
          },
        },
      },
    );
    expect(a.map((e) => e.sequence)).toEqual([1, 2, 3]);
    expect(b.map((e) => e.sequence)).toEqual([1, 2]);
    expect([live.sequence, otherAccount.sequence]).toEqual([1, 1]);
    // A settlement is one of its parcel's events: the parcel's next number.
    expect(settlement.event.sequence).toBe(4);
    // Publishing an id again returns the earlier event and takes no number.
    const again = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, id: a[0]!.id, type: 'parcel.in_transit', data: { parcel: parcel({ id: 'p_a' }) } },
    );
    expect(again.event.sequence).toBe(1);
    expect((await publish('p_a')).sequence).toBe(5);

    await waitFor(() => h.receiver.at('/numbered').length >= 7, { what: 'the account’s seven events posted' });
    const posted = new Map(h.receiver.at('/numbered').map((r) => [bodyOf(r).id, bodyOf(r)]));
    expect(a.map((e) => posted.get(e.id)?.sequence)).toEqual([1, 2, 3]);
    expect(posted.get(settlement.event.id)?.sequence).toBe(4);
    // The body ends with the number, as stored and signed.
    expect(
      h.receiver
        .at('/numbered')
        .find((r) => bodyOf(r).id === a[2]!.id)!
        .rawBody.toString(),
    ).toMatch(/,"sequence":3}$/);
  });

  it('holds event 2 while event 1 retries, posts it once event 1 is abandoned, and holds up nothing else', async () => {
    const ordered = await endpointAt('/ordered', 'parcel');
    const unordered = await endpointAt('/unordered', 'none');
    const first = await publish('p_1', 'parcel.created');
    h.receiver.script('/ordered', (_, request) => ({ status: bodyOf(request).id === first.id ? 500 : 200 }));
    const second = await publish('p_1', 'parcel.in_transit');
    const otherParcel = await publish('p_2', 'parcel.created');

    // The other parcel and the unordered endpoint are not held up; the second waits and says for what.
    await waitFor(() => idsAt('/ordered').includes(otherParcel.id), { what: 'the other parcel posted' });
    await waitFor(() => idsAt('/unordered').includes(second.id), { what: 'the unordered endpoint served' });
    await waitFor(async () => (await deliveryOf(h.tw.pool, second.id, ordered)).waiting_for === first.id, {
      what: 'the second delivery marked waiting for the first',
    });
    expect(idsAt('/ordered').filter((id) => id === first.id).length).toBeLessThan(3);

    await deliveryResult(h.tw.client, second.id);
    const arrivals = h.receiver.at('/ordered').map((r) => ({ id: bodyOf(r).id, at: r.receivedAt }));
    const firstAttempts = arrivals.filter((r) => r.id === first.id);
    const secondAt = arrivals.find((r) => r.id === second.id)!.at;
    expect(firstAttempts).toHaveLength(3);
    for (const attempt of firstAttempts) expect(attempt.at).toBeLessThan(secondAt);
    expect(await deliveryOf(h.tw.pool, first.id, ordered)).toMatchObject({
      status: 'failed',
      reason: 'attempts_exhausted',
    });
    expect(await deliveryOf(h.tw.pool, second.id, ordered)).toMatchObject({ status: 'succeeded', attempts: 1 });
    expect(await deliveryOf(h.tw.pool, second.id, unordered)).toMatchObject({ status: 'succeeded' });

    // The wait is a timer the Temporal UI shows with its reason.
    const history = await h.tw.client.workflow.getHandle(`event:${second.id}`).fetchHistory();
    const summaries = (history.events ?? [])
      .filter((e) => e.timerStartedEventAttributes)
      .map((e) => e.userMetadata?.summary?.data && Buffer.from(e.userMetadata.summary.data).toString());
    expect(
      summaries.some((s) =>
        s?.includes(`waiting for ${first.id} (parcel p_1, sequence 1) before attempt 1 to ${ordered}`),
      ),
    ).toBe(true);
  });

  it('posts a chain in order as each predecessor succeeds', async () => {
    await endpointAt('/chain', 'parcel');
    // The first event's first attempt fails: without order, the later ones would overtake its retry.
    h.receiver.script('/chain', (index) => ({ status: index === 0 ? 500 : 200 }));
    const events = [];
    for (let i = 0; i < 5; i++) events.push(await publish('p_chain'));
    await Promise.all(events.map((e) => deliveryResult(h.tw.client, e.id)));
    expect(h.receiver.at('/chain').map((r) => bodyOf(r).sequence)).toEqual([1, 1, 2, 3, 4, 5]);
  });

  it('releases every waiter when the endpoint is removed: all end skipped', async () => {
    const removed = await endpointAt('/removed', 'parcel');
    h.receiver.script('/removed', { status: 500 });
    const events = [await publish('p_gone'), await publish('p_gone'), await publish('p_gone')];
    await waitFor(() => idsAt('/removed').includes(events[0]!.id), { what: 'the head of the lane attempted' });
    await waitFor(async () => (await deliveryOf(h.tw.pool, events[2]!.id, removed)).waiting_for === events[1]!.id, {
      what: 'the third delivery waiting for the second',
    });
    await deleteEndpoint({ pool: h.tw.pool, config }, scope(), removed, CLI_ACTOR);

    for (const event of events) await deliveryResult(h.tw.client, event.id);
    for (const event of events) {
      expect(await deliveryOf(h.tw.pool, event.id, removed)).toMatchObject({
        status: 'skipped',
        reason: 'endpoint_deleted',
      });
    }
    expect(idsAt('/removed').filter((id) => id !== events[0]!.id)).toEqual([]);
  });
});
