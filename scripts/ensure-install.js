'use strict';
// Plain JavaScript with no dependencies: it runs before node_modules exists.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const root = path.join(__dirname, '..');

/** Installs dependencies when node_modules is missing or older than the lockfile. */
function ensureInstall() {
  const marker = path.join(root, 'node_modules', '.package-lock.json');
  const lock = path.join(root, 'package-lock.json');
  const stale = !fs.existsSync(marker) || fs.statSync(lock).mtimeMs > fs.statSync(marker).mtimeMs;
  if (!stale) return;
  process.stdout.write('installing dependencies...\n');
  // `npm install` keeps an existing node_modules and honours the locked versions; the committed lock is complete
  // for every platform (test/unit/lockfile.test.ts), so it leaves the lock unchanged.
  execFileSync('npm', ['install', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
}

module.exports = { ensureInstall, root };
