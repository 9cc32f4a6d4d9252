import path from 'node:path';
import vm from 'node:vm';
import { Worker as ThreadWorker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { publishEvent } from '../../../domain/events';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { startTestWorker, workflowCreatorOf, type TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/**
 * The worker makes the SDK's deadlock timeout guard only the calls into the sandbox that run workflow code
 * (worker/worker.ts; the patch's option `deadlockTimeoutOnSdkCalls`): Node starts a watchdog thread for each call
 * with a timeout. Checked both ways: the bookkeeping calls of a real delivery go without a timeout while the
 * workflow-code calls keep it, and workflows that never yield (in their function, after a timer, in a condition)
 * are still cut off in the SDK's workflow thread (the default), their workflow task failed as timed out, while
 * the worker goes on serving others. (With WORKFLOW_THREAD=main the one looping after a timer crashes the test
 * process, with or without this setting: a Node assertion, why `main` is not the default.)
 */

interface SandboxCall {
  fn: string;
  timeout: number | undefined;
}

/** Records every call the SDK makes into a workflow sandbox (the call's name is in the context's arguments). */
function recordSandboxCalls(): { calls: SandboxCall[]; restore(): void } {
  const calls: SandboxCall[] = [];
  const original = vm.Script.prototype.runInContext;
  vm.Script.prototype.runInContext = function (this: vm.Script, context: vm.Context, options?: vm.RunningScriptOptions) {
    const args = (context as { __temporal_args?: [unknown, string, unknown[]] }).__temporal_args;
    if (args) calls.push({ fn: args[1], timeout: options?.timeout });
    return original.call(this, context, options);
  };
  return { calls, restore: () => (vm.Script.prototype.runInContext = original) };
}

describe('deadlock timeout on workflow code only: a delivery', () => {
  // Workflows in this thread (WORKFLOW_THREAD=main), where the recorder sees their calls; the creator is the same
  // class in the SDK's thread, which the next describe checks receives the setting.
  const h = useDeliveryHarness(testConfig({ WORKFLOW_THREAD: 'main' }));

  it('makes the bookkeeping calls without a watchdog and the workflow-code calls with one', async () => {
    const { tw, receiver } = h;
    expect(workflowCreatorOf(tw.worker).deadlockTimeoutOnSdkCalls).toBe(false);
    const recorder = recordSandboxCalls();
    try {
      receiver.script('/deadlock-delivery', { status: 200 });
      const accountId = await createAccount(tw.pool);
      await createEndpoint(tw.pool, { accountId, url: `${receiver.url}/deadlock-delivery` });
      const published = await publishEvent({ pool: tw.pool }, { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } });
      await waitFor(() => receiver.at('/deadlock-delivery').length === 1, { what: 'the attempt' });
      await tw.client.workflow.getHandle(published.workflowId as string).result();
      // The workflow is disposed of once it left the cache, after its completion.
      await waitFor(() => recorder.calls.some((c) => c.fn === 'dispose'), { what: 'the workflow disposed of' });
    } finally {
      recorder.restore();
    }
    const timeouts = (fn: string) => new Set(recorder.calls.filter((c) => c.fn === fn).map((c) => c.timeout));
    for (const fn of ['initRuntime', 'concludeActivation', 'dispose']) expect([...timeouts(fn)], fn).toEqual([undefined]);
    // The SDK's own deadlock timeout (isolateExecutionTimeout, 5 s).
    for (const fn of ['initialize', 'activate']) expect([...timeouts(fn)], fn).toEqual([5_000]);
  });
});

describe('deadlock timeout on workflow code only: workflows that never yield', () => {
  let tw: TestWorker;
  /** What the worker told its workflow thread when it started it. */
  const threadInits: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    const postMessage = ThreadWorker.prototype.postMessage;
    ThreadWorker.prototype.postMessage = function (this: ThreadWorker, ...args: Parameters<ThreadWorker['postMessage']>) {
      const input = (args[0] as { input?: { type?: string } } | undefined)?.input;
      if (input?.type === 'init') threadInits.push(input as Record<string, unknown>);
      return postMessage.apply(this, args);
    };
    try {
      // The product's defaults: workflows in the SDK's thread (WORKFLOW_THREAD=pool).
      tw = await startTestWorker(testConfig(), {
        workflowBundle: undefined,
        workflowsPath: path.join(__dirname, '..', '..', 'fixtures', 'workflows', 'deadlock.ts'),
        // The SDK's deadlock timeout, not in its published types; short, to keep the test quick.
        ...({ isolateExecutionTimeout: '300ms' } as object),
      });
    } finally {
      ThreadWorker.prototype.postMessage = postMessage;
    }
  });
  afterAll(async () => {
    await tw?.stop();
  });

  async function firstTaskFailure(workflowType: string): Promise<string> {
    const handle = await tw.client.workflow.start(workflowType, { taskQueue: tw.worker.options.taskQueue, workflowId: `${workflowType}-${Date.now()}` });
    try {
      let failure: string | undefined;
      await waitFor(
        async () => {
          const { events } = await handle.fetchHistory();
          const failed = events?.find((e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED);
          failure = failed?.workflowTaskFailedEventAttributes?.failure?.message ?? undefined;
          return failure !== undefined;
        },
        { what: `${workflowType}'s workflow task failed` },
      );
      return failure as string;
    } finally {
      await handle.terminate('test done');
    }
  }

  it.each(['spinAtStart', 'spinAfterTimer', 'spinInCondition'])('%s: its workflow task fails as timed out', async (workflowType) => {
    expect(threadInits.map((init) => init.deadlockTimeoutOnSdkCalls)).toEqual([false]);
    expect(await firstTaskFailure(workflowType)).toMatch(/Script execution timed out after 300ms/);
  });

  it('serves a workflow that yields afterwards', async () => {
    expect(await tw.client.workflow.execute('yieldsAfterTimer', { taskQueue: tw.worker.options.taskQueue, workflowId: `yields-${Date.now()}` })).toBe('done');
  });
});
