import { spawn } from 'node:child_process';
import path from 'node:path';
import { childStopper } from '../temporal-tools/child-process';

/** What src/worker/main.ts prints once it polls its task queue. */
const READY_TEXT = 'worker: polling task queue';

export interface WorkerService {
  pid: number;
  /** SIGTERM: the worker drains and exits (SIGKILL after the grace period). */
  stop(): Promise<void>;
}

/**
 * The production worker (`parcel-webhooks worker`, src/worker/main.ts) as a process of its own, configured through
 * its environment alone, as an operator runs it: one per process, however many share a task queue. Resolves once
 * it polls (it bundles the workflows at start: seconds of CPU, before anything is measured).
 */
export async function startWorkerService(
  env: Record<string, string>,
  readyTimeoutMs = 120_000,
): Promise<WorkerService> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, '..', 'src', 'worker', 'main.ts')], {
    cwd: path.join(__dirname, '..'),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const stop = childStopper(child);
  let output = '';
  try {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`worker not polling after ${readyTimeoutMs / 1000} s: ${output.slice(-500)}`)),
        readyTimeoutMs,
      );
      const onData = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-4_000);
        if (output.includes(READY_TEXT)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`worker exited (${code ?? signal}) before polling: ${output.slice(-500)}`));
      });
    });
  } catch (err) {
    await stop('SIGKILL');
    throw err;
  }
  // Read but no longer kept: a full pipe would stall the worker.
  child.stdout?.removeAllListeners('data').resume();
  child.stderr?.removeAllListeners('data').resume();
  return { pid: child.pid as number, stop: () => stop('SIGTERM') };
}
