'use strict';
// Plain JavaScript with no dependencies, like ensure-install.js: it runs before the tests.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');

/** Debian's Chromium, which the browser tests drive through playwright-core. */
const CHROMIUM_PATH = '/usr/bin/chromium';
const HOW = `browser tests need Chromium at ${CHROMIUM_PATH}: run \`sudo apt-get install -y chromium\` (Debian) and retry`;

function aptGet(args) {
  execFileSync('apt-get', args, { stdio: 'inherit', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
}

/**
 * Installs Debian's `chromium` when it is missing and we are root, as the test setup builds the Temporal CLI
 * when it is missing; otherwise stops with one line saying how. The browser tests are never skipped.
 */
function ensureChromium() {
  if (fs.existsSync(CHROMIUM_PATH)) return;
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
    process.stderr.write(`npm test: ${HOW}\n`);
    process.exit(1);
  }
  process.stdout.write('installing Debian chromium for the browser tests...\n');
  try {
    aptGet(['install', '-y', 'chromium']);
  } catch {
    // A fresh image has no package lists yet.
    try {
      aptGet(['update']);
      aptGet(['install', '-y', 'chromium']);
    } catch {
      process.stderr.write(`npm test: installing chromium failed; ${HOW}\n`);
      process.exit(1);
    }
  }
  if (!fs.existsSync(CHROMIUM_PATH)) {
    process.stderr.write(`npm test: chromium installed but ${CHROMIUM_PATH} is missing; ${HOW}\n`);
    process.exit(1);
  }
}

module.exports = { ensureChromium, CHROMIUM_PATH };
