import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { forkBenchChild } from './bench-child';
import { engineEnv, engineTaskQueue, within, type BenchContext, type EngineVariant } from './engine';

/** What the parent asks the worker process (bench/worker-child.ts) over IPC. */
type Request = { type: 'heap' } | { type: 'snapshot'; prefix: string } | { type: 'stop' };
export type ChildRequest = Request & { id: number };

export interface WorkerHeap {
  /** The main thread's V8 heap: in use, and its size. */
  mainHeapUsedMb: number;
  mainHeapTotalMb: number;
  externalMb: number;
  /** The SDK's workflow thread (its reusable V8 context and every cached workflow) after a full GC there, and its size. */
  workflowThreadHeapUsedMb: number;
  workflowThreadHeapTotalMb: number;
  maxCachedWorkflows: number;
  /** Workflows in the worker's sticky cache when read. */
  numCachedWorkflows: number;
}

export type ChildReply =
  | { type: 'ready' }
  | ({ type: 'heap'; id: number } & WorkerHeap)
  | { type: 'snapshot'; id: number; files: string[] }
  | { type: 'stopping'; id: number }
  | { type: 'error'; id: number; message: string };

export interface WorkerProcess {
  pid: number;
  /** The library preloaded into it (BENCH_WORKER_PRELOAD), when one was. */
  preload?: string;
  /** The process's resident set (VmRSS in /proc/<pid>/status), MB. */
  rssMb(): number;
  heap(): Promise<WorkerHeap>;
  /** Heap snapshots of the main thread and of the workflow thread, written as `<prefix>-*.heapsnapshot`. */
  snapshot(prefix: string): Promise<string[]>;
  stop(): Promise<void>;
}

/** A library to preload into worker processes alone (bench/bench-config.ts: BENCH_WORKER_PRELOAD). */
const WORKER_PRELOAD = process.env.BENCH_WORKER_PRELOAD || undefined;

export function rssMbOf(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  if (!kb) throw new Error(`no VmRSS for process ${pid}`);
  return Math.round(Number(kb) / 1024);
}

/**
 * A worker of `variant` (its environment and eager start) in a process of its own, on the run's server and database, with the run's workflow bundle. Resolves once it polls.
 */
export async function startWorkerProcess(ctx: BenchContext, variant: EngineVariant): Promise<WorkerProcess> {
  const bundle = path.join(os.tmpdir(), `pw-bench-${ctx.runId}-workflows.js`);
  writeFileSync(bundle, ctx.engineBundle.code);
  const { child, exited, orExit } = forkBenchChild('worker-child.ts', {
    BENCH_WORKER_ENV: JSON.stringify(engineEnv(ctx, engineTaskQueue(ctx, variant), variant.env)),
    BENCH_WORKER_BUNDLE: bundle,
    // Another allocator for the worker alone (BENCH_WORKER_PRELOAD), e.g. jemalloc: the server and the bench keep glibc's.
    ...(WORKER_PRELOAD ? { LD_PRELOAD: WORKER_PRELOAD } : {}),
  });
  const waiters = new Map<number, (reply: ChildReply) => void>();
  let ready!: () => void;
  const readyNow = new Promise<void>((resolve) => (ready = resolve));
  child.on('message', (reply: ChildReply) => {
    if (reply.type === 'ready') return ready();
    waiters.get(reply.id)?.(reply);
    waiters.delete(reply.id);
  });
  let nextId = 1;
  const ask = async (request: Request, ms: number): Promise<ChildReply> => {
    const id = nextId++;
    const answered = new Promise<ChildReply>((resolve) => waiters.set(id, resolve));
    child.send({ ...request, id });
    const reply = await within(
      orExit(answered, (code) => `worker process exited (${code})`),
      ms,
      `worker process: ${request.type}`,
    );
    if (reply.type === 'error') throw new Error(`worker process: ${reply.message}`);
    return reply;
  };
  await within(
    orExit(readyNow, (code) => `worker process exited (${code}) before it polled`),
    120_000,
    'worker process start',
  );
  const pid = child.pid as number;
  return {
    pid,
    ...(WORKER_PRELOAD ? { preload: WORKER_PRELOAD } : {}),
    rssMb: () => rssMbOf(pid),
    async heap() {
      const {
        type: _type,
        id: _id,
        ...heap
      } = (await ask({ type: 'heap' }, 120_000)) as Extract<ChildReply, { type: 'heap' }>;
      return heap;
    },
    async snapshot(prefix) {
      return ((await ask({ type: 'snapshot', prefix }, 600_000)) as Extract<ChildReply, { type: 'snapshot' }>).files;
    },
    async stop() {
      if (child.exitCode === null) {
        await ask({ type: 'stop' }, 30_000).catch(() => undefined);
        const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
        await exited;
        clearTimeout(timer);
      }
      rmSync(bundle, { force: true });
    },
  };
}
