/**
 * The full Temporal server on PostgreSQL, built and run by the project itself (the production topology): the same
 * four services a cluster runs, in one process, on our own databases with advanced visibility in Postgres.
 * Self-contained on purpose (node built-ins, the Temporal client, core's search attribute types and its sibling
 * temporal-server-*.ts files only), so the CLI, the cluster test run and the benchmark can all start it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { CliSearchAttributeType } from '../src/core/delivery-contract';
import { childStopper } from './child-process';
import { installedTemporalServer } from './temporal-server-build';
import {
  DEFAULT_DYNAMIC_CONFIG_FILE,
  DEFAULT_NUM_HISTORY_SHARDS,
  DEFAULT_RETENTION_HOURS,
  INDEXED_VALUE_TYPES,
  databaseNames,
  postgresTarget,
  probeQuery,
  serverArgs,
  serverConfig,
  temporalServerEnv,
  toYaml,
  type ServerPorts,
  type TemporalDatabases,
} from './temporal-server-config';
import type { DatabaseOptions } from './temporal-server-databases';
import { choosePorts } from './temporal-server-ports';

export {
  ensureTemporalServer,
  installedTemporalServer,
  temporalServerCacheDir,
  type TemporalServerInstall,
} from './temporal-server-build';
export { dropTemporalDatabases, setupTemporalDatabases, type DatabaseOptions } from './temporal-server-databases';

const STOP_GRACE_MS = 20_000;

export interface TemporalServerOptions extends DatabaseOptions {
  /** Frontend gRPC port; the others follow Temporal's layout around it where free (free ones when omitted). */
  port?: number;
  /** Every port, e.g. a stopped instance's `ports` to restart it as the same cluster member. */
  ports?: ServerPorts;
  numHistoryShards?: number;
  namespace?: string;
  retentionHours?: number;
  /** Registered on the namespace through the operator API, e.g. src/core/delivery-contract.ts's SEARCH_ATTRIBUTE_CLI_TYPES. */
  searchAttributes?: Record<string, CliSearchAttributeType>;
  /** The committed deploy/temporal/dynamicconfig.yaml unless given. */
  dynamicConfigFile?: string;
  /** Where the config and server.log go; a fresh temporary folder (removed at stop) when omitted. */
  runDir?: string;
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  maxConns?: { default: number; visibility: number };
  readyTimeoutMs?: number;
}

export interface TemporalServer {
  address: string;
  namespace: string;
  databases: TemporalDatabases;
  /** In use: fixed by the first start on these databases. */
  numHistoryShards: number;
  requestedShards: number;
  ports: ServerPorts;
  cluster: ClusterFacts;
  runDir: string;
  logFile: string;
  process: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts the server on databases set up by setupTemporalDatabases and resolves once it answers, the namespace
 * exists and the search attributes are usable; stop() ends it (SIGTERM, then SIGKILL) and waits for the exit.
 */
export async function startTemporalServer(options: TemporalServerOptions): Promise<TemporalServer> {
  const install = options.install ?? installedTemporalServer();
  const namespace = options.namespace ?? 'default';
  const numHistoryShards = options.numHistoryShards ?? DEFAULT_NUM_HISTORY_SHARDS;
  const databases = databaseNames(options.prefix);
  const ownRunDir = options.runDir === undefined;
  const runDir = options.runDir ?? mkdtempSync(path.join(os.tmpdir(), 'parcel-temporal-'));
  const ports = options.ports ?? (await choosePorts(options.port));
  const envName = 'parcel';
  mkdirSync(path.join(runDir, 'config'), { recursive: true });
  const config = serverConfig({
    postgres: postgresTarget(options.databaseUrl),
    databases,
    ports,
    numHistoryShards,
    dynamicConfigFile: path.resolve(options.dynamicConfigFile ?? DEFAULT_DYNAMIC_CONFIG_FILE),
    logLevel: options.logLevel ?? 'warn',
    maxConns: options.maxConns ?? { default: 5, visibility: 2 },
  });
  writeFileSync(path.join(runDir, 'config', `${envName}.yaml`), toYaml(config));

  const logFile = path.join(runDir, 'server.log');
  const logFd = openSync(logFile, 'w');
  // Its own process group: a terminal's Ctrl-C goes to our process, which stops the server in order, rather than
  // to both at once (the caller would then see the server die before it asked).
  const child = spawn(install.serverPath, serverArgs({ rootDir: runDir, env: envName }), {
    stdio: ['ignore', logFd, logFd],
    detached: true,
    env: temporalServerEnv(),
  });
  closeSync(logFd);
  const stopChild = childStopper(child, STOP_GRACE_MS);
  child.once('error', () => undefined); // a failed spawn also emits exit; waitUntilReady reports it
  const address = `127.0.0.1:${ports.frontendGrpc}`;

  const stop = async (): Promise<void> => {
    await stopChild();
    if (ownRunDir) rmSync(runDir, { recursive: true, force: true });
  };
  let facts: ClusterFacts;
  try {
    facts = await waitUntilReady({
      address,
      child,
      namespace,
      options,
      deadline: Date.now() + (options.readyTimeoutMs ?? 120_000),
    });
  } catch (err) {
    const tail = readTail(logFile);
    await stop();
    throw new Error(`${(err as Error).message}\n--- server.log (last lines) ---\n${tail}`, { cause: err });
  }
  // The server keeps the count its databases were created with and only warns in its log: say so to the caller.
  return {
    address,
    namespace,
    databases,
    numHistoryShards: facts.historyShardCount,
    requestedShards: numHistoryShards,
    ports,
    cluster: facts,
    runDir,
    logFile,
    process: child,
    stop,
  };
}

/** The last lines of server.log, JSON lines cut to level, message and error (their stack traces run to pages). */
function readTail(file: string, lines = 8): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).map(summariseLogLine).join('\n');
  } catch {
    return '(no log)';
  }
}

