// Builds the package twice from the same sources: ES modules into dist/esm and CommonJS into dist/cjs, each
// with its declarations and a one-line package.json that tells Node which kind the folder's .js files are.
// TypeScript is a build tool only: it comes from the nearest node_modules (the engine's, inside its repository).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const builds = [
  { dir: 'esm', type: 'module', args: ['--module', 'es2022', '--moduleResolution', 'bundler'] },
  { dir: 'cjs', type: 'commonjs', args: ['--module', 'commonjs', '--moduleResolution', 'node10'] },
];

rmSync(path.join(here, 'dist'), { recursive: true, force: true });
for (const build of builds) {
  const outDir = path.join(here, 'dist', build.dir);
  execFileSync(process.execPath, [tsc, '-p', path.join(here, 'tsconfig.json'), '--outDir', outDir, ...build.args], {
    stdio: 'inherit',
  });
  mkdirSync(outDir, { recursive: true });
  writeFileSync(path.join(outDir, 'package.json'), `${JSON.stringify({ type: build.type })}\n`);
}
