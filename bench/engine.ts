import path from 'node:path';
import { Client } from '@temporalio/client';
import { bundleWorkflowCode, type NativeConnection, type Worker, type WorkerOptions } from '@temporalio/worker';
import { WORKFLOW_ID } from '../core/delivery-contract';
import { exampleEvent } from '../core/event-schemas';
import { newId } from '../core/ids';
import { publishEvent } from '../domain/events';
import { loadConfig, type Config } from '../infra/config';
import { createPool, type Pool } from '../db/pool';
import { createWorker, runWorker } from '../worker/worker';
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
 * One engine configuration under test: environment the product reads (config) and worker options, so a lever
 * is measured exactly as an operator would switch it on.
 */
export interface EngineVariant {
  name: string;
  /** The worker's outbox dispatcher starts workflows eagerly (the product's default); false measures without. */
  eagerStart?: boolean;
  env?: Record<string, string>;
  workerOptions?: Partial<WorkerOptions>;
  /**
   * The engine (worker, dispatcher, publishing) reaches the run's database through Postgres's Unix socket
   * (PG_SOCKET_DIR) instead of TCP on loopback: a deployment choice, not a product default (DATABASE_URL's
   * default is TCP), measured for operators running both on one host.
   */
  unixSocket?: boolean;
  /** The dispatcher's passes over notified events at once (worker/dispatcher.ts NOTIFIED_PASSES when absent). */
  notifiedPasses?: number;
}

/** Where Debian's PostgreSQL (the machine's, which the bench's databases live on) puts its socket. */
const PG_SOCKET_DIR = '/var/run/postgresql';

/** The same database through the Unix socket: pg reads a host that is a path as a socket directory. */
function viaUnixSocket(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  return `postgres://${url.username}@${encodeURIComponent(PG_SOCKET_DIR)}${url.pathname}`;
}

export async function bundleEngine(): Promise<{ code: string }> {
  // Bundled once per run: every phase's worker reuses it instead of spending seconds of CPU on webpack.
  return bundleBenchWorkflows(path.join(__dirname, '..', 'workflows', 'index.ts'));
}

/** A workflow bundle for the bench: the given workflows, and the interceptor that reports their completions. */
export function bundleBenchWorkflows(workflowsPath: string): Promise<{ code: string }> {
  return bundleWorkflowCode({ workflowsPath, workflowInterceptorModules: [COMPLETION_INTERCEPTORS], logger: quietLogger });
}

export const quietLogger = { log: () => undefined, trace: () => undefined, debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** The environment an engine of the run reads (a worker in its own process gets exactly this). */
export function engineEnv(ctx: BenchContext, taskQueue: string, env: Record<string, string> = {}): Record<string, string> {
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
    await pool.query(`INSERT INTO webhook_endpoints (id, account_id, livemode, url, secret) VALUES ($1, $2, false, $3, $4)`, [
      newId('endpoint'),
      accountId,
      url,
      SECRET,
    ]);
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

export async function startEngine(ctx: BenchContext, variant: EngineVariant): Promise<Engine> {
  const taskQueue = engineTaskQueue(ctx, variant);
  const databaseUrl = variant.unixSocket ? viaUnixSocket(ctx.databaseUrl) : undefined;
  const config = engineConfig(ctx, taskQueue, { ...variant.env, ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}) });
  // Its own pool only when it reaches the database another way; the run's pool otherwise, as before.
  const pool = databaseUrl ? createPool(databaseUrl, 20) : ctx.pool;
  const completions = new Completions();
  const worker = await createWorker({
    config,
    connection: ctx.connection,
    pool,
    options: { workflowsPath: undefined, workflowBundle: ctx.engineBundle, sinks: completions.sinks, ...variant.workerOptions },
  });
  // The worker hands published events to Temporal through its outbox dispatcher, as in production.
  const running = runWorker(worker, { config, connection: ctx.connection, pool, eagerStart: variant.eagerStart ?? false, notifiedPasses: variant.notifiedPasses });
  return {
    config,
    worker,
    allClosed: () => allClosed(ctx.client, taskQueue, 'deliverEvent', completions),
    addAccount: (urls) => addBenchAccount(ctx.pool, urls),
    publish: (accountId, eventId) => publishBenchEvent(pool, accountId, eventId),
    completed: (eventId) => completions.waitFor(WORKFLOW_ID.deliverEvent(eventId)),
    async stop() {
      worker.shutdown();
      await running;
      if (pool !== ctx.pool) await pool.end();
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
