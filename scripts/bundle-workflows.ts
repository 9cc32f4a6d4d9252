import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';

/**
 * Production workers load a prebuilt bundle (dist/workflow-bundle.js, found by worker/worker.ts)
 * instead of running webpack at every start.
 */
async function main(): Promise<void> {
  const { code } = await bundleWorkflowCode({ workflowsPath: path.join(__dirname, '..', 'workflows', 'index.ts') });
  const target = path.join(__dirname, '..', 'dist', 'workflow-bundle.js');
  // Run on its own (not after tsc in `npm run build`), dist/ may not exist yet.
  mkdirSync(path.dirname(target), { recursive: true });
  writeFileSync(target, code);
  process.stdout.write(`workflow bundle: ${target} (${Math.round(code.length / 1024)} kB)\n`);
}

main().catch((err) => {
  process.stderr.write(`bundle-workflows: ${(err as Error).message}\n`);
  process.exit(1);
});
