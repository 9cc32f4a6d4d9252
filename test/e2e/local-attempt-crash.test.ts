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
 * A one-endpoint delivery's attempts run inside the workflow task (local attempts), so a worker that dies
 * mid-post leaves nothing in history and the next worker runs the attempt again with the same id. Whatever that
 * re-run meets, one attempt id reaches the receiver once: the re-run records the attempt as lost instead of
 * posting it again. Attempt 1 is the dispatcher's early try, which dies with the worker as well: the next
 * worker's try finds its claim, and records the attempt lost only once that run is surely dead. The kill lands
 * on attempt 1 (the early try) or on attempt 2 (the workflow's own local try).
 * The workers are child processes SIGKILLed as a crashed machine would be; they reach Postgres through a proxy
 * the test cuts.
 */
describe.each([{ lost: 1 }, { lost: 2 }])(
  'local attempts: a worker lost mid-post (attempt $lost)',
  ({ lost: lostAttempt }) => {
    const earlyRunLost = lostAttempt === 1;
    let direct: Pool;
    let proxy: TcpProxy;
    let receiver: Receiver;
    const workers: WorkerProcess[] = [];
    const closers: Array<() => Promise<void>> = [];

    /** A backoff timer the workflow starts when an attempt could not read the database (its summary says so). */
    const isBackoffTimer = (e: Record<string, any>) =>
      Boolean(e.timerStartedEventAttributes) &&
      Buffer.from(e.userMetadata?.summary?.data ?? [])
        .toString()
        .includes('database unavailable');

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

    /** Stored through the direct pool; the running worker's dispatcher starts its workflow (with local attempts). */
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

    it('the next worker runs the try again and finds it claimed: recorded lost, the ladder goes on', async () => {
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
        // dispatcher finds attempt 1 claimed, starts the workflow without it, and the try finds the early try dead.
        await expect(client.workflow.getHandle(`event:${eventId}`).describe()).rejects.toThrow(/not found/i);
        expect((await direct.query('SELECT dispatched_at FROM events WHERE id = $1', [eventId])).rows).toEqual([
          { dispatched_at: null },
        ]);
      } else {
        // The workflow task times out (timeout + margin), the new worker runs the try again and finds no database.
        const history = async () => (await client.workflow.getHandle(`event:${eventId}`).fetchHistory()).events ?? [];
        await waitFor(async () => (await history()).some((e) => isBackoffTimer(e as Record<string, any>)), {
          what: 'the re-run to find the database unavailable',
          timeoutMs: 90_000,
        });
      }
      await proxy.restore();

      await expectLostThenDelivered(await deliveryResult(client, eventId, 120_000), '/lost-then-outage', endpoint.id);
    }, 240_000);
  },
);
