'use strict';
// `npm start`: install what is missing, then `parcel-webhooks start` (database, Temporal, worker, API).
const { spawn } = require('node:child_process');
const path = require('node:path');
const { ensureInstall, root } = require('./ensure-install');
const { nodeLineNotice } = require('./node-support');

const notice = nodeLineNotice(process.version);
if (notice) process.stderr.write(`npm start: ${notice}\n`);

ensureInstall();
const child = spawn(process.execPath, [path.join(root, 'src', 'cli', 'bin.js'), 'start', ...process.argv.slice(2)], {
  cwd: root,
  stdio: 'inherit',
});
// Ctrl-C reaches the child through the terminal's process group; we forward other signals and wait for it.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
