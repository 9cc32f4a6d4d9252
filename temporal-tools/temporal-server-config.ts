import path from 'node:path';
import type { CliSearchAttributeType } from '../src/core/delivery-contract';

/**
 * The pure half of temporal-server.ts: what the Temporal server and its SQL tool are told, as data, so a
 * unit test can check it without Go, PostgreSQL or a free port. Nothing here touches the disk or the network.
 */

/** Pinned to the server the dev server embeds (CLI 1.5.1) and docker-compose.yml runs. */
export const TEMPORAL_SERVER_VERSION = '1.29.1';

/** What a cluster of ours runs with unless told otherwise; docker-compose.yml sets the same (a unit test checks). */
export const DEFAULT_NUM_HISTORY_SHARDS = 4;
export const DEFAULT_RETENTION_HOURS = 72;
/**
 * The Go collector's target for every Temporal server we start (GOGC; Go's default is 100): the server then
 * collects half as often, for a larger heap. On the dev server under load CPU per delivery fell by 0.4-1 ms
 * and the server's resident memory rose from about 420 to 570 MB (docs/performance.md "CPU per delivery").
 * docker-compose.yml sets the same (a unit test checks).
 */
export const TEMPORAL_SERVER_GOGC = '200';

/** The environment a Temporal server process of ours runs with: the caller's, with our GOGC unless it sets one. */
export function temporalServerEnv(env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...env, GOGC: env.GOGC || TEMPORAL_SERVER_GOGC };
}

/**
 * The dev server's environment: the server's, and Go's processors held to half the machine's cores (GOMAXPROCS,
 * at least 1) unless the caller sets them. The dev server shares its machine with the worker and Postgres, and it
 * writes through one SQLite connection; with every core its idle Go threads spin looking for work and take CPU
 * from the others. On 2 cores (1 processor) CPU per delivery under load fell by about a tenth, the server's by
 * about an eighth (docs/performance.md "CPU per delivery"). The full server keeps Go's default: it has its own
 * machine.
 */
export function devServerEnv(cores: number, env: NodeJS.ProcessEnv = process.env): NodeJS.ProcessEnv {
  return { ...temporalServerEnv(env), GOMAXPROCS: env.GOMAXPROCS || String(Math.max(1, Math.floor(cores / 2))) };
}

/** Committed, and mounted into the compose server by DYNAMIC_CONFIG_FILE_PATH: one file for both topologies. */
export const DEFAULT_DYNAMIC_CONFIG_FILE = path.join(__dirname, '..', 'deploy', 'temporal', 'dynamicconfig.yaml');

/** The plugin the schema directory below is written for; `postgres12_pgx` reads the same schema. */
export const SQL_PLUGIN = 'postgres12';

/** Where the server module ships its PostgreSQL schemas, relative to the module root and to our cache. */
export const SCHEMA_DIRS = {
  temporal: 'schema/postgresql/v12/temporal/versioned',
  visibility: 'schema/postgresql/v12/visibility/versioned',
} as const;

export interface PostgresTarget {
  host: string;
  port: number;
  user: string;
  password: string;
}

export interface TemporalDatabases {
  /** Executions, history, namespaces, cluster metadata. */
  temporal: string;
  /** Advanced visibility on PostgreSQL: the list/count queries by search attribute. */
  visibility: string;
}

/** The ports one single-process cluster binds, all on 127.0.0.1. */
export interface ServerPorts {
  frontendGrpc: number;
  frontendHttp: number;
  frontendMembership: number;
  historyGrpc: number;
  historyMembership: number;
  matchingGrpc: number;
  matchingMembership: number;
  workerGrpc: number;
  workerMembership: number;
}

/**
 * Temporal's own port layout (config/docker.yaml: 7233 frontend, 7234 history, 7235 matching, 7239 worker, 7243
 * HTTP, membership 300 below each), shifted to the frontend port asked for. Fixed ports are what a deployment
 * has, and they matter after a crash: the dead instance stays in cluster_membership for 20 s, and a restart on
 * other membership ports first tries to join it (about 45 s of "Not enough hosts" before matching serves).
 * On the same ports the new instance is that member.
 */
export function standardPorts(frontendGrpc: number): ServerPorts {
  return {
    frontendGrpc,
    frontendHttp: frontendGrpc + 10,
    frontendMembership: frontendGrpc - 300,
    historyGrpc: frontendGrpc + 1,
    historyMembership: frontendGrpc - 299,
    matchingGrpc: frontendGrpc + 2,
    matchingMembership: frontendGrpc - 298,
    workerGrpc: frontendGrpc + 6,
    workerMembership: frontendGrpc - 294,
  };
}

