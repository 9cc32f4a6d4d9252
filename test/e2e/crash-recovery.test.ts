import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { SEARCH_ATTRIBUTE_CLI_TYPES } from '../../src/core/delivery-contract';
import {
  dropTemporalDatabases,
  setupTemporalDatabases,
  startTemporalServer,
  type TemporalServer,
} from '../../temporal-tools/temporal-server';
import type { Config } from '../../src/infra/config';
import { CLI_ACTOR } from '../../src/domain/audit-log';
import { pauseEndpoint, resumeEndpoint } from '../../src/domain/endpoint-lifecycle';
import { publishEvent } from '../../src/domain/events';
import { createPool, type Pool } from '../../src/db/pool';
import { startDevServer, type DevServer } from '../../temporal-tools/dev-server';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../helpers/delivery';
import { FIXTURES, testConfig, uniqueTaskQueue } from '../helpers/env';
import { createAccount } from '../helpers/fixtures';
import { freePort } from '../../temporal-tools/ports';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';
import { testDatabaseUrl } from '../helpers/database';

/**
 * Crashes: a worker SIGKILLed mid-ladder or mid-post, the Temporal server restarted on its file database.
 * Whatever happens, every attempt of a ladder is recorded exactly once: rows 1..N, no duplicate, no gap.
 */
