import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/**
 * The oldest CLI the dev server's flags are known to work with, and the one built when none is installed: v1.5.1 is
 * the newest CLI that builds from the Go module proxy.
 */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const MODULE = 'github.com/temporalio/cli/cmd/temporal';
/** `temporal --version` answers at once; a binary that hangs is not a usable CLI. */
const VERSION_TIMEOUT_MS = 10_000;

/** Runs a program to its end and gives its standard output; it rejects (with `stderr` on the error) on failure. */
export type Exec = (
  file: string,
  args: string[],
  options: { env?: NodeJS.ProcessEnv; timeout?: number; maxBuffer?: number },
) => Promise<{ stdout: string }>;

const execProgram: Exec = async (file, args, options) => {
  const { stdout } = await promisify(execFile)(file, args, { ...options, encoding: 'utf8' });
  return { stdout };
};

export function cachedCliPath(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'parcel-webhooks', `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/** The version `temporal --version` reports ("temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)"), or undefined. */
export function parseCliVersion(output: string): string | undefined {
  return /\bversion v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?)/.exec(output)?.[1];
}

/**
 * A build from source without release stamping (`go install`, as the fallback below makes) reports 0.0.0-DEV: its
 * version cannot be checked, so it is taken as it is.
 */
export function isSourceBuild(version: string): boolean {
  return /^0\.0\.0-DEV\b/i.test(version);
}

/** Whether a reported version is good enough for the dev server: the pinned one or newer, or a source build. */
export function isUsableVersion(version: string): boolean {
  return isSourceBuild(version) || isAtLeast(version, TEMPORAL_CLI_VERSION);
}

/** Whether `version` (major.minor.patch, any -suffix ignored) is `minimum` or newer, comparing parts as numbers. */
export function isAtLeast(version: string, minimum: string): boolean {
  const parts = (v: string) =>
    v
      .split('-')[0]!
      .split('.')
      .map((part) => Number.parseInt(part, 10));
  const [a, b] = [parts(version), parts(minimum)];
  for (let i = 0; i < 3; i += 1) {
    const [x, y] = [a[i] ?? 0, b[i] ?? 0];
    if (x !== y) return x > y;
  }
  return true;
}

/** The first executable `temporal` on PATH, or undefined. */
export function temporalOnPath(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const name = process.platform === 'win32' ? 'temporal.exe' : 'temporal';
  for (const dir of (env.PATH ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here, or not executable: look further
    }
  }
  return undefined;
}

/** The version a CLI reports, or undefined when it does not run or does not say. */
async function versionOf(cliPath: string, exec: Exec): Promise<string | undefined> {
  try {
    const { stdout } = await exec(cliPath, ['--version'], { timeout: VERSION_TIMEOUT_MS });
    return parseCliVersion(stdout);
  } catch {
    return undefined;
  }
}

export interface EnsureTemporalCliOptions {
  /** An explicit binary (TEMPORAL_CLI); it must be TEMPORAL_CLI_VERSION or newer, or a source build. */
  cliPath?: string;
  /** One line saying which CLI is used, or that one is being built. */
  log?: (msg: string) => void;
  env?: NodeJS.ProcessEnv;
  /** How programs run (`temporal --version`, `go install`); tests stub it. */
  exec?: Exec;
}

/**
 * Returns a usable `temporal` binary, the first of: TEMPORAL_CLI when given; a `temporal` on PATH whose version is
 * TEMPORAL_CLI_VERSION or newer (Homebrew, the install script, a release binary) or a source build; the pinned
 * build in the per-user cache; else that build, made from the Go module proxy into a temporary folder and renamed,
 * so a killed build leaves nothing behind. It logs one line saying which it used.
 */
export async function ensureTemporalCli(options: EnsureTemporalCliOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const exec = options.exec ?? execProgram;
  const log = options.log ?? (() => undefined);
  const given = options.cliPath ?? (env.TEMPORAL_CLI || undefined);
  if (given) {
    if (!existsSync(given)) throw new Error(`TEMPORAL_CLI names a file that does not exist: ${given}`);
    const version = await versionOf(given, exec);
    if (version === undefined) throw new Error(`TEMPORAL_CLI ${given} does not answer \`--version\` with a version`);
    if (!isUsableVersion(version)) {
      throw new Error(`TEMPORAL_CLI ${given} is v${version}; the dev server needs v${TEMPORAL_CLI_VERSION} or newer`);
    }
    log(`Temporal CLI ${given} (v${version}, from TEMPORAL_CLI)`);
    return given;
  }

  const onPath = temporalOnPath(env);
  let skipped = '';
  if (onPath) {
    const version = await versionOf(onPath, exec);
    if (version !== undefined && isUsableVersion(version)) {
      log(`Temporal CLI ${onPath} (v${version}, from PATH)`);
      return onPath;
    }
    skipped = ` (${onPath} is ${version === undefined ? 'of no known version' : `v${version}`}, older than needed)`;
  }

  const target = cachedCliPath(env);
  if (existsSync(target)) {
    log(`Temporal CLI ${target} (v${TEMPORAL_CLI_VERSION}, built earlier)${skipped}`);
    return target;
  }

  mkdirSync(path.dirname(target), { recursive: true });
  const staging = mkdtempSync(path.join(path.dirname(target), '.build-'));
  log(
    `building Temporal CLI v${TEMPORAL_CLI_VERSION} from the Go module proxy (about 4 minutes the first time; ` +
      `a \`temporal\` v${TEMPORAL_CLI_VERSION} or newer on PATH is used instead)${skipped}...`,
  );
  const started = Date.now();
  try {
    await exec('go', ['install', `${MODULE}@v${TEMPORAL_CLI_VERSION}`], {
      env: { ...env, GOBIN: staging },
      maxBuffer: 64 * 1024 * 1024,
    });
    renameSync(path.join(staging, 'temporal'), target);
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? (err as Error).message ?? '';
    throw new Error(
      `building the Temporal CLI failed (is Go installed?): ${stderr.trim().split('\n').slice(-5).join(' | ')}`,
      { cause: err },
    );
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`Temporal CLI built in ${Math.round((Date.now() - started) / 1000)} s: ${target}`);
  return target;
}
