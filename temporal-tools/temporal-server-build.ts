import { execFile } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { SCHEMA_DIRS, TEMPORAL_SERVER_VERSION, type TemporalDatabases } from './temporal-server-config';

/** Building the full Temporal server and its SQL tool once per machine, from the Go module proxy. */

const SERVER_PACKAGE = 'go.temporal.io/server/cmd/server';
const SQL_TOOL_PACKAGE = 'go.temporal.io/server/cmd/tools/sql';
const SERVER_BINARY = 'temporal-server';
const SQL_TOOL_BINARY = 'temporal-sql-tool';
/** A cold build is about 4-5 minutes on 2 busy cores; past this something is wrong, not slow. */
const BUILD_TIMEOUT_MS = 30 * 60_000;
const execFileAsync = promisify(execFile);

export interface TemporalServerInstall {
  dir: string;
  serverPath: string;
  sqlToolPath: string;
  schemaDirs: TemporalDatabases;
}

/** `~/.cache/parcel-webhooks/temporal-server-1.29.1/`, beside the CLI build (temporal-cli.ts). */
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
  return [install.serverPath, install.sqlToolPath, install.schemaDirs.temporal, install.schemaDirs.visibility].every(
    (p) => existsSync(p),
  );
}

/** The cached build, or an error saying how to make it. */
export function installedTemporalServer(env: NodeJS.ProcessEnv = process.env): TemporalServerInstall {
  const install = installAt(temporalServerCacheDir(env));
  if (!isComplete(install))
    throw new Error(
      `Temporal server ${TEMPORAL_SERVER_VERSION} is not built yet in ${install.dir}: run ensureTemporalServer() (npx parcel-webhooks temporal-server builds it)`,
    );
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
  log(
    `building Temporal server ${TEMPORAL_SERVER_VERSION} and its SQL tool from the Go module proxy (about 5 minutes the first time)...`,
  );
  const started = Date.now();
  try {
    const gobin = path.join(staging, 'bin');
    await goCommand(
      ['install', `${SERVER_PACKAGE}@v${TEMPORAL_SERVER_VERSION}`, `${SQL_TOOL_PACKAGE}@v${TEMPORAL_SERVER_VERSION}`],
      { ...env, GOBIN: gobin },
    );
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
    throw new Error(`go ${args[0]} failed (is Go installed?): ${stderr.trim().split('\n').slice(-5).join(' | ')}`, {
      cause: err,
    });
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
