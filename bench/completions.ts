import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { InjectedSinks } from '@temporalio/worker';
import type { CompletionSinks } from './baseline/completion-interceptors';

/** The workflow interceptor module every bench bundle carries (bundleWorkflowCode's workflowInterceptorModules). */
export const COMPLETION_INTERCEPTORS = path.join(__dirname, 'baseline', 'completion-interceptors.ts');

/** The sinks of a worker whose completions nobody waits for (a worker in its own process). */
export const IGNORED_COMPLETIONS: InjectedSinks<CompletionSinks> = {
  benchCompletion: { finished: { fn: () => undefined } },
};

/**
 * Workflow completions as the worker running them reports them (bench/baseline/completion-interceptors.ts), by
 * workflow id. A phase learns that a delivery is done here instead of awaiting its result from the server, which
 * would cost the server and the bench a history read per delivery that no production caller makes;
 * `allClosed` then checks with the server, once per phase and outside the measured window, that every one of
 * them did close and none failed.
 */
export class Completions {
  private readonly finished = new Map<string, Finished>();
  private readonly waiting = new Map<string, { resolve: (lifeMs: number) => void; reject: (err: Error) => void }>();
  private readonly completedByType = new Map<string, number>();

  /** `now` is the clock the worker's report is read by (the tests give their own). */
  constructor(private readonly now: () => number = Date.now) {}

  readonly sinks: InjectedSinks<CompletionSinks> = {
    benchCompletion: {
      finished: {
        fn: (info, failed) => {
          if (!failed) this.completedByType.set(info.workflowType, this.completed(info.workflowType) + 1);
          this.finish(info.workflowId, { failed, lifeMs: this.now() - info.startTime.getTime() });
        },
      },
    },
  };

  /** How many workflows of this type the worker reported completed: what the server must show completed too. */
  completed(workflowType: string): number {
    return this.completedByType.get(workflowType) ?? 0;
  }

  /**
   * Resolves once the workflow's function has returned, rejects if it threw. It resolves with the workflow's
   * life: from its start, as the server stamped it, to the worker's report that its function returned.
   */
  waitFor(workflowId: string): Promise<number> {
    const finished = this.finished.get(workflowId);
    if (finished !== undefined) {
      this.finished.delete(workflowId);
      return finished.failed ? Promise.reject(failure(workflowId)) : Promise.resolve(finished.lifeMs);
    }
    return new Promise((resolve, reject) => this.waiting.set(workflowId, { resolve, reject }));
  }

  private finish(workflowId: string, finished: Finished): void {
    const waiter = this.waiting.get(workflowId);
    if (!waiter) {
      this.finished.set(workflowId, finished);
      return;
    }
    this.waiting.delete(workflowId);
    if (finished.failed) waiter.reject(failure(workflowId));
    else waiter.resolve(finished.lifeMs);
  }
}

interface Finished {
  failed: boolean;
  lifeMs: number;
}

function failure(workflowId: string): Error {
  return new Error(`bench: workflow ${workflowId} failed`);
}

/**
 * Waits until the workflows of `workflowType` on `taskQueue` that the worker reported completed all show as
 * completed in Temporal's visibility too (polled: the server records them up to about a second late), and throws,
 * naming the others, if they do not within `timeoutMs`: failed, terminated, timed out, or still running.
 */
export async function allClosed(
  client: Client,
  taskQueue: string,
  workflowType: string,
  completions: Completions,
  timeoutMs = 60_000,
): Promise<void> {
  const completed = completions.completed(workflowType);
  const of = `TaskQueue = '${taskQueue}' AND WorkflowType = '${workflowType}'`;
  const deadline = Date.now() + timeoutMs;
  while ((await client.workflow.count(`${of} AND ExecutionStatus = 'Completed'`)).count < completed) {
    if (Date.now() > deadline) {
      const named: string[] = [];
      for await (const workflow of client.workflow.list({ query: `${of} AND ExecutionStatus != 'Completed'` })) {
        named.push(`${workflow.workflowId} ${workflow.status.name}`);
      }
      throw new Error(
        `bench: of ${completed} ${workflowType} workflows on ${taskQueue} its worker completed, these had not completed in Temporal after ${timeoutMs} ms: ${named.slice(0, 10).join(', ') || 'none recorded'}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