/** cluster_membership.rpc_port is a Postgres smallint: the server dies on a membership port above this. */
export const MAX_MEMBERSHIP_PORT = 32_767;

export interface ServerConfigInput {
  postgres: PostgresTarget;
  databases: TemporalDatabases;
  ports: ServerPorts;
  /** Fixed when the databases are first used: the server refuses to start on a different count later. */
  numHistoryShards: number;
  dynamicConfigFile: string;
  logLevel: 'debug' | 'info' | 'warn' | 'error';
  /**
   * Per store and per service: one process runs four services, each with its own pools, so the real ceiling
   * is 4 x (default + visibility). PostgreSQL here allows 100 connections shared with every test run.
   */
  maxConns: { default: number; visibility: number };
}

const BIND_IP = '127.0.0.1';

/** Databases of one installation: `temporal_<prefix>` and `temporal_<prefix>_visibility`. */
export function databaseNames(prefix: string): TemporalDatabases {
  // The SQL tool interpolates names unquoted into DROP DATABASE, and Postgres folds case: keep them plain.
  if (!/^[a-z][a-z0-9_]{0,40}$/.test(prefix)) {
    throw new Error(`database prefix must be lowercase letters, digits and _ (got ${JSON.stringify(prefix)})`);
  }
  return { temporal: `temporal_${prefix}`, visibility: `temporal_${prefix}_visibility` };
}

/** Host, port and credentials from a postgres:// URL; its database part is ignored (we name our own). */
export function postgresTarget(databaseUrl: string): PostgresTarget {
  const url = new URL(databaseUrl);
  if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') {
    throw new Error(`not a postgres:// URL: ${url.protocol}`);
  }
  return {
    host: url.hostname || '127.0.0.1',
    port: url.port ? Number(url.port) : 5432,
    user: decodeURIComponent(url.username) || 'postgres',
    password: decodeURIComponent(url.password),
  };
}

function sqlStore(postgres: PostgresTarget, databaseName: string, maxConns: number): Record<string, unknown> {
  return {
    sql: {
      pluginName: SQL_PLUGIN,
      databaseName,
      connectAddr: `${postgres.host}:${postgres.port}`,
      connectProtocol: 'tcp',
      user: postgres.user,
      password: postgres.password,
      maxConns,
      maxIdleConns: maxConns,
      maxConnLifetime: '1h',
    },
  };
}

function rpc(grpcPort: number, membershipPort: number, httpPort?: number): Record<string, unknown> {
  const value: Record<string, unknown> = { grpcPort, membershipPort, bindOnIP: BIND_IP };
  if (httpPort !== undefined) value.httpPort = httpPort;
  return { rpc: value };
}

/**
 * The server's static config, shaped like the module's config/development-postgres12.yaml and the docker image's
 * template (the same keys docker-compose.yml fills from its environment), with every port our own.
 */
export function serverConfig(input: ServerConfigInput): Record<string, unknown> {
  const { ports, postgres, databases } = input;
  const frontendAddress = `${BIND_IP}:${ports.frontendGrpc}`;
  return {
    log: { stdout: true, level: input.logLevel },
    persistence: {
      defaultStore: 'default',
      visibilityStore: 'visibility',
      numHistoryShards: input.numHistoryShards,
      datastores: {
        default: sqlStore(postgres, databases.temporal, input.maxConns.default),
        visibility: sqlStore(postgres, databases.visibility, input.maxConns.visibility),
      },
    },
    global: {
      membership: { maxJoinDuration: '30s', broadcastAddress: BIND_IP },
      // 0 keeps pprof off; no `metrics` block means the server's no-op metrics handler.
      pprof: { port: 0 },
    },
    services: {
      frontend: rpc(ports.frontendGrpc, ports.frontendMembership, ports.frontendHttp),
      history: rpc(ports.historyGrpc, ports.historyMembership),
      matching: rpc(ports.matchingGrpc, ports.matchingMembership),
      worker: rpc(ports.workerGrpc, ports.workerMembership),
    },
    clusterMetadata: {
      enableGlobalNamespace: false,
      failoverVersionIncrement: 10,
      masterClusterName: 'active',
      currentClusterName: 'active',
      clusterInformation: {
        active: {
          enabled: true,
          initialFailoverVersion: 1,
          rpcName: 'frontend',
          rpcAddress: frontendAddress,
          httpAddress: `${BIND_IP}:${ports.frontendHttp}`,
        },
      },
    },
    dcRedirectionPolicy: { policy: 'noop' },
    // The file client refuses a poll interval under 5 s; the compose image polls every 60 s too.
    dynamicConfigClient: { filepath: input.dynamicConfigFile, pollInterval: '60s' },
  };
}

