/**
 * A worker in a process of its own, run as `parcel-webhooks worker` runs it (createWorker, then runWorker with the
 * outbox dispatcher), so the bench can read the worker's memory alone: the bench process also hosts the client,
 * the publisher and the receiver. Started by bench/worker-process.ts with an IPC channel; it reads its config from
 * BENCH_WORKER_ENV (JSON, the product's environment variables) and the prebuilt workflow bundle from
 * BENCH_WORKER_BUNDLE, and answers the parent's requests for its heap figures and heap snapshots.
 */
import { writeHeapSnapshot } from 'node:v8';
import { NativeConnection, Runtime } from '@temporalio/worker';
import { loadConfig } from '../src/infra/config';
import { createPool } from '../src/db/pool';
import { createWorker, runWorker } from '../src/worker/worker';
import { IGNORED_COMPLETIONS } from './completions';
import { quietLogger } from './engine';
import { openWorkflowThreadInspector } from './workflow-thread-inspector';
import type { ChildReply, ChildRequest } from './worker-process';

const reply = (message: ChildReply) => process.send?.(message);

async function main(): Promise<void> {
  const env = JSON.parse(process.env.BENCH_WORKER_ENV ?? '{}') as Record<string, string>;
  const codePath = process.env.BENCH_WORKER_BUNDLE;
  if (!codePath) throw new Error('BENCH_WORKER_BUNDLE names no bundle');
  Runtime.install({ logger: { ...quietLogger, error: (m: string) => process.stderr.write(`worker: ${m}\n`) } });
  const config = loadConfig(env);
  const pool = createPool(config.databaseUrl, 20);
  const connection = await NativeConnection.connect({ address: config.temporal.address as string });
  const worker = await createWorker({
    config,
    connection,
    pool,
    options: { workflowsPath: undefined, workflowBundle: { codePath }, sinks: IGNORED_COMPLETIONS },
  });
  const inspector = await openWorkflowThreadInspector();
  process.on('message', (message: ChildRequest) => {
    void (async (): Promise<ChildReply> => {
      switch (message.type) {
        case 'heap': {
          const thread = await inspector.heapUsage();
          const main = process.memoryUsage();
          return {
            type: 'heap',
            id: message.id,
            mainHeapUsedMb: mb(main.heapUsed),
            mainHeapTotalMb: mb(main.heapTotal),
            externalMb: mb(main.external),
            workflowThreadHeapUsedMb: mb(thread.usedSize),
            workflowThreadHeapTotalMb: mb(thread.totalSize),
            maxCachedWorkflows: worker.options.maxCachedWorkflows,
            numCachedWorkflows: worker.getStatus().numCachedWorkflows,
          };
        }
        case 'snapshot': {
          const main = writeHeapSnapshot(`${message.prefix}-main.heapsnapshot`);
          const thread = await inspector.writeHeapSnapshot(`${message.prefix}-workflow-thread.heapsnapshot`);
          return { type: 'snapshot', id: message.id, files: [main, thread] };
        }
        case 'stop':
          worker.shutdown();
          return { type: 'stopping', id: message.id };
      }
    })().then(reply, (err: Error) => reply({ type: 'error', id: message.id, message: err.message }));
  });
  // A bench that died (killed, or failed before stopping it) takes its worker with it.
  process.once('disconnect', () => process.exit(1));
  const running = runWorker(worker, { config, connection, pool });
  reply({ type: 'ready' });
  try {
    await running;
  } finally {
    await inspector.close();
    await pool.end();
    await connection.close();
  }
}

const mb = (bytes: number) => Math.round(bytes / 2 ** 20);

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`worker: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  },
);
