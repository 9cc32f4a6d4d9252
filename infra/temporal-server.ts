import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, cpSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import {
  DEFAULT_DYNAMIC_CONFIG_FILE,
  DEFAULT_NUM_HISTORY_SHARDS,
  DEFAULT_RETENTION_HOURS,
  INDEXED_VALUE_TYPES,
  MAX_MEMBERSHIP_PORT,
  SCHEMA_DIRS,
  TEMPORAL_SERVER_VERSION,
  databaseNames,
  postgresTarget,
  schemaSteps,
  serverArgs,
  serverConfig,
  standardPorts,
  sqlToolArgs,
  toYaml,
  type PostgresTarget,
  type SearchAttributeTypeName,
  type ServerPorts,
  type TemporalDatabases,
  probeQuery,
} from './temporal-server-config';

/**
 * The full Temporal server on PostgreSQL, built and run by the project itself (DESIGN.md "Running it": production
 * topology): the same four services a cluster runs, in one process, on our own databases with advanced
 * visibility in Postgres. Self-contained on purpose (node built-ins and the Temporal client only), so the CLI,
 * the cluster test run and the benchmark can all start it.
 */

const SERVER_PACKAGE = 'go.temporal.io/server/cmd/server';
const SQL_TOOL_PACKAGE = 'go.temporal.io/server/cmd/tools/sql';
const SERVER_BINARY = 'temporal-server';
const SQL_TOOL_BINARY = 'temporal-sql-tool';
/** A cold build is about 4-5 minutes on 2 busy cores; past this something is wrong, not slow. */
const BUILD_TIMEOUT_MS = 30 * 60_000;
const SQL_TOOL_TIMEOUT_MS = 2 * 60_000;
const STOP_GRACE_MS = 20_000;

const execFileAsync = promisify(execFile);

export interface TemporalServerInstall {
  dir: string;
  serverPath: string;
  sqlToolPath: string;
  schemaDirs: TemporalDatabases;
}

/** `~/.cache/parcel-webhooks/temporal-server-1.29.1/`, beside the CLI build (scripts/temporal-cli.ts). */
export function temporalServerCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'parcel-webhooks', `temporal-server-${TEMPORAL_SERVER_VERSION}`);
}

function installAt(dir: string): TemporalServerInstall {
  return {
    dir,
    serverPath: path.join(dir, SERVER_BINARY),
    sqlToolPath: path.join(dir, SQL_TOOL_BINARY),
    schemaDirs: { temporal: path.join(dir, SCHEMA_DIRS.temporal), visibility: path.join(dir, SCHEMA_DIRS.visibility) },
  };
}

function isComplete(install: TemporalServerInstall): boolean {
  return [install.serverPath, install.sqlToolPath, install.schemaDirs.temporal, install.schemaDirs.visibility].every((p) => existsSync(p));
}

/** The cached build, or an error saying how to make it. */
export function installedTemporalServer(env: NodeJS.ProcessEnv = process.env): TemporalServerInstall {
  const install = installAt(temporalServerCacheDir(env));
  if (!isComplete(install)) throw new Error(`Temporal server ${TEMPORAL_SERVER_VERSION} is not built yet in ${install.dir}: run ensureTemporalServer() (npx parcel-webhooks temporal-server builds it)`);
  return install;
}

/**
 * Builds the server and the SQL tool from the Go module proxy once, and copies the schemas the module ships.
 * `go install pkg@version` works for v1.29.1 (its go.mod has no replace directive, which is what would make go
 * install refuse); both packages come from the same module version, so one command builds both. Everything goes
 * into a temporary folder that is renamed into place, so a killed build leaves nothing half-made behind.
 */
