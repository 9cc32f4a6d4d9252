import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, type Worker } from '@temporalio/worker';
import type { Config } from '../../src/infra/config';
import { createPool, type Pool } from '../../src/db/pool';
import type { Dispatcher } from '../../src/worker/dispatcher';
import { createWorker, runWorker } from '../../src/worker/worker';

let runtimeInstalled = false;
/** Warnings and errors only: the bundler's progress would drown the test output. */
function quietRuntime(): void {
  if (runtimeInstalled) return;
  runtimeInstalled = true;
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch {
    // already installed by an earlier import in this process
  }
}

export interface TestWorker {
  worker: Worker;
  client: Client;
  pool: Pool;
  /** Resolves when worker.run() ends; rejects if it failed. */
  running: Promise<void>;
  /** The worker's outbox dispatcher: it starts the workflows of events this file publishes. */
  dispatcher: Dispatcher;
  stop(): Promise<void>;
}

/** A real worker on the config's task queue against the run's dev server, plus a client and a pool. */
export async function startTestWorker(
  config: Config,
  options: Parameters<typeof createWorker>[0]['options'] = {},
  dispatcher: { sweepIntervalMs?: number; log?: (line: string) => void } = {},
): Promise<TestWorker> {
  quietRuntime();
  const address = config.temporal.address as string;
  const nativeConnection = await NativeConnection.connect({ address });
  const connection = await Connection.connect({ address });
  const client = new Client({ connection, namespace: config.temporal.namespace });
  const pool = createPool(config.databaseUrl);
  const worker = await createWorker({ config, connection: nativeConnection, pool, options });
  let started!: Dispatcher;
  const running = runWorker(worker, {
    config,
    connection: nativeConnection,
    pool,
    onDispatcher: (d) => (started = d),
    ...dispatcher,
  });
  let stopped = false;
  return {
    worker,
    client,
    pool,
    running,
    dispatcher: started,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (worker.getState() === 'RUNNING') worker.shutdown();
      await running.catch(() => undefined);
      await connection.close();
      await nativeConnection.close();
      await pool.end();
    },
  };
}
