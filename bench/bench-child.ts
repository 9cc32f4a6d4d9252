import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';

/**
 * A part of the bench in a process of its own (bench/*-child.ts), run through tsx with an IPC channel, so what
 * it costs (memory, pauses) is its own: the worker of the backlog scenario, the retention job of the
 * large-tables one. `orExit` fails a wait on the child as soon as the child exits.
 */
export interface BenchChild {
  child: ChildProcess;
  exited: Promise<number | null>;
  orExit: <T>(waiting: Promise<T>, failure: (code: number | null) => string) => Promise<T>;
}

/** Forks bench/<file> with this process's environment and `env` on top. */
export function forkBenchChild(file: string, env: Record<string, string>): BenchChild {
  const child = fork(path.join(__dirname, file), [], {
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, ...env },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    orExit: (waiting, failure) =>
      Promise.race([waiting, exited.then((code) => Promise.reject(new Error(failure(code))))]),
  };
}
