import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { childStopper } from '../../temporal-tools/child-process';

const ROOT = path.join(__dirname, '..', '..');

export interface WorkerProcess {
  process: ChildProcess;
  output: string[];
  /** SIGKILL: no drain, no shutdown hook, exactly what a crashed machine does. */
  kill(): Promise<void>;
  /** SIGTERM and wait (SIGKILL after 10 s). */
  stop(): Promise<void>;
  /** true until the process exits. */
  alive(): boolean;
  /** Resolves once the output (stdout and stderr) contains `text`; rejects after timeoutMs or on exit. */
  waitForOutput(text: string, timeoutMs?: number): Promise<void>;
}

/**
 * The production worker entry (src/worker/main.ts) as a child process, one node process (tsx as a loader, not its
 * CLI wrapper) so a SIGKILL reaches the worker itself. Resolves once it polls its task queue, or at once with
 * `{ ready: false }` (a worker started while Temporal is down waits for it).
 */
export async function startWorkerProcess(
  env: Record<string, string>,
  readyTimeoutMs = 60_000,
  options: { ready?: boolean } = {},
): Promise<WorkerProcess> {
  return startServiceProcess(
    'src/worker/main.ts',
    options.ready === false ? undefined : 'worker: polling task queue',
    env,
    readyTimeoutMs,
  );
}

/** The production API entry (src/api/server.ts) likewise; resolves once it listens. */
export async function startApiProcess(env: Record<string, string>, readyTimeoutMs = 60_000): Promise<WorkerProcess> {
  return startServiceProcess('src/api/server.ts', 'api: listening on', env, readyTimeoutMs);
}

async function startServiceProcess(
  entry: string,
  readyText: string | undefined,
  env: Record<string, string>,
  readyTimeoutMs: number,
): Promise<WorkerProcess> {
  const name = entry.split('/')[0];
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, entry)], {
    cwd: ROOT,
    // No metrics page unless a test asks for one: test processes would contend for the default port.
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const listeners = new Set<() => void>();
  const onOutput = (chunk: Buffer) => {
    output.push(chunk.toString());
    for (const listener of listeners) listener();
  };
  child.stdout?.on('data', onOutput);
  child.stderr?.on('data', onOutput);
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stopWith = childStopper(child);
  const waitForOutput = (text: string, timeoutMs = readyTimeoutMs) =>
    new Promise<void>((resolve, reject) => {
      const done = (err?: Error) => {
        clearTimeout(timer);
        listeners.delete(check);
        child.off('exit', onExit);
        if (err) reject(err);
        else resolve();
      };
      const check = () => {
        if (output.join('').includes(text)) done();
      };
      const onExit = (code: number | null, signal: string | null) =>
        done(new Error(`${name} exited (${code ?? signal}) before printing "${text}":\n${output.join('')}`));
      const timer = setTimeout(
        () => done(new Error(`${name} did not print "${text}" within ${timeoutMs} ms:\n${output.join('')}`)),
        timeoutMs,
      );
      listeners.add(check);
      child.once('exit', onExit);
      if (!alive()) onExit(child.exitCode, child.signalCode);
      check();
    });
  if (readyText !== undefined) {
    await waitForOutput(readyText).catch(async (err) => {
      await stopWith('SIGKILL');
      throw err;
    });
  }
  return {
    process: child,
    output,
    kill: () => stopWith('SIGKILL'),
    stop: () => stopWith('SIGTERM'),
    alive,
    waitForOutput,
  };
}
