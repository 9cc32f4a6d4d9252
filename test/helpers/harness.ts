import { Client, Connection } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll } from 'vitest';
import { buildServer } from '../../src/api/server';
import type { Config } from '../../src/infra/config';
import { launchBrowser, type BrowserHarness } from './browser';
import { startReceiver, type Receiver } from './receiver';
import { startTestWorker, type TestWorker } from './temporal';

/** What most delivery tests run against: a real worker on the file's task queue and an HTTPS receiver. */
export interface DeliveryHarness {
  tw: TestWorker;
  receiver: Receiver;
}

/**
 * Starts the pair before the file's tests and stops it after them (registered as beforeAll/afterAll where it is
 * called, so a file's own beforeAll registered earlier runs first, e.g. to build the config). Read the fields
 * inside tests: they are set once the hooks ran.
 */
export function useDeliveryHarness(config: Config | (() => Config)): DeliveryHarness {
  const harness = {} as DeliveryHarness;
  beforeAll(async () => {
    harness.tw = await startTestWorker(typeof config === 'function' ? config() : config);
    harness.receiver = await startReceiver();
  });
  afterAll(async () => {
    await harness.tw?.stop();
    await harness.receiver?.close();
  });
  return harness;
}

/** The developers page's tests: a worker, the real app listening on loopback, Chromium and an HTTPS receiver. */
export interface DashboardHarness extends DeliveryHarness {
  app: FastifyInstance;
  origin: string;
  browser: BrowserHarness;
}

/** Like useDeliveryHarness, plus the app (with its own Temporal client) and a browser; all stopped after the file. */
export function useDashboardHarness(config: Config): DashboardHarness {
  const harness = {} as DashboardHarness;
  let connection: Connection | undefined;
  beforeAll(async () => {
    harness.tw = await startTestWorker(config);
    connection = await Connection.connect({ address: config.temporal.address as string });
    const temporal = new Client({ connection, namespace: config.temporal.namespace });
    harness.app = await buildServer({ config, pool: harness.tw.pool, temporal }, { logger: false });
    harness.origin = await harness.app.listen({ port: 0, host: '127.0.0.1' });
    harness.browser = await launchBrowser();
    harness.receiver = await startReceiver();
  });
  afterAll(async () => {
    await harness.browser?.close();
    await harness.app?.close();
    await connection?.close();
    await harness.receiver?.close();
    await harness.tw?.stop();
  });
  return harness;
}
