import { afterAll, beforeAll } from 'vitest';
import type { Config } from '../../infra/config';
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
