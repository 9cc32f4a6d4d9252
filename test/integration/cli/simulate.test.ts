import { describe, expect, inject, it } from 'vitest';
import { lifecycle, seededRandom, simulateParcels } from '../../../src/domain/parcel-simulator';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';
import { runCli } from '../../helpers/cli';

describe('simulate and events publish', () => {
  const config = testConfig();
  const h = useDeliveryHarness(config);

  const cli = (...args: string[]) =>
    runCli(args, { TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_TASK_QUEUE: config.temporal.taskQueue });

  it('follows the lifecycle: stages in order, COD settled only after delivery', () => {
    const random = seededRandom(7);
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const cod = i % 2 === 0;
      const stages = lifecycle(random, cod);
      seen.add(stages.at(-1) as string);
      expect(stages.slice(0, 2)).toEqual(['parcel.created', 'parcel.awaiting_dropoff']);
      if (stages.includes('cod.settled')) {
        expect(cod).toBe(true);
        expect(stages.at(-2)).toBe('parcel.delivered');
      }
      if (stages.includes('parcel.cancelled')) expect(stages).not.toContain('parcel.in_transit');
    }
    expect([...seen].sort()).toEqual(['cod.settled', 'parcel.cancelled', 'parcel.delivered', 'parcel.returned']);
  });

  it('publishes every stage of every parcel, each delivered with a parcel of the documented shape', async () => {
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/sim` });
    const summary = await simulateParcels(
      { pool: h.tw.pool },
      { accountId, livemode: false, parcels: 12, random: seededRandom(42) },
    );
    expect(summary.parcels).toBe(12);
    expect(summary.by_type['parcel.created']).toBe(12);
    expect(Object.values(summary.by_type).reduce((a, b) => a + b, 0)).toBe(summary.events);
    expect(summary.delivered_to_endpoints).toBe(summary.events);
    await waitFor(() => h.receiver.at('/sim').length === summary.events, {
      what: 'every simulated event',
      timeoutMs: 60_000,
    });
    for (const request of h.receiver.at('/sim')) {
      const event = JSON.parse(request.rawBody.toString());
      if (event.type === 'cod.settled') {
        // The newest API version: the settlement names its parcel in data.parcel and carries its parcel's number.
        expect(event.data.cod_settlement).toMatchObject({ currency: 'KES', amount: expect.any(Number) });
        expect(event.data.parcel).toMatchObject({
          id: expect.stringMatching(/^[0-9a-f-]{36}$/),
          parcel_number: expect.any(String),
        });
        expect(event.sequence).toEqual(expect.any(Number));
        continue;
      }
      expect(event.data.parcel).toMatchObject({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        parcel_number: expect.any(String),
        tracking_number: expect.any(String),
        status: event.type.replace('parcel.', '').toUpperCase(),
        payment_status: expect.stringMatching(/^(PAID|PENDING)$/),
        total_fee: expect.any(Number),
        currency: 'KES',
        description: expect.any(String),
        package_size: expect.stringMatching(/^[SML]$/),
        recipient_name: expect.any(String),
        pickup_run_id: expect.any(String),
      });
    }
  }, 90_000);

  it('CLI: events publish and simulate print one JSON document', async () => {
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/cli`, livemode: true });
    const data = JSON.stringify({ parcel: parcel({ id: 'p-1' }) });
    const id = `evt_cli_${Date.now()}`;
    const published = await cli(
      'events',
      'publish',
      '--account',
      accountId,
      '--mode',
      'live',
      '--type',
      'parcel.delivered',
      '--data',
      data,
      '--id',
      id,
      '--json',
    );
    expect(published.code).toBe(0);
    expect(published.json).toMatchObject({
      id,
      object: 'event',
      type: 'parcel.delivered',
      livemode: true,
      account_id: accountId,
      workflow_id: `event:${id}`,
    });
    await waitFor(() => h.receiver.at('/cli').length === 1, { what: 'the published event' });

    const bad = await cli(
      'events',
      'publish',
      '--account',
      accountId,
      '--mode',
      'live',
      '--type',
      'parcel.lost',
      '--json',
    );
    expect(bad.code).not.toBe(0);
    expect(bad.json).toMatchObject({ error: { code: 'unknown_event_type' } });
    const misshapen = JSON.stringify({ parcel: parcel({ id: 'p-2', recipient_name: 42 }) });
    const wrongShape = await cli(
      'events',
      'publish',
      '--account',
      accountId,
      '--mode',
      'live',
      '--type',
      'parcel.delivered',
      '--data',
      misshapen,
      '--json',
    );
    expect(wrongShape.code).toBe(1);
    expect(wrongShape.json).toMatchObject({
      error: { code: 'invalid_event_data', message: expect.stringContaining('data.parcel.recipient_name') },
    });

    const simulated = await cli(
      'simulate',
      '--account',
      accountId,
      '--mode',
      'live',
      '--parcels',
      '3',
      '--seed',
      '5',
      '--json',
    );
    expect(simulated.code).toBe(0);
    expect(simulated.json).toMatchObject({ account_id: accountId, livemode: true, parcels: 3 });
    expect(simulated.json.by_type['parcel.created']).toBe(3);
  }, 120_000);
});