describe('crash recovery', () => {
  let pool: Pool;
  let receiver: Receiver;
  const workers: WorkerProcess[] = [];
  const closers: Array<() => Promise<void>> = [];

  function envFor(address: string, taskQueue: string, ladder: string): Record<string, string> {
    return {
      DATABASE_URL: testDatabaseUrl(),
      TEMPORAL_ADDRESS: address,
      TEMPORAL_TASK_QUEUE: taskQueue,
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
      DELIVERY_RETRY_DELAYS: ladder,
      DELIVERY_TIMEOUT: '1s',
    };
  }

  async function setup(address: string, ladder: string) {
    const env = envFor(address, uniqueTaskQueue('crash'), ladder);
    const config: Config = testConfig(env);
    const connection = await Connection.connect({ address });
    closers.push(() => connection.close());
    const client = new Client({ connection, namespace: config.temporal.namespace });
    const startWorker = async () => {
      const worker = await startWorkerProcess(env);
      workers.push(worker);
      return worker;
    };
    return { env, config, client, startWorker };
  }

  async function publishTo(config: Config, client: Client, pathname: string) {
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}${pathname}` });
    const published = await publishEvent(
      { pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    return { endpoint, eventId: published.event.id };
  }

  const expectEveryAttemptOnce = async (endpointId: string, total: number) => {
    const attempts = await attemptsOf(pool, endpointId);
    expect(attempts.map((a) => a.attempt)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(new Set(attempts.map((a) => a.id)).size).toBe(total);
    return attempts;
  };

  beforeAll(async () => {
    pool = createPool(testDatabaseUrl());
    receiver = await startReceiver();
  });
  afterEach(async () => {
    for (const worker of workers.splice(0)) await worker.kill();
    for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
  });
  afterAll(async () => {
    await receiver?.close();
    await pool?.end();
  });

  it('a worker SIGKILLed while the ladder waits: the next worker finishes it', async () => {
    const { config, client, startWorker } = await setup(inject('temporalAddress'), '2s,2s,2s');
    receiver.script('/kill-waiting', { status: 500 });
    const first = await startWorker();
    const { endpoint, eventId } = await publishTo(config, client, '/kill-waiting');
    await waitFor(async () => (await attemptsOf(pool, endpoint.id)).length === 1, { what: 'attempt 1' });
    await first.kill();
    await startWorker();
    const result = await deliveryResult(client, eventId, 60_000);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'abandoned', attempts: 4 }] });
    await expectEveryAttemptOnce(endpoint.id, 4);
    expect(receiver.at('/kill-waiting')).toHaveLength(4);
    // Two worker starts (each bundles the workflows) take most of the time; a loaded 2-core machine needs headroom.
  }, 150_000);

  it('a worker SIGKILLed while deliveries are held by a paused endpoint: after resume each goes out once', async () => {
    const { config, client, startWorker } = await setup(inject('temporalAddress'), '2s,2s');
    const first = await startWorker();
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: `${receiver.url}/kill-held` });
    const scope = { accountId, livemode: false };
    await pauseEndpoint({ pool, config }, scope, endpoint.id, CLI_ACTOR);
    const eventIds: string[] = [];
    for (let i = 0; i < 3; i++) {
      const published = await publishEvent(
        { pool },
        { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
      );
      eventIds.push(published.event.id);
    }
    // Every ladder is held (its timer says so) before the worker dies.
    const heldTimers = async (eventId: string) => {
      const history = await client.workflow.getHandle(`event:${eventId}`).fetchHistory();
      return (history.events ?? []).filter((e) =>
        Buffer.from(e.userMetadata?.summary?.data ?? new Uint8Array())
          .toString()
          .includes('held: '),
      ).length;
    };
    for (const eventId of eventIds)
      await waitFor(async () => (await heldTimers(eventId)) > 0, { timeoutMs: 60_000, what: `${eventId} held` });
    await first.kill();
    expect(receiver.at('/kill-held')).toHaveLength(0);
    await startWorker();
    await resumeEndpoint({ pool, config }, scope, endpoint.id, CLI_ACTOR);
    for (const eventId of eventIds) {
      expect(await deliveryResult(client, eventId, 90_000)).toMatchObject({
        endpoints: [{ endpointId: endpoint.id, outcome: 'delivered', attempts: 1 }],
      });
    }
    const posted = receiver.at('/kill-held').map((r) => (JSON.parse(r.rawBody.toString()) as { id: string }).id);
    expect(posted.sort()).toEqual([...eventIds].sort());
    expect((await attemptsOf(pool, endpoint.id)).map((a) => a.attempt)).toEqual([1, 1, 1]);
  }, 180_000);

  // Attempt 1 is the dispatcher's early try; the kill lands on attempt 2 (the workflow's own try), and the ladder
  // after it must not care how attempt 1 went out.
  it('a worker SIGKILLed mid-post: that attempt is recorded as a timeout and the ladder goes on', async () => {
    const { config, client, startWorker } = await setup(inject('temporalAddress'), '1s,1s,1s');
    let killed: Promise<void> | undefined;
    const first = await startWorker();
    const pathname = '/kill-posting';
    receiver.script(pathname, (index) => {
      if (index === 1) {
        killed = first.kill();
        return { status: 200, delayMs: 500 };
      }
      return { status: 500 };
    });
    const { endpoint, eventId } = await publishTo(config, client, pathname);
    await waitFor(() => killed !== undefined, { what: 'attempt 2 to reach the receiver' });
    await killed;
    await startWorker();
    const result = await deliveryResult(client, eventId, 60_000);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'abandoned', attempts: 4 }] });
    const attempts = await expectEveryAttemptOnce(endpoint.id, 4);
    expect(attempts[0]).toMatchObject({ attempt: 1, status_code: 500, error: null });
    expect(attempts[1]).toMatchObject({ attempt: 2, error: 'timeout', status_code: null, succeeded: false });
    expect(receiver.at(pathname)).toHaveLength(4);
    expect(attempts.map((a) => a.id)).toEqual(receiver.at(pathname).map((r) => r.headers['service-delivery']));
  }, 150_000);

  it('the Temporal server restarted on its file database mid-ladder: the ladder resumes', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pw-restart-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    const options = {
      cliPath: inject('temporalCli'),
      port: await freePort(),
      dbFile: path.join(dir, 'temporal.sqlite'),
    };
    let server: DevServer = await startDevServer(options);
    closers.push(() => server.stop());
    const { config, client, startWorker } = await setup(server.address, '3s,3s,3s');
    receiver.script('/restart', { status: 500 });
    await startWorker();
    const { endpoint, eventId } = await publishTo(config, client, '/restart');
    await waitFor(async () => (await attemptsOf(pool, endpoint.id)).length === 1, { what: 'attempt 1' });
    await server.stop();
    server = await startDevServer(options);
    // The worker may have given up while its server was away; a fresh one is what a supervisor would start.
    if (workers.every((w) => w.process.exitCode !== null || w.process.signalCode !== null)) await startWorker();
    const result = await deliveryResult(client, eventId, 90_000);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'abandoned', attempts: 4 }] });
    await expectEveryAttemptOnce(endpoint.id, 4);
    expect(receiver.at('/restart')).toHaveLength(4);
  }, 150_000);

  // Only under `npm run test:cluster`, which builds the full server: a crash, not a graceful stop, of a server
  // whose state is in Postgres and whose dead instance is still listed in cluster_membership at the restart.
  it.skipIf(process.env.PARCEL_TEST_CLUSTER !== '1')(
    'the full Temporal server SIGKILLed mid-ladder and restarted on its Postgres databases: the ladder resumes',
    async () => {
      const base = { databaseUrl: testDatabaseUrl(), prefix: `${inject('runId').toLowerCase()}_restart` };
      await setupTemporalDatabases(base);
      closers.push(() => dropTemporalDatabases(base));
      const start = (ports?: TemporalServer['ports']) =>
        startTemporalServer({ ...base, ports, searchAttributes: SEARCH_ATTRIBUTE_CLI_TYPES });
      let server: TemporalServer = await start();
      closers.push(() => server.stop());
      const { config, client, startWorker } = await setup(server.address, '3s,3s,3s');
      receiver.script('/cluster-restart', { status: 500 });
      await startWorker();
      const { endpoint, eventId } = await publishTo(config, client, '/cluster-restart');
      await waitFor(async () => (await attemptsOf(pool, endpoint.id)).length === 1, { what: 'attempt 1' });
      const exited = new Promise((resolve) => server.process.once('exit', resolve));
      server.process.kill('SIGKILL');
      await exited;
      await server.stop();
      // The same ports, as a restarted deployment has: the new instance takes the dead one's membership.
      server = await start(server.ports);
      if (workers.every((w) => w.process.exitCode !== null || w.process.signalCode !== null)) await startWorker();
      const result = await deliveryResult(client, eventId, 90_000);
      expect(result).toMatchObject({ endpoints: [{ outcome: 'abandoned', attempts: 4 }] });
      await expectEveryAttemptOnce(endpoint.id, 4);
      expect(receiver.at('/cluster-restart')).toHaveLength(4);
    },
    180_000,
  );
});
