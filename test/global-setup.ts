import { randomBytes } from 'node:crypto';
import type { TestProject } from 'vitest/node';
import { dropDatabase, prepareDatabase } from '../src/db/migrate';
import { startDevServer, type DevServer } from '../temporal-tools/dev-server';
import { ensureTemporalCli } from '../temporal-tools/temporal-cli';
import { freePort } from '../temporal-tools/ports';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The run's migrated database: only copied (test/helpers/database.ts), never connected to by a test. */
    templateDatabaseUrl: string;
    temporalAddress: string;
    temporalCli: string;
    runId: string;
  }
}

/**
 * One run: its own database and its own dev server on free ports (or TEMPORAL_ADDRESS when set);
 * each test file takes its own task queue from runId. Everything is removed at the end.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runId = `t${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  const baseUrl = new URL(process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  baseUrl.pathname = `/pw_${runId}`;
  const databaseUrl = baseUrl.toString();

  const temporalCli = await ensureTemporalCli({ log: (msg) => process.stderr.write(`[setup] ${msg}\n`) });
  let devServer: DevServer | undefined;
  let temporalAddress = process.env.TEMPORAL_ADDRESS;
  if (!temporalAddress) {
    devServer = await startDevServer({ cliPath: temporalCli, port: await freePort() });
    temporalAddress = devServer.address;
  }
  await prepareDatabase(databaseUrl);

  project.provide('templateDatabaseUrl', databaseUrl);
  project.provide('temporalAddress', temporalAddress);
  project.provide('temporalCli', temporalCli);
  project.provide('runId', runId);

  return async () => {
    await devServer?.stop();
    await dropDatabase(databaseUrl);
  };
}
