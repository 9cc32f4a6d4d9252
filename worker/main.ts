import { NativeConnection } from '@temporalio/worker';
import { createPool } from '../db/pool';
import { loadConfigOrExit } from '../infra/config';
import { createHttpAgent } from '../infra/http-client';
import { ensureSearchAttributes } from '../infra/search-attributes';
import { requireTemporalAddress, temporalConnectionOptions } from '../infra/temporal';
import { createWorker } from './worker';

/** Production entry point of the worker: `node dist/worker/main.js`. SIGINT/SIGTERM drain and stop it. */
async function main(): Promise<void> {
  const config = loadConfigOrExit();
  const connection = await NativeConnection.connect(temporalConnectionOptions(config, requireTemporalAddress(config)));
  const pool = createPool(config.databaseUrl);
  const http = createHttpAgent(config);
  try {
    await ensureSearchAttributes(connection, config.temporal.namespace, (msg) => process.stderr.write(`${msg}\n`));
    const worker = await createWorker({ config, connection, pool, http });
    process.stdout.write(`worker: polling task queue ${config.temporal.taskQueue} on ${requireTemporalAddress(config)}\n`);
    await worker.run();
  } finally {
    await http.close();
    await pool.end();
    await connection.close();
  }
}

main().catch((err) => {
  process.stderr.write(`worker: ${(err as Error).message}\n`);
  process.exit(1);
});
