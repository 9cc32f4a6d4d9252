import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..', '..');
const patchesDir = path.join(root, 'patches');

/** `@temporalio+worker+1.24.0.patch` -> the package `@temporalio/worker` at `1.24.0` (patch-package's naming). */
function patchTarget(file: string): { name: string; version: string } {
  const match = /^(.+)\+([^+]+)\.patch$/.exec(file);
  if (!match) throw new Error(`patches/${file}: not named <package>+<version>.patch`);
  return { name: (match[1] as string).replace('+', '/'), version: match[2] as string };
}

const patches = readdirSync(patchesDir).filter((file) => file.endsWith('.patch'));

/**
 * Each patch in patches/ (patches/README.md) was written against one version of its package. patch-package still
 * applies a patch to another version when its hunks happen to fit, with only a warning: this fails instead, so an
 * upgrade of a patched dependency also ports (or drops) its patch.
 */
describe('dependency patches', () => {
  it('patch the Temporal worker only', () => {
    expect(patches).toEqual(['@temporalio+worker+1.24.0.patch']);
  });

  it.each(patches)('%s: names the installed version of its package', (file) => {
    const { name, version } = patchTarget(file);
    const installed = (JSON.parse(readFileSync(path.join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
    expect(installed, `patches/${file} is for ${name}@${version} but ${name}@${installed} is installed: port the patch as patches/README.md says, or drop it`).toBe(version);
  });

  it.each(patches)('%s: its package is pinned to that version in package.json', (file) => {
    const { name, version } = patchTarget(file);
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { dependencies?: Record<string, string> };
    expect(manifest.dependencies?.[name], `package.json must pin ${name} to exactly ${version}, the version patches/${file} is for`).toBe(version);
  });
});
