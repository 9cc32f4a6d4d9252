import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * package-lock.json is what `npm ci` installs on every machine, so it must hold every platform's native binding,
 * not only this Linux machine's: npm reads a package's platform binaries (@swc/core-darwin-arm64, ...) from the
 * lock's optional entries, and a lock without them installs no binding on a Mac, where the worker's workflow
 * bundler then cannot start. npm drops those entries when it updates a lock over an existing node_modules, so
 * the check is on the committed file.
 */
const root = path.join(__dirname, '..', '..');
const LOCK = path.join(root, 'package-lock.json');

/** The developer and CI platforms besides Linux whose bindings the lock must carry for each native package. */
const PLATFORMS = [
  { os: 'darwin', cpu: 'arm64' },
  { os: 'darwin', cpu: 'x64' },
  { os: 'win32', cpu: 'x64' },
] as const;

interface LockEntry {
  version?: string;
  os?: string[];
  cpu?: string[];
  optionalDependencies?: Record<string, string>;
}
interface Lock {
  packages: Record<string, LockEntry>;
}

/** Where Node finds `name` from the package at `from` (a lock key): its own node_modules, then each parent's. */
function resolve(packages: Lock['packages'], from: string, name: string): string | undefined {
  let dir = from;
  for (;;) {
    const key = dir === '' ? `node_modules/${name}` : `${dir}/node_modules/${name}`;
    if (packages[key]) return key;
    if (dir === '') return undefined;
    const up = dir.lastIndexOf('/node_modules/');
    dir = up === -1 ? '' : dir.slice(0, up);
  }
}

/** Each problem as one line: an optional dependency missing from the lock, or a native package without a platform. */
function missingPlatformEntries(lock: Lock): string[] {
  const problems: string[] = [];
  for (const [key, entry] of Object.entries(lock.packages)) {
    const optional = Object.keys(entry.optionalDependencies ?? {});
    if (optional.length === 0) continue;
    const resolved = optional.map((name) => ({ name, key: resolve(lock.packages, key, name) }));
    for (const dep of resolved) if (!dep.key) problems.push(`${key}: optional ${dep.name} has no entry`);
    // A native package ships one optional package per platform (os set); a lone one (fsevents) is not such a set.
    const bindings = resolved.flatMap((dep) =>
      dep.key && lock.packages[dep.key]?.os ? [lock.packages[dep.key] as LockEntry] : [],
    );
    if (bindings.length < 2 && resolved.every((dep) => dep.key)) continue;
    for (const { os, cpu } of PLATFORMS) {
      const found = bindings.some((b) => b.os?.includes(os) && (!b.cpu || b.cpu.includes(cpu)));
      if (!found) problems.push(`${key}: no ${os}-${cpu} binding`);
    }
  }
  return problems;
}

/** What npm would write as the lock for the committed package.json, resolved from npm's cache where it can be. */
function relockedCopy(): { lock: string; mode: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'parcel-webhooks-lock-'));
  try {
    copyFileSync(path.join(root, 'package.json'), path.join(dir, 'package.json'));
    copyFileSync(LOCK, path.join(dir, 'package-lock.json'));
    const args = ['install', '--package-lock-only', '--ignore-scripts', '--no-audit', '--no-fund'];
    const run = (mode: string) =>
      execFileSync('npm', [...args, mode], {
        cwd: dir,
        stdio: 'pipe',
        timeout: 90_000,
        env: { ...process.env, npm_config_loglevel: 'error' },
      });
    let mode = '--offline';
    try {
      run(mode);
    } catch {
      // A version not in this machine's npm cache yet (a dependency added since it was filled): ask the registry.
      mode = '--prefer-offline';
      run(mode);
    }
    return { lock: readFileSync(path.join(dir, 'package-lock.json'), 'utf8'), mode };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Lock keys added, removed or changed between two locks. */
function changedKeys(before: Lock, after: Lock): string[] {
  const keys = new Set([...Object.keys(before.packages), ...Object.keys(after.packages)]);
  return [...keys].filter((k) => JSON.stringify(before.packages[k]) !== JSON.stringify(after.packages[k])).sort();
}

describe('package-lock.json', () => {
  const committed = readFileSync(LOCK, 'utf8');
  const lock = JSON.parse(committed) as Lock;

  it('holds the darwin-arm64, darwin-x64 and win32-x64 bindings of every native package', () => {
    const natives = Object.entries(lock.packages).filter(
      ([, e]) => Object.keys(e.optionalDependencies ?? {}).length > 1,
    );
    // @swc/core is the workflow bundler's compiler: the worker does not start without its binding.
    expect(natives.map(([key]) => key)).toContain('node_modules/@swc/core');
    expect(missingPlatformEntries(lock)).toEqual([]);
  });

  it('the check names a binding npm left out, and a native package that has no build for a platform', () => {
    const withoutMac = structuredClone(lock);
    delete withoutMac.packages['node_modules/@swc/core-darwin-arm64'];
    expect(missingPlatformEntries(withoutMac)).toEqual([
      'node_modules/@swc/core: optional @swc/core-darwin-arm64 has no entry',
      'node_modules/@swc/core: no darwin-arm64 binding',
    ]);
    const linuxOnly: Lock = {
      packages: {
        '': {},
        'node_modules/native': { optionalDependencies: { 'native-linux-x64': '1.0.0', 'native-linux-arm64': '1.0.0' } },
        'node_modules/native-linux-x64': { os: ['linux'], cpu: ['x64'] },
        'node_modules/native-linux-arm64': { os: ['linux'], cpu: ['arm64'] },
        // One optional package for one platform is a convenience, not a binding set.
        'node_modules/watcher': { optionalDependencies: { fsevents: '2.3.3' } },
        'node_modules/fsevents': { os: ['darwin'] },
      },
    };
    expect(missingPlatformEntries(linuxOnly)).toEqual([
      'node_modules/native: no darwin-arm64 binding',
      'node_modules/native: no darwin-x64 binding',
      'node_modules/native: no win32-x64 binding',
    ]);
  });

  it('is what `npm install` writes for package.json: npm would change nothing', { timeout: 200_000 }, () => {
    const { lock: relocked, mode } = relockedCopy();
    if (relocked !== committed) {
      const keys = changedKeys(lock, JSON.parse(relocked) as Lock);
      expect.fail(
        `npm install ${mode} changes package-lock.json (${keys.length} entries: ${keys.slice(0, 10).join(', ')}` +
          `${keys.length > 10 ? ', ...' : ''}); commit the lock as \`npm install\` writes it with no node_modules`,
      );
    }
  });
});
