import path from 'node:path';
import { inject } from 'vitest';
import { loadConfig, type Config } from '../../src/infra/config';

import { testDatabaseUrl } from './database';
import { FIXTURES } from './paths';

export { FIXTURES };

let queueCounter = 0;

/** A task queue no other test file or run shares. */
export function uniqueTaskQueue(label: string): string {
  queueCounter += 1;
  return `${inject('runId')}-${label}-${process.pid}-${queueCounter}`;
}

/** Config for tests: this run's database and Temporal, loopback receivers allowed, our test CA trusted. */
export function testConfig(env: Record<string, string | undefined> = {}): Config {
  return loadConfig({
    DATABASE_URL: testDatabaseUrl(),
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    TEMPORAL_TASK_QUEUE: uniqueTaskQueue('q'),
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_CA_FILE: path.join(FIXTURES, 'tls', 'ca.pem'),
    LOG_LEVEL: 'silent',
    ...env,
  });
}
