import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool';
import { publishEvent } from '../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../helpers/delivery';
import { FIXTURES, uniqueTaskQueue } from '../helpers/env';
import { testDatabaseUrl } from '../helpers/database';
import { createAccount } from '../helpers/fixtures';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

/**
 * Order per parcel through worker crashes: the worker is SIGKILLed while the head of a parcel's lane is in its
 * ladder and the rest wait behind it, then again mid-chain. The next worker picks the waits up from history and
 * the receiver still sees the parcel in order.
 */
describe('order per parcel through worker kills', () => {
  let pool: Pool;
  let receiver: Receiver;
  let connection: Connection;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    pool = createPool(testDatabaseUrl());
    receiver = await startReceiver();
    connection = await Connection.connect({ address: inject('temporalAddress') });
  });
  afterAll(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    await connection?.close();
    await receiver?.close();
    await pool?.end();
  });

  it('a SIGKILLed worker mid-ladder and mid-wait: every event arrives, never one below a sequence already seen', async () => {
    const env = {
      DATABASE_URL: testDatabaseUrl(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: uniqueTaskQueue('order-kill'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
      DELIVERY_RETRY_DELAYS: '2s,2s,2s',
      DELIVERY_TIMEOUT: '1s',
    };
    const client = new Client({ connection });
    const startWorker = async () => {
      const worker = await startWorkerProcess(env);
      workers.push(worker);
      return worker;
    };
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/ordered-kill` });
    await pool.query(`UPDATE webhook_endpoints SET ordering = 'parcel' WHERE id = $1`, [endpoint.id]);
    // The head fails twice, so the lane waits behind its ladder; the third event fails once.
    const failures = new Map<number, number>([
      [1, 2],
      [3, 1],
    ]);
    receiver.script('/ordered-kill', (_, request) => {
      const { sequence } = JSON.parse(request.rawBody.toString()) as { sequence: number };
      const left = failures.get(sequence) ?? 0;
      failures.set(sequence, left - 1);
      return { status: left > 0 ? 500 : 200 };
    });
    const sequences = () =>
      receiver.at('/ordered-kill').map((r) => (JSON.parse(r.rawBody.toString()) as { sequence: number }).sequence);

    const first = await startWorker();
    const events = [];
    for (let i = 0; i < 5; i++) {
      const published = await publishEvent(
        { pool },
        { accountId, livemode: false, type: 'parcel.in_transit', data: { parcel: parcel({ id: 'p_kill' }) } },
      );
      events.push(published.event.id);
    }
    await waitFor(() => sequences().length >= 1, { what: 'the head attempted', timeoutMs: 60_000 });
    await first.kill();
    const second = await startWorker();
    await waitFor(() => sequences().includes(3), { what: 'the third event attempted', timeoutMs: 60_000 });
    await second.kill();
    await startWorker();

    for (const eventId of events) await deliveryResult(client, eventId, 90_000);
    const seen = sequences();
    // Each arrival is the same event again (a retry) or the next one: no inversion, nothing skipped.
    seen.forEach((sequence, i) => {
      if (i > 0) expect(sequence === seen[i - 1] || sequence === seen[i - 1]! + 1).toBe(true);
    });
    expect(new Set(seen)).toEqual(new Set([1, 2, 3, 4, 5]));
    const { rows } = await pool.query<{ status: string }>(
      `SELECT status FROM deliveries WHERE endpoint_id = $1 ORDER BY created_at`,
      [endpoint.id],
    );
    expect(rows.map((r) => r.status)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded', 'succeeded']);
  }, 240_000);
});
