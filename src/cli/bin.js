#!/usr/bin/env node
'use strict';
// `npx parcel-webhooks`: runs the TypeScript sources through tsx, in a checkout and in the image alike (the image
// keeps src/ and tsx); the compiled dist/cli only where the sources are absent.
const fs = require('node:fs');
const path = require('node:path');

const source = path.join(__dirname, 'index.ts');
if (fs.existsSync(source)) {
  require('tsx/cjs');
  require(source).main(process.argv);
} else {
  require(path.join(__dirname, '..', '..', 'dist', 'cli', 'index.js')).main(process.argv);
}
