import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { publishEvent } from '../../src/domain/events';
import { createPool, type Pool } from '../../src/db/pool';
import { testDatabaseUrl } from '../helpers/database';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../helpers/delivery';
import { FIXTURES, testConfig, uniqueTaskQueue } from '../helpers/env';
import { createAccount } from '../helpers/fixtures';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy';
import { waitFor } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

/**
 * A worker that dies mid-post never gets a second post of the same attempt id to the receiver, whatever the
 * next worker meets: the attempt is recorded lost (a timeout) and the ladder goes on. The kill lands on attempt 1,
 * which the outbox owns: the delivery waits in the outbox until a dispatcher reaches the database and the lost
 * one's lease has lapsed, and that dispatcher settles the claimed attempt without posting it. Or it lands on
 * attempt 2, a regular activity of the workflow: Temporal times it out, never runs it again, and the workflow
 * records it lost, waiting for the database as long as it takes.
 * The workers are child processes SIGKILLed as a crashed machine would be; they reach Postgres through a proxy
 * the test cuts.
 */
describe.each([{ lost: 1 }, { lost: 2 }])('a worker lost mid-post (attempt $lost)', ({ lost: lostAttempt }) => {
  const earlyRunLost = lostAttempt === 1;
  let direct: Pool;
  let proxy: TcpProxy;
  let receiver: Receiver;
  const workers: WorkerProcess[] = [];
  const closers: Array<() => Promise<void>> = [];

  /** The workflow's record of the lost attempt, tried again because the database does not answer. */
  const recordRetrying = (pending: Array<Record<string, any>> | null | undefined) =>
    (pending ?? []).some((a) => a.activityType?.name === 'recordAttempt' && Number(a.attempt) >= 2);

  beforeAll(async () => {
    direct = createPool(testDatabaseUrl());
    const url = new URL(testDatabaseUrl());
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
    await proxy.restore().catch(() => undefined);
  });
  afterAll(async () => {
    await receiver?.close();
    await proxy?.close();
    await direct?.end();
  });

  async function setup(ladder: string) {
    const proxied = new URL(testDatabaseUrl());
    proxied.port = String(proxy.port);
    const env: Record<string, string> = {
      DATABASE_URL: proxied.toString(),
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      TEMPORAL_TASK_QUEUE: uniqueTaskQueue('local-crash'),
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
      DELIVERY_RETRY_DELAYS: ladder,
      DELIVERY_TIMEOUT: '1s',
    };
    const config = testConfig(env);
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    closers.push(() => connection.close());
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const startWorker = async () => {
      const worker = await startWorkerProcess(env);
      workers.push(worker);
      return worker;
    };
    return { client, startWorker };
  }

  /** Stored through the direct pool; the running worker's dispatcher makes attempt 1 and starts its workflow. */
  async function publishTo(pathname: string) {
    const accountId = await createAccount(direct);
    const endpoint = await createEndpoint(direct, { accountId, url: `${receiver.url}${pathname}` });
    const published = await publishEvent(
      { pool: direct },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    return { endpoint, eventId: published.event.id };
  }

  const deliveryIds = (pathname: string) => receiver.at(pathname).map((r) => r.headers['service-delivery'] as string);

  /**
   * The receiver's script: attempts before the lost one fail (500), the lost one's post runs `lose` and is
   * answered too late for the dying worker, later ones succeed.
   */
  const losing = (lose: () => void) => (index: number) => {
    if (index < lostAttempt - 1) return { status: 500 };
    if (index === lostAttempt - 1) {
      lose();
      return { status: 200, delayMs: 500 };
    }
    return { status: 200 };
  };

  /** The lost attempt recorded lost (a timeout), the next delivered, and no Service-Delivery id received twice. */
  async function expectLostThenDelivered(result: unknown, path: string, endpointId: string): Promise<void> {
    const ids = deliveryIds(path);
    expect(new Set(ids).size).toBe(ids.length);
    const attempts = await attemptsOf(direct, endpointId);
    expect(attempts.map((a) => [a.attempt, a.status_code, a.error, a.succeeded])).toEqual([
      ...(lostAttempt === 2 ? [[1, 500, null, false]] : []),
      [lostAttempt, null, 'timeout', false],
      [lostAttempt + 1, 200, null, true],
    ]);
    expect(attempts.map((a) => a.id)).toEqual(ids);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: lostAttempt + 1 }] });
  }

  it('recorded lost, never posted again: the ladder goes on', async () => {
    const { client, startWorker } = await setup('1s,1s');
    const first = await startWorker();
    let killed: Promise<void> | undefined;
    receiver.script(
      '/lost',
      losing(() => {
        killed = first.kill();
      }),
    );
    const { endpoint, eventId } = await publishTo('/lost');
    await waitFor(() => killed !== undefined, { what: 'the lost attempt to reach the receiver', timeoutMs: 60_000 });
    await killed;
    await startWorker();

    await expectLostThenDelivered(await deliveryResult(client, eventId, 90_000), '/lost', endpoint.id);
  }, 240_000);

  it('the next worker cannot read the database at first: the attempt is recorded lost, never posted again', async () => {
    const { client, startWorker } = await setup('1s,1s');
    const first = await startWorker();
    let lost: Promise<unknown> | undefined;
    // The first worker dies with the request in flight, and our database goes away with it: the claim of this
    // try is stored, its record never is, and the re-run of the try cannot read anything.
    receiver.script(
      '/lost-then-outage',
      losing(() => {
        lost = Promise.all([first.kill(), proxy.cut()]);
      }),
    );
    const { endpoint, eventId } = await publishTo('/lost-then-outage');
    await waitFor(() => lost !== undefined, { what: 'the lost attempt to reach the receiver', timeoutMs: 60_000 });
    await lost;

    await startWorker();
    if (earlyRunLost) {
      // The start waited for attempt 1, which died with the first worker: no workflow yet. The event waits in
      // the outbox until a dispatcher reaches the database again (and the lost one's lease has lapsed); that
      // dispatcher finds attempt 1 claimed, records it lost without posting, and starts the workflow with it.
      await expect(client.workflow.getHandle(`event:${eventId}`).describe()).rejects.toThrow(/not found/i);
      expect((await direct.query('SELECT dispatched_at FROM events WHERE id = $1', [eventId])).rows).toEqual([
        { dispatched_at: null },
      ]);
    } else {
      // Attempt 2 times out (timeout + margin); the workflow's record of it waits for the database.
      const handle = client.workflow.getHandle(`event:${eventId}`);
      await waitFor(async () => recordRetrying((await handle.describe()).raw.pendingActivities), {
        what: 'the record of the lost attempt to find the database unavailable',
        timeoutMs: 90_000,
      });
    }
    await proxy.restore();

    await expectLostThenDelivered(await deliveryResult(client, eventId, 120_000), '/lost-then-outage', endpoint.id);
  }, 240_000);
});