function summariseLogLine(line: string): string {
  try {
    const entry = JSON.parse(line) as { level?: string; msg?: string; error?: string };
    return `${entry.level ?? '?'}: ${entry.msg ?? ''}${entry.error ? ` (${entry.error})` : ''}`;
  } catch {
    return line.slice(0, 500);
  }
}
interface ReadyContext {
  address: string;
  child: ChildProcess;
  namespace: string;
  options: TemporalServerOptions;
  deadline: number;
}

/** Retries `step` until it succeeds, the server exits or the deadline passes: every wait here is bounded. */
async function retry<T>(ctx: ReadyContext, what: string, step: () => Promise<T>): Promise<T> {
  let lastError: unknown;
  while (Date.now() < ctx.deadline) {
    if (ctx.child.exitCode !== null || ctx.child.signalCode !== null) {
      throw new Error(
        `Temporal server exited (${ctx.child.exitCode ?? ctx.child.signalCode}) while waiting for ${what}`,
      );
    }
    try {
      return await step();
    } catch (err) {
      lastError = err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(
    `Temporal server on ${ctx.address}: no ${what} in time: ${(lastError as Error | undefined)?.message ?? 'no answer'}`,
  );
}

const GRPC_NOT_FOUND = 5;
const GRPC_ALREADY_EXISTS = 6;

/** What the running cluster says of itself: the shard count it uses is the one first persisted, not the asked one. */
export interface ClusterFacts {
  historyShardCount: number;
  persistenceStore: string;
  visibilityStore: string;
}

async function waitUntilReady(ctx: ReadyContext): Promise<ClusterFacts> {
  const connection = await retry(ctx, 'gRPC connection', async () => {
    const attempt = await Connection.connect({ address: ctx.address, connectTimeout: 1_000 });
    try {
      await attempt.workflowService.getSystemInfo({});
      return attempt;
    } catch (err) {
      await attempt.close();
      throw err;
    }
  });
  try {
    await retry(ctx, `namespace ${ctx.namespace}`, () => ensureNamespace(connection, ctx));
    // Registered is not yet served: calls naming the namespace answer NotFound until the frontend's namespace
    // cache refreshes (every 2 s by default); this call goes through that cache.
    await retry(ctx, `namespace ${ctx.namespace} in the frontend cache`, () =>
      connection.operatorService.listSearchAttributes({ namespace: ctx.namespace }),
    );
    const attributes = ctx.options.searchAttributes ?? {};
    if (Object.keys(attributes).length > 0) {
      await retry(ctx, 'search attributes', () => ensureSearchAttributes(connection, ctx.namespace, attributes));
      // The frontend validates search attributes against its namespace cache (refreshed every few seconds):
      // until a query naming them all is accepted, a workflow start carrying them could be refused.
      await retry(ctx, 'search attributes in the namespace cache', () =>
        connection.workflowService.countWorkflowExecutions({ namespace: ctx.namespace, query: probeQuery(attributes) }),
      );
    }
    const info = await connection.workflowService.getClusterInfo({});
    return {
      historyShardCount: info.historyShardCount,
      persistenceStore: info.persistenceStore,
      visibilityStore: info.visibilityStore,
    };
  } finally {
    await connection.close();
  }
}

type RetentionPeriod = NonNullable<
  Parameters<Connection['workflowService']['registerNamespace']>[0]['workflowExecutionRetentionPeriod']
>;

async function ensureNamespace(connection: Connection, ctx: ReadyContext): Promise<void> {
  try {
    await connection.workflowService.describeNamespace({ namespace: ctx.namespace });
    return;
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_NOT_FOUND) throw err;
  }
  try {
    await connection.workflowService.registerNamespace({
      namespace: ctx.namespace,
      // protobufjs encodes a plain number where its generated types ask for a Long (no Long import needed).
      workflowExecutionRetentionPeriod: {
        seconds: (ctx.options.retentionHours ?? DEFAULT_RETENTION_HOURS) * 3600,
      } as unknown as RetentionPeriod,
      description: 'Parcel Webhooks',
    });
  } catch (err) {
    if ((err as { code?: number }).code !== GRPC_ALREADY_EXISTS) throw err;
  }
  // Registered in the database; the describe above is what proves the frontend sees it.
  await connection.workflowService.describeNamespace({ namespace: ctx.namespace });
}

type AddRequest = Parameters<Connection['operatorService']['addSearchAttributes']>[0];
type IndexedValueType = NonNullable<AddRequest['searchAttributes']>[string];

async function ensureSearchAttributes(
  connection: Connection,
  namespace: string,
  wanted: Record<string, CliSearchAttributeType>,
): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.entries(wanted).filter(([name]) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(
      missing.map(([name, type]) => [name, INDEXED_VALUE_TYPES[type] as IndexedValueType]),
    ),
  });
}
