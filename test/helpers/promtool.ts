import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * promtool from Debian's `prometheus` package, for `promtool check rules` / `test rules` on deploy/prometheus.
 * On PATH it is used as is; otherwise the package is downloaded (apt-get download: no install, no service
 * started) and promtool alone is extracted into the cache beside the Temporal CLI, once per machine.
 * Returns the binary, or why there is none (the caller skips and says so).
 */
const CACHED = path.join(os.homedir(), '.cache', 'parcel-webhooks', 'promtool-debian', 'promtool');

function run(file: string, args: string[], cwd?: string): void {
  execFileSync(file, args, {
    cwd,
    stdio: 'pipe',
    timeout: 300_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
}

function onPath(): string | undefined {
  try {
    return execFileSync('sh', ['-c', 'command -v promtool'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

function download(log: (msg: string) => void): string | { reason: string } {
  if (!existsSync('/usr/bin/apt-get'))
    return { reason: "no promtool on PATH and no apt-get to fetch Debian's prometheus package" };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'promtool-'));
  try {
    log("fetching promtool from Debian's prometheus package (once per machine)...");
    try {
      run('apt-get', ['download', 'prometheus'], dir);
    } catch {
      // A fresh image has no package lists yet; only root can fetch them.
      if (process.getuid?.() !== 0)
        throw new Error('apt-get download prometheus failed and only root can run apt-get update');
      run('apt-get', ['update']);
      run('apt-get', ['download', 'prometheus'], dir);
    }
    run('sh', ['-c', 'dpkg-deb --fsys-tarfile prometheus_*.deb | tar -x ./usr/bin/promtool'], dir);
    mkdirSync(path.dirname(CACHED), { recursive: true });
    // Copied beside its final name, then renamed: a run that stops halfway never leaves a broken binary cached.
    copyFileSync(path.join(dir, 'usr', 'bin', 'promtool'), `${CACHED}.part`);
    renameSync(`${CACHED}.part`, CACHED);
    return CACHED;
  } catch (err) {
    return { reason: `could not fetch promtool: ${(err as Error).message.split('\n')[0]}` };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export function ensurePromtool(log: (msg: string) => void): string | { reason: string } {
  const found = onPath();
  if (found) return found;
  if (existsSync(CACHED)) return CACHED;
  return download(log);
}
