import { existsSync } from 'node:fs';
import path from 'node:path';
import { Client } from '@temporalio/client';
import { NativeConnection, Worker, type WorkerOptions } from '@temporalio/worker';
import type { Agent } from 'undici';
import { createActivities } from '../activities';
import type { Config } from '../infra/config';
import { createHttpAgent } from '../infra/http-client';
import { createMailer } from '../infra/mailer';
import type { Pool } from '../db/pool';

// What a process hosting a worker also sets up (cli/commands/start-all.ts reaches the worker only through here).
export { ensureRetentionSchedule } from './retention-schedule';

/** Prebuilt by `npm run build` next to the compiled worker; absent in development, where we bundle at start. */
const PREBUILT_BUNDLE = path.join(__dirname, '..', 'workflow-bundle.js');

/** workflows/index.ts under tsx and vitest, workflows/index.js once compiled. */
function workflowsEntry(): string {
  const dir = path.join(__dirname, '..', 'workflows');
  const ts = path.join(dir, 'index.ts');
  return existsSync(ts) ? ts : path.join(dir, 'index.js');
}

export interface WorkerDeps {
  config: Config;
  connection: NativeConnection;
  pool: Pool;
  taskQueue?: string;
  /** The pooled agent deliveries post through; built from config when absent (the caller then never closes it). */
  http?: Agent;
  /** Test hook: override WorkerOptions (e.g. slots, sticky cache). */
  options?: Partial<WorkerOptions>;
}

export async function createWorker(deps: WorkerDeps): Promise<Worker> {
  const workflowSource: Pick<WorkerOptions, 'workflowBundle' | 'workflowsPath'> = existsSync(PREBUILT_BUNDLE)
    ? { workflowBundle: { codePath: PREBUILT_BUNDLE } }
    : { workflowsPath: workflowsEntry() };
  return Worker.create({
    connection: deps.connection,
    namespace: deps.config.temporal.namespace,
    taskQueue: deps.taskQueue ?? deps.config.temporal.taskQueue,
    activities: createActivities({
      config: deps.config,
      pool: deps.pool,
      http: deps.http ?? createHttpAgent(deps.config),
      // Activities signal supervisors over the worker's own connection: no second connection to open.
      temporal: new Client({ connection: deps.connection, namespace: deps.config.temporal.namespace }),
      mailer: createMailer(deps.config),
    }),
    ...workflowSource,
    ...deps.options,
  });
}