export async function ensureTemporalServer(
  options: { log?: (msg: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<TemporalServerInstall> {
  const env = options.env ?? process.env;
  const log = options.log ?? (() => undefined);
  const target = installAt(temporalServerCacheDir(env));
  if (isComplete(target)) return target;

  const parent = path.dirname(target.dir);
  mkdirSync(parent, { recursive: true });
  const staging = mkdtempSync(path.join(parent, `.build-server-${TEMPORAL_SERVER_VERSION}-`));
  log(`building Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool from the Go module proxy (about 5 minutes the first time)...`);
  const started = Date.now();
  try {
    const gobin = path.join(staging, 'bin');
    await goCommand(['install', `${SERVER_PACKAGE}@v${TEMPORAL_SERVER_VERSION}`, `${SQL_TOOL_PACKAGE}@v${TEMPORAL_SERVER_VERSION}`], { ...env, GOBIN: gobin });
    const built = installAt(staging);
    renameSync(path.join(gobin, 'server'), built.serverPath);
    renameSync(path.join(gobin, 'sql'), built.sqlToolPath);
    rmSync(gobin, { recursive: true, force: true });
    await copySchemas(env, staging);
    // A build from another process may have finished first: theirs is as good as ours.
    if (isComplete(target)) return target;
    rmSync(target.dir, { recursive: true, force: true });
    renameSync(staging, target.dir);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`Temporal server built in ${Math.round((Date.now() - started) / 1000)} s: ${target.dir}`);
  return target;
}

async function goCommand(args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  try {
    const { stdout } = await execFileAsync('go', args, { env, timeout: BUILD_TIMEOUT_MS, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? (err as Error).message;
    throw new Error(`go ${args[0]} failed (is Go installed?): ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
  }
}

/** The schemas are in the module `go install` just downloaded: read them from the module cache, not the network. */
async function copySchemas(env: NodeJS.ProcessEnv, destination: string): Promise<void> {
  const moduleCache = (await goCommand(['env', 'GOMODCACHE'], env)).trim();
  const moduleRoot = path.join(moduleCache, 'go.temporal.io', `server@v${TEMPORAL_SERVER_VERSION}`);
  for (const dir of Object.values(SCHEMA_DIRS)) {
    const from = path.join(moduleRoot, dir);
    if (!existsSync(from)) throw new Error(`the server module has no ${dir} (looked in ${moduleRoot})`);
    cpSync(from, path.join(destination, dir), { recursive: true });
  }
  // The module cache is read-only; copies keep that mode, which would stop anyone but root deleting the cache.
  makeWritable(path.join(destination, 'schema'));
}

function makeWritable(p: string): void {
  const mode = statSync(p).mode;
  chmodSync(p, mode | 0o200);
  if (statSync(p).isDirectory()) for (const entry of readdirSync(p)) makeWritable(path.join(p, entry));
}

async function sqlTool(install: TemporalServerInstall, postgres: PostgresTarget, database: string, command: string[]): Promise<void> {
  try {
    await execFileAsync(install.sqlToolPath, sqlToolArgs(postgres, database, command), { timeout: SQL_TOOL_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024 });
  } catch (err) {
    const output = `${(err as { stdout?: string }).stdout ?? ''}${(err as { stderr?: string }).stderr ?? ''}`;
    throw Object.assign(new Error(`temporal-sql-tool ${command[0]} on ${database} failed: ${output.trim().split('\n').slice(-3).join(' | ') || (err as Error).message}`), { output });
  }
}

export interface DatabaseOptions {
  /** postgres:// URL of the server to use; only host, port and credentials are read. */
  databaseUrl: string;
  /** Databases are `temporal_<prefix>` and `temporal_<prefix>_visibility`. */
  prefix: string;
  install?: TemporalServerInstall;
}

/** Creates the two databases when missing and brings both schemas to the newest version the module ships. */
export async function setupTemporalDatabases(options: DatabaseOptions): Promise<TemporalDatabases> {
  const install = options.install ?? installedTemporalServer();
  const postgres = postgresTarget(options.databaseUrl);
  const databases = databaseNames(options.prefix);
  for (const kind of ['temporal', 'visibility'] as const) {
    const steps = schemaSteps(install.schemaDirs[kind]);
    try {
      await sqlTool(install, postgres, databases[kind], steps.create);
    } catch (err) {
      if (!/already exists/.test((err as { output?: string }).output ?? '')) throw err;
    }
    await sqlTool(install, postgres, databases[kind], steps.setup);
    await sqlTool(install, postgres, databases[kind], steps.update);
  }
  return databases;
}

/** Drops both databases (the server using them must be stopped first). */
export async function dropTemporalDatabases(options: DatabaseOptions): Promise<void> {
  const install = options.install ?? installedTemporalServer();
  const postgres = postgresTarget(options.databaseUrl);
  const databases = databaseNames(options.prefix);
  for (const database of [databases.temporal, databases.visibility]) {
    await sqlTool(install, postgres, database, ['drop-database', '--defaultdb', 'postgres', '--force']);
  }
}

export interface TemporalServerOptions extends DatabaseOptions {
  /** Frontend gRPC port; the others follow Temporal's layout around it where free (free ones when omitted). */
  port?: number;
  /** Every port, e.g. a stopped instance's `ports` to restart it as the same cluster member. */
  ports?: ServerPorts;
  numHistoryShards?: number;
  namespace?: string;
  retentionHours?: number;
  /** Registered on the namespace through the operator API, e.g. core/search-attributes.ts's definitions. */
  searchAttributes?: Record<string, SearchAttributeTypeName>;
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
  const child = spawn(install.serverPath, serverArgs({ rootDir: runDir, env: envName }), { stdio: ['ignore', logFd, logFd], detached: true });
  closeSync(logFd);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('error', () => undefined); // a failed spawn also emits exit; waitUntilReady reports it
  const address = `127.0.0.1:${ports.frontendGrpc}`;

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(killTimer);
    }
    if (ownRunDir) rmSync(runDir, { recursive: true, force: true });
  };
  let facts: ClusterFacts;
  try {
    facts = await waitUntilReady({ address, child, namespace, options, deadline: Date.now() + (options.readyTimeoutMs ?? 120_000) });
  } catch (err) {
    const tail = readTail(logFile);
    await stop();
    throw new Error(`${(err as Error).message}\n--- server.log (last lines) ---\n${tail}`);
  }
  // The server keeps the count its databases were created with and only warns in its log: say so to the caller.
  return { address, namespace, databases, numHistoryShards: facts.historyShardCount, requestedShards: numHistoryShards, ports, cluster: facts, runDir, logFile, process: child, stop };
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

/**
 * A port free right now, below 32768: the server records membership ports in cluster_membership.rpc_port, a
 * Postgres smallint, and dies on anything above (UpsertClusterMembership "out of range for type smallint").
 * Staying under Linux's ephemeral range (32768-60999) also keeps clear of ports the OS hands out on its own.
 */
async function freeLowPort(taken: Set<number>): Promise<number> {
  for (let i = 0; i < 200; i += 1) {
    const port = LOW_PORTS.min + Math.floor(Math.random() * (LOW_PORTS.max - LOW_PORTS.min));
    if (!taken.has(port) && (await canBind(port))) {
      taken.add(port);
      return port;
    }
  }
  throw new Error(`no free port between ${LOW_PORTS.min} and ${LOW_PORTS.max}`);
}

const LOW_PORTS = { min: 20_000, max: MAX_MEMBERSHIP_PORT };

function canBind(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * With a frontend port: Temporal's standard layout around it (so a restart on that port reuses every port),
 * each one that is busy or out of range replaced by a free one. Without: free ports throughout.
 */
async function choosePorts(frontendGrpc: number | undefined): Promise<ServerPorts> {
  const taken = new Set<number>(frontendGrpc === undefined ? [] : [frontendGrpc]);
  const wanted: Partial<ServerPorts> = frontendGrpc === undefined ? {} : standardPorts(frontendGrpc);
  const chosen = {} as ServerPorts;
  for (const key of PORT_KEYS) {
    if (key === 'frontendGrpc' && frontendGrpc !== undefined) {
      chosen[key] = frontendGrpc; // as asked, even if busy: the server's own error says so
      continue;
    }
    const preferred = wanted[key];
    const limit = key.endsWith('Membership') ? MAX_MEMBERSHIP_PORT : 65_535;
    const usable = preferred !== undefined && preferred > 1024 && preferred <= limit && !taken.has(preferred) && (await canBind(preferred));
    if (usable) taken.add(preferred);
    chosen[key] = usable ? preferred : await freeLowPort(taken);
  }
  return chosen;
}

const PORT_KEYS: (keyof ServerPorts)[] = [
  'frontendGrpc', 'frontendHttp', 'frontendMembership', 'historyGrpc', 'historyMembership',
  'matchingGrpc', 'matchingMembership', 'workerGrpc', 'workerMembership',
];

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
      throw new Error(`Temporal server exited (${ctx.child.exitCode ?? ctx.child.signalCode}) while waiting for ${what}`);
    }
    try {
      return await step();
    } catch (err) {
      lastError = err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`Temporal server on ${ctx.address}: no ${what} in time: ${(lastError as Error | undefined)?.message ?? 'no answer'}`);
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
    await retry(ctx, `namespace ${ctx.namespace} in the frontend cache`, () => connection.operatorService.listSearchAttributes({ namespace: ctx.namespace }));
    const attributes = ctx.options.searchAttributes ?? {};
    if (Object.keys(attributes).length > 0) {
      await retry(ctx, 'search attributes', () => ensureSearchAttributes(connection, ctx.namespace, attributes));
      // The frontend validates search attributes against its namespace cache (refreshed every few seconds):
      // until a query naming them all is accepted, a workflow start carrying them could be refused.
      await retry(ctx, 'search attributes in the namespace cache', () =>
        connection.workflowService.countWorkflowExecutions({ namespace: ctx.namespace, query: probeQuery(attributes) }));
    }
    const info = await connection.workflowService.getClusterInfo({});
    return { historyShardCount: info.historyShardCount, persistenceStore: info.persistenceStore, visibilityStore: info.visibilityStore };
  } finally {
    await connection.close();
  }
}

type RetentionPeriod = NonNullable<Parameters<Connection['workflowService']['registerNamespace']>[0]['workflowExecutionRetentionPeriod']>;

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
      workflowExecutionRetentionPeriod: { seconds: (ctx.options.retentionHours ?? DEFAULT_RETENTION_HOURS) * 3600 } as unknown as RetentionPeriod,
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

async function ensureSearchAttributes(connection: Connection, namespace: string, wanted: Record<string, SearchAttributeTypeName>): Promise<void> {
  const existing = await connection.operatorService.listSearchAttributes({ namespace });
  const missing = Object.entries(wanted).filter(([name]) => !(name in (existing.customAttributes ?? {})));
  if (missing.length === 0) return;
  await connection.operatorService.addSearchAttributes({
    namespace,
    searchAttributes: Object.fromEntries(missing.map(([name, type]) => [name, INDEXED_VALUE_TYPES[type] as IndexedValueType])),
  });
}
