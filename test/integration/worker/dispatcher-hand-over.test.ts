import type { Client } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeliverEventInput } from '../../../src/core/delivery-contract';
import { createPool, type Pool } from '../../../src/db/pool';
import { publishEvent } from '../../../src/domain/events';
import { NOTIFIED_PASSES, startDispatcher, type Dispatcher } from '../../../src/worker/dispatcher';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { waitFor } from '../../helpers/wait';

/**
 * A start may wait for its first attempt (src/attempt/early.ts handOff: up to a slow receiver's timeout). The
 * dispatcher gives a pass's place to the next one as soon as its rows are claimed, so an event notified while
 * earlier starts wait is started at once, even when they fill every pass (NOTIFIED_PASSES). The start and the wait are stand-ins
 * (the start is recorded, the wait is released by the test); the outbox, its notifications and claims are real.
 */
describe('outbox dispatcher: a start waiting for its first attempt', () => {
  const config = testConfig();
  let pool: Pool;
  let dispatcher: Dispatcher | undefined;
  const started: string[] = [];
  const held = new Map<string, () => void>();

  beforeAll(async () => {
    pool = createPool(config.databaseUrl);
  });
  afterAll(async () => {
    for (const release of held.values()) release();
    await dispatcher?.stop();
    await pool?.end();
  });

  it('starts an event notified after it without waiting for it', async () => {
    const accountId = await createAccount(pool);
    await createEndpoint(pool, { accountId, url: 'https://receiver.example/hand-over' });
    const temporal = {
      workflow: {
        start: async (_type: string, options: { workflowId: string }) => void started.push(options.workflowId),
      },
      withDeadline: (_deadline: number, fn: () => Promise<unknown>) => fn(),
    } as unknown as Client;
    let toHold = NOTIFIED_PASSES;
    dispatcher = startDispatcher({
      pool,
      temporal,
      config,
      eagerStart: false,
      sweepIntervalMs: 600_000,
      // The first event's start waits until the test lets it go, as a start behind a slow receiver's attempt does.
      beforeStart: (input: DeliverEventInput) => {
        if (toHold === 0) return input;
        toHold -= 1;
        return new Promise<DeliverEventInput>((resolve) => held.set(input.eventId, () => resolve(input)));
      },
    });
    await dispatcher.ready;
    const publish = () =>
      publishEvent({ pool }, { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } });

    // One event at a time, each held in its own pass, until every pass is taken by a waiting start.
    const slow: Awaited<ReturnType<typeof publish>>[] = [];
    for (let n = 0; n < NOTIFIED_PASSES; n++) {
      const event = await publish();
      await waitFor(() => held.has(event.event.id), { what: `start ${n + 1} to wait` });
      slow.push(event);
    }
    const next = await publish();
    await waitFor(() => started.includes(`event:${next.event.id}`), {
      what: 'the next event to be started beside the waiting ones',
    });
    expect(started).toEqual([`event:${next.event.id}`]);

    for (const event of slow) {
      held.get(event.event.id)!();
      held.delete(event.event.id);
    }
    await waitFor(() => slow.every((event) => started.includes(`event:${event.event.id}`)), {
      what: 'the held starts once their wait ended',
    });
    await waitFor(
      async () =>
        (await pool.query('SELECT count(*)::int AS n FROM events WHERE dispatched_at IS NULL')).rows[0].n === 0,
      { what: 'every event marked dispatched' },
    );
  });
});