/**
 * Block-style YAML for plain data. Every string is written as a JSON string, which YAML reads as a double-quoted
 * scalar, so no value (a password, a path) can change the document's structure.
 */
export function toYaml(value: unknown, indent = 0): string {
  const pad = ' '.repeat(indent);
  if (Array.isArray(value)) {
    if (value.length === 0) return `${pad}[]\n`;
    return value
      .map((item) => (isBlock(item) ? `${pad}-\n${toYaml(item, indent + 2)}` : `${pad}- ${scalar(item)}\n`))
      .join('');
  }
  if (isRecord(value)) {
    const entries = Object.entries(value).filter(([, v]) => v !== undefined);
    if (entries.length === 0) return `${pad}{}\n`;
    return entries
      .map(([key, v]) =>
        isBlock(v) ? `${pad}${scalar(key)}:\n${toYaml(v, indent + 2)}` : `${pad}${scalar(key)}: ${scalar(v)}\n`,
      )
      .join('');
  }
  return `${pad}${scalar(value)}\n`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBlock(value: unknown): boolean {
  return (Array.isArray(value) && value.length > 0) || (isRecord(value) && Object.keys(value).length > 0);
}

function scalar(value: unknown): string {
  if (typeof value === 'string')
    return /^[A-Za-z_][A-Za-z0-9_.]*$/.test(value) && !RESERVED.has(value.toLowerCase())
      ? value
      : JSON.stringify(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value === null) return 'null';
  if (Array.isArray(value) || isRecord(value)) return JSON.stringify(value);
  throw new Error(`cannot write ${typeof value} as YAML`);
}

/** Bare words YAML would read as something other than a string. */
const RESERVED = new Set(['true', 'false', 'yes', 'no', 'on', 'off', 'null', 'y', 'n']);

/** `temporal-server` arguments: config dir is joined to --root by the server (cmd/server/main.go). */
export function serverArgs(options: { rootDir: string; env: string }): string[] {
  return ['--root', options.rootDir, '--config', 'config', '--env', options.env, '--allow-no-auth', 'start'];
}

/** Global flags of `temporal-sql-tool` for one database (tools/sql/main.go, urfave/cli v1: flags before the command). */
export function sqlToolArgs(postgres: PostgresTarget, database: string, command: string[]): string[] {
  const args = [
    '--plugin',
    SQL_PLUGIN,
    '--endpoint',
    postgres.host,
    '--port',
    String(postgres.port),
    '--user',
    postgres.user,
  ];
  if (postgres.password) args.push('--password', postgres.password);
  args.push('--database', database, ...command);
  return args;
}

/** The three steps that create a database if needed and bring its schema to the newest version shipped. */
export function schemaSteps(schemaDir: string): { create: string[]; setup: string[]; update: string[] } {
  return {
    // `create` is not idempotent (plain CREATE DATABASE); the caller treats "already exists" as done.
    create: ['create-database', '--defaultdb', 'postgres'],
    // Version tables only, at 0.0; skipped when the database is already further on.
    setup: ['setup-schema', '-v', '0.0'],
    // Applies every versioned step above the recorded version, so a rerun is a no-op.
    update: ['update-schema', '--schema-dir', schemaDir],
  };
}

/** Wire values of temporal.api.enums.v1.IndexedValueType (the client package does not export the enum). */
export const INDEXED_VALUE_TYPES: Record<CliSearchAttributeType, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

/** A visibility query naming every attribute once, with a value of its type. */
export function probeQuery(attributes: Record<string, CliSearchAttributeType>): string {
  const sample: Record<CliSearchAttributeType, string> = {
    Text: '"probe"',
    Keyword: '"probe"',
    KeywordList: '"probe"',
    Int: '0',
    Double: '0',
    Bool: 'true',
    Datetime: '"2000-01-01T00:00:00Z"',
  };
  return Object.entries(attributes)
    .map(([name, type]) => `${name} = ${sample[type]}`)
    .join(' AND ');
}
