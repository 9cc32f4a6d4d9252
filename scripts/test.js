'use strict';
// `npm test`: install what is missing (dependencies, Debian's chromium), typecheck, then every test (the global
// setup builds the Temporal CLI if absent).
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { ensureChromium } = require('./ensure-chromium');
const { ensureInstall, root } = require('./ensure-install');

ensureInstall();
ensureChromium();
const bin = (name) => path.join(root, 'node_modules', '.bin', name);
try {
  execFileSync(bin('tsc'), ['--noEmit', '-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
  execFileSync(bin('vitest'), ['run', ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
} catch (err) {
  process.exit(typeof err.status === 'number' ? err.status : 1);
}
