import path from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, type NativeConnection, type Worker } from '@temporalio/worker';
import { WORKFLOW_ID } from '../src/core/delivery-contract';
import { exampleEvent } from '../src/core/event-schemas';
import { newId } from '../src/core/ids';
import { publishEvent } from '../src/domain/events';
import { loadConfig, type Config } from '../src/infra/config';
import type { Pool } from '../src/db/pool';
import { createWorker, runWorker } from '../src/worker/worker';
import { TLS_DIR } from './receiver';
import { allClosed, COMPLETION_INTERCEPTORS, Completions } from './completions';

export const SECRET = 'whsec_bench0000000000000000000000000';

/** What every phase of one run shares: one server, one database, one connection, the bundles built once. */
export interface BenchContext {
  serverAddress: string;
  databaseUrl: string;
  connection: NativeConnection;
  client: Client;
  pool: Pool;
  engineBundle: { code: string };
  runId: string;
}

/**
 * The engine a phase runs: the product as it ships (config defaults, the worker's own slots, eager starts from
 * its outbox dispatcher), with only what a scenario needs to set through the environment an operator would.
 */
export interface EngineVariant {
  name: string;
  env?: Record<string, string>;
}

/** The engine as it ships. Its name keeps the phase names (`engine-load/all`) and the result keys stable. */
export const SHIPPED: EngineVariant = { name: 'all' };

export async function bundleEngine(): Promise<{ code: string }> {
  // Bundled once per run: every phase's worker reuses it instead of spending seconds of CPU on webpack.
  return bundleBenchWorkflows(path.join(__dirname, '..', 'src', 'workflows', 'index.ts'));
}

/** A workflow bundle for the bench: the given workflows, and the interceptor that reports their completions. */
export function bundleBenchWorkflows(workflowsPath: string): Promise<{ code: string }> {
  return bundleWorkflowCode({
    workflowsPath,
    workflowInterceptorModules: [COMPLETION_INTERCEPTORS],
    logger: quietLogger,
  });
}

export const quietLogger = {
  log: () => undefined,
  trace: () => undefined,
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
};

/** The environment an engine of the run reads (a worker in its own process gets exactly this). */
export function engineEnv(
  ctx: BenchContext,
  taskQueue: string,
  env: Record<string, string> = {},
): Record<string, string> {
  return {
    DATABASE_URL: ctx.databaseUrl,
    TEMPORAL_ADDRESS: ctx.serverAddress,
    TEMPORAL_TASK_QUEUE: taskQueue,
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_CA_FILE: path.join(TLS_DIR, 'ca.pem'),
    LOG_LEVEL: 'silent',
    ...env,
  };
}

export function engineConfig(ctx: BenchContext, taskQueue: string, env: Record<string, string> = {}): Config {
  return loadConfig(engineEnv(ctx, taskQueue, env));
}

export interface Engine {
  config: Config;
  worker: Worker;
  /** An account with one endpoint per URL; returns the account id. */
  addAccount(urls: string[]): Promise<string>;
  /** Publishes one event through the product's publish path; resolves when publishing returned. */
  publish(accountId: string, eventId: string): Promise<void>;
  /** Checks, once the phase is over, that Temporal shows completed every delivery the worker completed (bench/completions.ts). */
  allClosed(): Promise<void>;
  /** Resolves when the event's workflow has completed, as its worker reports it, with its life (bench/completions.ts). */
  completed(eventId: string): Promise<number>;
  stop(): Promise<void>;
}

/** An account with one endpoint per URL; returns the account id. */
export async function addBenchAccount(pool: Pool, urls: string[]): Promise<string> {
  const accountId = newId('account');
  await pool.query(`INSERT INTO accounts (id, name, status) VALUES ($1, 'Bench', 'active')`, [accountId]);
  for (const url of urls) {
    await pool.query(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret) VALUES ($1, $2, false, $3, $4)`,
      [newId('endpoint'), accountId, url, SECRET],
    );
  }
  return accountId;
}

/** Publishes one event through the product's publish path (the outbox insert a worker's dispatcher hands on). */
export async function publishBenchEvent(pool: Pool, accountId: string, eventId: string): Promise<void> {
  const data = { parcel: { ...exampleEvent('parcel.created').data.parcel, id: `p_${eventId}` } };
  await publishEvent({ pool }, { accountId, livemode: false, type: 'parcel.created', data, id: eventId });
}

let engines = 0;

/** A task queue of its own for each engine of the run. */
export function engineTaskQueue(ctx: BenchContext, variant: EngineVariant): string {
  return `bench-${ctx.runId}-${variant.name}-${engines++}`;
}

export async function startEngine(ctx: BenchContext, variant: EngineVariant = SHIPPED): Promise<Engine> {
  const taskQueue = engineTaskQueue(ctx, variant);
  const config = engineConfig(ctx, taskQueue, variant.env);
  const pool = ctx.pool;
  const completions = new Completions();
  const worker = await createWorker({
    config,
    connection: ctx.connection,
    pool,
    options: { workflowsPath: undefined, workflowBundle: ctx.engineBundle, sinks: completions.sinks },
  });
  // The worker hands published events to Temporal through its outbox dispatcher, as in production.
  const running = runWorker(worker, {
    config,
    connection: ctx.connection,
    pool,
  });
  return {
    config,
    worker,
    allClosed: () => allClosed(ctx.client, taskQueue, 'deliverEvent', completions),
    addAccount: (urls) => addBenchAccount(pool, urls),
    publish: (accountId, eventId) => publishBenchEvent(pool, accountId, eventId),
    completed: (eventId) => completions.waitFor(WORKFLOW_ID.deliverEvent(eventId)),
    async stop() {
      worker.shutdown();
      await running;
    },
  };
}

/** Rejects when `promise` has not settled within `ms`: a lost delivery must fail the run, not hang it. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`bench: ${what} not done within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
