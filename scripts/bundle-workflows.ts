import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { bundleWorkflowCode } from '@temporalio/worker';
import { WORKFLOW_TRACING_MODULE } from '../src/worker/tracing';

/**
 * Production workers load a prebuilt bundle (dist/workflow-bundle.js, found by src/worker/worker.ts)
 * instead of running webpack at every start.
 */
async function main(): Promise<void> {
  // Two bundles: the plain one, and one with Temporal's OpenTelemetry workflow interceptors, which a worker
  // loads only when tracing runs, so a worker without it pays nothing for them.
  const bundles = [
    { file: 'workflow-bundle.js', workflowInterceptorModules: [] as string[] },
    { file: 'workflow-bundle-traced.js', workflowInterceptorModules: [WORKFLOW_TRACING_MODULE] },
  ];
  for (const bundle of bundles) {
    const { code } = await bundleWorkflowCode({
      workflowsPath: path.join(__dirname, '..', 'src', 'workflows', 'index.ts'),
      workflowInterceptorModules: bundle.workflowInterceptorModules,
    });
    const target = path.join(__dirname, '..', 'dist', bundle.file);
    // Run on its own (not after tsc in `npm run build`), dist/ may not exist yet.
    mkdirSync(path.dirname(target), { recursive: true });
    writeFileSync(target, code);
    process.stdout.write(`workflow bundle: ${target} (${Math.round(code.length / 1024)} kB)\n`);
  }
}

main().catch((err) => {
  process.stderr.write(`bundle-workflows: ${(err as Error).message}\n`);
  process.exit(1);
});
