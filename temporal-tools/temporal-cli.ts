import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

/** Pinned: v1.5.1 is the newest CLI that builds from the Go module proxy. */
export const TEMPORAL_CLI_VERSION = '1.5.1';
const MODULE = 'github.com/temporalio/cli/cmd/temporal';

export function cachedCliPath(env: NodeJS.ProcessEnv = process.env): string {
  const cacheHome = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'parcel-webhooks', `temporal-cli-${TEMPORAL_CLI_VERSION}`, 'temporal');
}

/**
 * Returns a usable `temporal` binary: TEMPORAL_CLI when given, else the per-user cache, built from the Go
 * module proxy when absent. Built into a temporary folder and renamed, so a killed build leaves nothing behind.
 */
export async function ensureTemporalCli(
  options: { cliPath?: string; log?: (msg: string) => void; env?: NodeJS.ProcessEnv } = {},
): Promise<string> {
  const env = options.env ?? process.env;
  const given = options.cliPath ?? (env.TEMPORAL_CLI || undefined);
  if (given) {
    if (!existsSync(given)) throw new Error(`TEMPORAL_CLI names a file that does not exist: ${given}`);
    return given;
  }
  const target = cachedCliPath(env);
  if (existsSync(target)) return target;

  const log = options.log ?? (() => undefined);
  mkdirSync(path.dirname(target), { recursive: true });
  const staging = mkdtempSync(path.join(path.dirname(target), '.build-'));
  log(`building Temporal CLI v${TEMPORAL_CLI_VERSION} from the Go module proxy (about 4 minutes the first time)...`);
  const started = Date.now();
  try {
    await promisify(execFile)('go', ['install', `${MODULE}@v${TEMPORAL_CLI_VERSION}`], {
      env: { ...env, GOBIN: staging },
      maxBuffer: 64 * 1024 * 1024,
    });
    renameSync(path.join(staging, 'temporal'), target);
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`building the Temporal CLI failed (is Go installed?): ${stderr.trim().split('\n').slice(-5).join(' | ')}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  log(`Temporal CLI built in ${Math.round((Date.now() - started) / 1000)} s: ${target}`);
  return target;
}
