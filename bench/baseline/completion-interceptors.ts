import { proxySinks, type Sinks, type WorkflowInterceptorsFactory } from '@temporalio/workflow';

/**
 * Bundled into every workflow bundle the bench runs (bench/completions.ts): when a workflow's function returns or
 * throws, the worker hears it through a sink, so the bench knows a delivery is done without asking the server for
 * each result (a history read per workflow that production never makes).
 */
export interface CompletionSinks extends Sinks {
  benchCompletion: { finished(failed: boolean): void };
}

const { benchCompletion } = proxySinks<CompletionSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      execute: (input, next) =>
        next(input).then(
          (result) => {
            benchCompletion.finished(false);
            return result;
          },
          (err: unknown) => {
            benchCompletion.finished(true);
            throw err;
          },
        ),
    },
  ],
});
