import { beforeEach, describe, expect, it } from 'vitest';
import { LATEST_API_VERSION } from '../../../src/core/versions';
import { registerEndpoint, updateEndpoint } from '../../../src/domain/endpoints';
import { publishEvent } from '../../../src/domain/events';
import { resendEvent } from '../../../src/domain/redelivery';
import { constructEvent, type ParcelEvent_2026_11_21 } from '../../../src/receiver/index';
import { deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import type { ReceivedRequest } from '../../helpers/receiver';
import { waitFor } from '../../helpers/wait';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/**
 * API versions end to end: one stored event, posted to each endpoint in its pinned version, signed over those
 * bytes and verified with the receiver kit; a settlement in its parcel's ordered lane.
 */
describe('API versions', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '1s,1s', DELIVERY_TIMEOUT: '5s' });
  const h = useDeliveryHarness(config);
  let accountId: string;
  const scope = () => ({ accountId, livemode: false });

  beforeEach(async () => {
    accountId = await createAccount(h.tw.pool);
  });

  const endpointAt = (pathname: string, options: { api_version?: string; ordering?: 'none' | 'parcel' } = {}) =>
    registerEndpoint(
      { pool: h.tw.pool, config },
      scope(),
      { url: `${h.receiver.url}${pathname}`, ...options },
      CLI_ACTOR,
    );

  const header = (request: ReceivedRequest, name: string) => request.headers[name] as string | undefined;
  const idOf = (request: ReceivedRequest) => (JSON.parse(request.rawBody.toString()) as { id: string }).id;

  // The parcel system's call of today: the settlement names its parcel itself.
  const settlementAsBefore = (parcelId: string) => ({
    cod_settlement: {
      id: 'cods_1',
      parcel_id: parcelId,
      parcel_number: 'PCL-104233',
      amount: 350,
      currency: 'KES',
      settled_at: 1764000000,
    },
  });

  it('posts one settlement to two endpoints in their two versions, each signed over its own bytes', async () => {
    const newest = await endpointAt('/newest');
    const older = await endpointAt('/older', { api_version: '2026-11-21' });
    expect([newest.api_version, older.api_version]).toEqual([LATEST_API_VERSION, '2026-11-21']);
    await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel({ id: 'p_two' }) } },
    );
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'cod.settled', data: settlementAsBefore('p_two') },
    );
    await deliveryResult(h.tw.client, published.event.id);

    const [atNewest] = h.receiver.at('/newest').filter((r) => idOf(r) === published.event.id);
    const [atOlder] = h.receiver.at('/older').filter((r) => idOf(r) === published.event.id);
    expect(header(atNewest!, 'service-version')).toBe('2026-12-01');
    expect(header(atOlder!, 'service-version')).toBe('2026-11-21');
    // No sunset is set for either version: no Deprecation or Sunset header.
    expect([header(atOlder!, 'deprecation'), header(atOlder!, 'sunset')]).toEqual([undefined, undefined]);

    const stored = await h.tw.pool.query<{ body: string }>('SELECT body FROM events WHERE id = $1', [
      published.event.id,
    ]);
    expect(atNewest!.rawBody.toString()).toBe(stored.rows[0]!.body);
    expect(atOlder!.rawBody.equals(atNewest!.rawBody)).toBe(false);

    const received = constructEvent(atNewest!.rawBody, header(atNewest!, 'service-signature'), newest.secret);
    const receivedOlder = constructEvent(
      atOlder!.rawBody,
      header(atOlder!, 'service-signature'),
      older.secret,
    ) as unknown as ParcelEvent_2026_11_21;
    expect(received).toMatchObject({
      type: 'cod.settled',
      sequence: 2,
      data: {
        parcel: { id: 'p_two', parcel_number: 'PCL-104233' },
        cod_settlement: { id: 'cods_1', amount: 350, currency: 'KES', settled_at: 1764000000 },
      },
    });
    expect(received.data).not.toHaveProperty('cod_settlement.parcel_id');
    expect(receivedOlder).toEqual({
      ...received,
      data: {
        cod_settlement: {
          id: 'cods_1',
          parcel_id: 'p_two',
          parcel_number: 'PCL-104233',
          amount: 350,
          currency: 'KES',
          settled_at: 1764000000,
        },
      },
    });
    // Each signature covers its own bytes only.
    expect(() => constructEvent(atOlder!.rawBody, header(atNewest!, 'service-signature'), newest.secret)).toThrow();

    // A change of version applies to deliveries made after it: a resend now renders the newest.
    await updateEndpoint(
      { pool: h.tw.pool, config },
      scope(),
      older.id,
      { api_version: LATEST_API_VERSION },
      CLI_ACTOR,
    );
    await resendEvent({ pool: h.tw.pool, config }, scope(), published.event.id, { endpointId: older.id });
    const before = h.receiver.at('/older').filter((r) => idOf(r) === published.event.id).length;
    await waitFor(() => h.receiver.at('/older').filter((r) => idOf(r) === published.event.id).length > before, {
      what: 'the resend posted',
    });
    // The last: the automatic delivery's attempts all ended before the resend was made.
    const resent = h.receiver
      .at('/older')
      .filter((r) => idOf(r) === published.event.id)
      .at(-1)!;
    expect(header(resent, 'service-version')).toBe(LATEST_API_VERSION);
    expect(resent.rawBody.toString()).toBe(stored.rows[0]!.body);
  });

  it('an ordered endpoint gets a parcel’s settlement only after its parcel.delivered, on every version', async () => {
    const ordered = await endpointAt('/ordered-settle', { ordering: 'parcel', api_version: '2026-11-21' });
    // The delivery's first attempt fails: without order, the settlement would overtake its retry.
    h.receiver.script('/ordered-settle', (index) => ({ status: index === 0 ? 500 : 200 }));
    const delivered = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel({ id: 'p_settle' }) } },
    );
    const settled = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'cod.settled', data: settlementAsBefore('p_settle') },
    );
    expect([delivered.event.sequence, settled.event.sequence]).toEqual([1, 2]);
    await deliveryResult(h.tw.client, settled.event.id);
    await deliveryResult(h.tw.client, delivered.event.id);

    const arrivals = h.receiver.at('/ordered-settle').map((r) => ({ id: idOf(r), body: r.rawBody.toString() }));
    expect(arrivals.map((a) => a.id)).toEqual([delivered.event.id, delivered.event.id, settled.event.id]);
    expect(JSON.parse(arrivals[2]!.body)).toMatchObject({
      sequence: 2,
      data: { cod_settlement: { parcel_id: 'p_settle' } },
    });
    const { rows } = await h.tw.pool.query<{ status: string }>(
      `SELECT status FROM deliveries WHERE event_id = $1 AND endpoint_id = $2`,
      [settled.event.id, ordered.id],
    );
    expect(rows).toEqual([{ status: 'succeeded' }]);
  });
});
