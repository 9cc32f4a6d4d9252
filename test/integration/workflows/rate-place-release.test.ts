import { beforeEach, describe, expect, it } from 'vitest';
import { registerEndpoint, updateEndpoint } from '../../../src/domain/endpoints';
import { publishEvent } from '../../../src/domain/events';
import { deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

const PLACES = 1000;

/**
 * Rate-limit places given back, through real workflows: a delivery given up at its max age gives back the place
 * it waited for, and an endpoint disabled or re-limited behind a thousand places held posts its next delivery at
 * once (with the places kept, it would wait a thousand seconds and be given up at its 5 s max age).
 */
describe('delivery: rate-limit places given back', () => {
  const config = testConfig({ DELIVERY_MAX_AGE: '5s', DELIVERY_RETRY_DELAYS: '200ms,200ms', DELIVERY_TIMEOUT: '10s' });
  const h = useDeliveryHarness(config);
  let accountId: string;
  const scope = () => ({ accountId, livemode: false });
  const deps = () => ({ pool: h.tw.pool, config });

  beforeEach(async () => {
    accountId = await createAccount(h.tw.pool);
  });

  const endpointAt = async (pathname: string) => {
    const { id } = await registerEndpoint(
      deps(),
      scope(),
      { url: `${h.receiver.url}${pathname}`, rate_limit: 1 },
      CLI_ACTOR,
    );
    return id;
  };
  /** `PLACES` places taken in the endpoint's queue, as a backlog's attempts take them; the last one's second. */
  const hold = async (endpointId: string) => {
    const { rows } = await h.tw.pool.query<{ s: string | null }>(
      `SELECT max((take_rate_token($1, 1, NULL, NULL, true, 1000)).reserved_second) AS s FROM generate_series(1, $2)`,
      [endpointId, PLACES],
    );
    return Number(rows[0]!.s);
  };
  const publish = async (parcelId: string) =>
    (
      await publishEvent(
        { pool: h.tw.pool },
        { accountId, livemode: false, type: 'parcel.in_transit', data: { parcel: parcel({ id: parcelId }) } },
      )
    ).event.id;
  const outcomeOf = async (eventId: string) =>
    ((await deliveryResult(h.tw.client, eventId, 30_000)) as { endpoints: { outcome: string }[] }).endpoints[0]!
      .outcome;

  it('gives back the place of a delivery given up at its max age', async () => {
    const endpointId = await endpointAt('/queued');
    const last = await hold(endpointId);
    expect(await outcomeOf(await publish('p_queued'))).toBe('expired');
    // Its place was the one after the thousand held: given back, the queue ends where it did before it.
    const { rows } = await h.tw.pool.query<{ place_second: string }>(
      'SELECT place_second FROM endpoint_rate_queues WHERE endpoint_id = $1',
      [endpointId],
    );
    expect(Number(rows[0]!.place_second)).toBe(last);
    const after = await h.tw.pool.query('SELECT 1 FROM endpoint_rate_tokens WHERE endpoint_id = $1 AND second > $2', [
      endpointId,
      last,
    ]);
    expect(after.rowCount).toBe(0);
    expect(h.receiver.at('/queued')).toHaveLength(0);
  });

  it('posts the next delivery at once to an endpoint disabled and enabled again behind a thousand places', async () => {
    const endpointId = await endpointAt('/disabled');
    await hold(endpointId);
    await updateEndpoint(deps(), scope(), endpointId, { disabled: true }, CLI_ACTOR);
    await updateEndpoint(deps(), scope(), endpointId, { disabled: false }, CLI_ACTOR);
    expect(await outcomeOf(await publish('p_disabled'))).toBe('delivered');
    expect(h.receiver.at('/disabled')).toHaveLength(1);
  });

  it('posts the next delivery at once to an endpoint re-limited behind a thousand places', async () => {
    const endpointId = await endpointAt('/relimited');
    await hold(endpointId);
    await updateEndpoint(deps(), scope(), endpointId, { rate_limit: 2 }, CLI_ACTOR);
    expect(await outcomeOf(await publish('p_relimited'))).toBe('delivered');
    expect(h.receiver.at('/relimited')).toHaveLength(1);
  });
});
