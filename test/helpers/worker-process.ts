import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';

const ROOT = path.join(__dirname, '..', '..');

export interface WorkerProcess {
  process: ChildProcess;
  output: string[];
  /** SIGKILL: no drain, no shutdown hook, exactly what a crashed machine does. */
  kill(): Promise<void>;
  /** SIGTERM and wait (SIGKILL after 10 s). */
  stop(): Promise<void>;
}

/**
 * The production worker entry (worker/main.ts) as a child process, one node process (tsx as a loader, not its
 * CLI wrapper) so a SIGKILL reaches the worker itself. Resolves once it polls its task queue.
 */
export async function startWorkerProcess(env: Record<string, string>, readyTimeoutMs = 60_000): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'worker', 'main.ts')], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stopWith = async (signal: NodeJS.Signals) => {
    if (!alive()) return;
    child.kill(signal);
    const force = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(force);
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker not ready after ${readyTimeoutMs} ms:\n${output.join('')}`)), readyTimeoutMs);
    const onData = (chunk: Buffer) => {
      output.push(chunk.toString());
      if (chunk.toString().includes('worker: polling task queue')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => output.push(chunk.toString()));
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`worker exited (${code ?? signal}) before polling:\n${output.join('')}`));
    });
  }).catch(async (err) => {
    await stopWith('SIGKILL');
    throw err;
  });
  return { process: child, output, kill: () => stopWith('SIGKILL'), stop: () => stopWith('SIGTERM') };
}
