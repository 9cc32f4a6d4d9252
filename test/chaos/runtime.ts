import { readdirSync, readFileSync } from 'node:fs';

/** The run's clock, its log and its cleanup stack: small things every module of the suite shares. */

const startedAt = Date.now();

/** Seconds since the run started, as printed everywhere ("+73.4s"). */
export function at(ms: number = Date.now()): string {
  return `+${((ms - startedAt) / 1000).toFixed(1)}s`;
}

export function log(message: string): void {
  process.stdout.write(`[chaos ${at().padStart(7)}] ${message}\n`);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Rejects when `work` has not settled in time; the work itself is left to finish on its own. */
export async function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no result within ${Math.round(ms / 1000)} s`)), ms);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Everything the run starts registers how to stop it; cleanup runs them newest first, each bounded, whether
 * the run ends, fails or is interrupted (SIGINT/SIGTERM).
 */
export class Cleanup {
  private readonly steps: Array<{ name: string; run: () => Promise<void> }> = [];
  private readonly first: Array<() => void> = [];
  private running: Promise<void> | undefined;

  add(name: string, run: () => Promise<void>): void {
    this.steps.push({ name, run });
  }

  /** Called at once when cleanup starts, before any step: tells faults still under way to start nothing more. */
  onStart(hook: () => void): void {
    this.first.push(hook);
  }

  get started(): boolean {
    return this.running !== undefined;
  }

  run(): Promise<void> {
    for (const hook of this.first.splice(0)) hook();
    this.running ??= (async () => {
      for (const step of this.steps.splice(0).reverse()) {
        try {
          await within(step.run(), 20_000, `stopping ${step.name}`);
        } catch (err) {
          log(`cleanup: ${(err as Error).message}`);
        }
      }
    })();
    return this.running;
  }
}

/**
 * Last resort at exit, after cleanup: SIGKILL any child process of ours still alive (a worker that was still
 * starting when the run was interrupted, say). Only direct children of this process, by pid (Linux /proc).
 */
export function killStrayChildren(): number[] {
  const killed: number[] = [];
  let entries: string[];
  try {
    entries = readdirSync('/proc').filter((name) => /^\d+$/.test(name));
  } catch {
    return killed;
  }
  for (const name of entries) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      // tsx's esbuild service is a child too; it ends with us and is no process of the scenario.
      const esbuild = readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('esbuild');
      if (ppid === process.pid && !esbuild) {
        process.kill(Number(name), 'SIGKILL');
        killed.push(Number(name));
      }
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return killed;
}
