import { spawn, type ChildProcess } from 'node:child_process';
import { API_ENTRY, childStopper, ROOT, startWorkerProcess } from './wiring';
import { log, sleep } from './runtime';

/** One line of a process's life, for the timeline and for explaining what the receivers saw. */
export interface ProcessEvent {
  at: number;
  process: 'worker' | 'api' | 'temporal';
  /** Which one, when several of a kind run (worker-2, api-1). */
  instance?: string;
  kind: 'started' | 'killed' | 'stopped' | 'exited' | 'start_failed';
  /** true when the suite did it (kill, stop); false when the process did it on its own. */
  byChaos: boolean;
  pid?: number;
  detail?: string;
}

export interface Child {
  process: ChildProcess;
  output: string[];
  kill(): Promise<void>;
  stop(): Promise<void>;
}

const lastLines = (output: string[], n = 3) =>
  output
    .join('')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(' | ')
    .slice(0, 400);

/**
 * Keeps one process of a kind running, as systemd or Kubernetes would: a start that fails is retried every
 * 2 s, and a process that exits on its own is recorded and started again. Kills and stops by the suite are
 * recorded as such. Every wait is bounded by `deadline`.
 */
export class Supervisor {
  readonly events: ProcessEvent[] = [];
  private current: Child | undefined;
  private starting: Promise<void> | undefined;
  private stopping = false;
  private readonly expected = new WeakSet<Child>();

  /** `label` names this one among several of its kind (worker-2); by default the kind's name. */
  constructor(
    private readonly name: ProcessEvent['process'],
    private readonly launch: () => Promise<Child>,
    private readonly deadline: number,
    readonly label: string = name,
  ) {}

  private get instance(): Pick<ProcessEvent, 'instance'> {
    return this.label === this.name ? {} : { instance: this.label };
  }

  get pid(): number | undefined {
    return this.current?.process.pid;
  }

  private record(event: Omit<ProcessEvent, 'at' | 'process'>): void {
    this.events.push({ at: Date.now(), process: this.name, ...this.instance, ...event });
    const who = event.pid ? `${this.label} ${event.pid}` : this.label;
    log(`${who}: ${event.kind}${event.byChaos ? '' : ' (on its own)'}${event.detail ? `: ${event.detail}` : ''}`);
  }

  /** Resolves once a process runs (or the suite stops, or the deadline passes). */
  ensureRunning(): Promise<void> {
    if (this.current || this.stopping) return Promise.resolve();
    this.starting ??= this.startLoop().finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async startLoop(): Promise<void> {
    while (!this.stopping && Date.now() < this.deadline) {
      let child: Child;
      try {
        child = await this.launch();
      } catch (err) {
        this.record({
          kind: 'start_failed',
          byChaos: false,
          detail: (err as Error).message.split('\n').slice(0, 3).join(' | ').slice(0, 300),
        });
        await sleep(2_000);
        continue;
      }
      if (this.stopping) {
        await child.kill();
        return;
      }
      this.current = child;
      this.record({ kind: 'started', byChaos: true, pid: child.process.pid });
      child.process.once('exit', (code, signal) => {
        if (this.current === child) this.current = undefined;
        if (this.expected.has(child)) return;
        this.record({
          kind: 'exited',
          byChaos: false,
          pid: child.process.pid,
          detail: `${signal ?? `code ${code}`}: ${lastLines(child.output)}`,
        });
        if (!this.stopping) void sleep(2_000).then(() => this.ensureRunning());
      });
      return;
    }
  }

  /** SIGKILL the running process (no drain: a crashed machine). */
  async kill(): Promise<void> {
    const child = this.current;
    if (!child) {
      log(`${this.label}: nothing to kill`);
      return;
    }
    this.expected.add(child);
    this.current = undefined;
    const killedAt = Date.now();
    await child.kill();
    this.events.push({
      at: killedAt,
      process: this.name,
      ...this.instance,
      kind: 'killed',
      byChaos: true,
      pid: child.process.pid,
    });
    log(`${this.label} ${child.process.pid}: SIGKILL`);
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await this.starting;
    const child = this.current;
    if (!child) return;
    this.expected.add(child);
    this.current = undefined;
    await child.stop();
    this.record({ kind: 'stopped', byChaos: true, pid: child.process.pid });
  }
}

/**
 * How long a start may take before it counts as failed. A worker bundles its workflows at start (seconds of CPU),
 * and several processes starting at once on 2 cores shared with other work took over a minute each.
 */
export const START_TIMEOUT_MS = 180_000;

/**
 * How a service process is run: from the sources (node with tsx as a loader; a worker bundles its workflows at
 * every start), or from the compiled build as production runs it (`node dist/...`, the prebuilt workflow bundle).
 */
export type ServiceEntries = { kind: 'source' } | { kind: 'built'; worker: string; api: string };

/** Spawns `node <args>` in the repository, its output kept (the last 200 chunks) for the report. */
function spawnService(args: string[], env: Record<string, string>): { child: ChildProcess; output: string[] } {
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LOG_LEVEL: 'warn', METRICS_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const keep = (chunk: Buffer) => {
    output.push(chunk.toString());
    if (output.length > 200) output.splice(0, output.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output };
}

/** Polls `ready` until it holds, the child exits, or START_TIMEOUT_MS passes (then SIGKILLs it). */
async function readyChild(
  name: string,
  spawned: { child: ChildProcess; output: string[] },
  ready: () => Promise<boolean>,
): Promise<Child> {
  const { child, output } = spawned;
  const alive = () => child.exitCode === null && child.signalCode === null;
  const stopWith = childStopper(child);
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (!alive()) throw new Error(`${name} exited before it was ready: ${lastLines(output)}`);
    if (await ready()) break;
    if (Date.now() > deadline) {
      await stopWith('SIGKILL');
      throw new Error(`${name} not ready after ${START_TIMEOUT_MS / 1000} s: ${lastLines(output)}`);
    }
    await sleep(250);
  }
  return { process: child, output, kill: () => stopWith('SIGKILL'), stop: () => stopWith('SIGTERM') };
}

/** What src/worker/main.ts prints once it polls its task queue. */
const WORKER_READY_TEXT = 'worker: polling task queue';

export function workerLauncher(
  env: Record<string, string>,
  entries: ServiceEntries = { kind: 'source' },
): () => Promise<Child> {
  if (entries.kind === 'source') return () => startWorkerProcess(env, START_TIMEOUT_MS);
  return async () => {
    const spawned = spawnService([entries.worker], env);
    return readyChild('worker', spawned, async () => spawned.output.join('').includes(WORKER_READY_TEXT));
  };
}

/** The API entry point as one node process (so signals reach it), ready once /healthz answers. */
export function apiLauncher(
  env: Record<string, string>,
  port: number,
  entries: ServiceEntries = { kind: 'source' },
): () => Promise<Child> {
  return async () => {
    const spawned = spawnService(entries.kind === 'built' ? [entries.api] : ['--import', 'tsx', API_ENTRY], env);
    return readyChild('api', spawned, () =>
      fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) }).then(
        (res) => res.ok,
        () => false,
      ),
    );
  };
}
