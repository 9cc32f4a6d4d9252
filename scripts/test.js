'use strict';
// `npm test`: install what is missing (dependencies, Debian's chromium), typecheck, lint, check the formatting, then
// every test (the global setup finds or builds the Temporal CLI).
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { ensureChromium } = require('./ensure-chromium');
const { ensureInstall, root } = require('./ensure-install');

ensureInstall();
ensureChromium();
// Both keep a cache in node_modules/.cache, keyed on file contents, so a run re-reads only what changed. ESLint's
// cache keys each file on itself only: after a change to a type that other files use, `npx eslint .` without the
// cache re-checks them all (a fresh clone, as CI has, always does).
const LINT_ARGS = ['.', '--cache', '--cache-strategy', 'content', '--cache-location', 'node_modules/.cache/eslint/'];
const FORMAT_CHECK_ARGS = ['--check', '.', '--cache', '--cache-strategy', 'content', '--log-level', 'warn'];
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
try {
  execFileSync(bin('tsc'), ['--noEmit', '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(bin('eslint'), LINT_ARGS, { cwd: root, stdio: 'inherit' });
  execFileSync(bin('prettier'), FORMAT_CHECK_ARGS, { cwd: root, stdio: 'inherit' });
  execFileSync(bin('vitest'), ['run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
} catch (err) {
  process.exit(typeof err.status === 'number' ? err.status : 1);
}
