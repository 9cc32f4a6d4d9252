import { asyncLocalStorage, Context, type Info } from '@temporalio/activity';
import { noopMetricMeter } from '@temporalio/common';

const quiet = { trace() {}, debug() {}, info() {}, warn() {}, error() {}, log() {} };

/**
 * Runs activity code outside a worker, as a worker would run one attempt of it: Context.current() answers with
 * `info` (the task queue, say). For calling an activity twice exactly as a retry would, without a workflow.
 */
export function inActivityContext<T>(info: Partial<Info>, work: () => Promise<T>): Promise<T> {
  const context = new Context(
    { attempt: 1, taskQueue: 'test', ...info } as Info,
    new Promise<never>(() => undefined),
    new AbortController().signal,
    () => undefined,
    undefined,
    quiet,
    noopMetricMeter,
    {},
  );
  return asyncLocalStorage.run(context, work);
}
