import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { temporal } from '@temporalio/proto';
import { testConfig } from '../../helpers/env';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/**
 * The product's worker keeps the SDK's deadlock timeout (5 s, src/worker/worker.ts): a workflow that never yields has
 * its workflow task failed as timed out, in the SDK's workflow thread, and the worker goes on serving others.
 */
describe('deadlock timeout: a workflow that never yields', () => {
  let tw: TestWorker;
  beforeAll(async () => {
    tw = await startTestWorker(testConfig(), {
      workflowBundle: undefined,
      workflowsPath: path.join(__dirname, '..', '..', 'fixtures', 'workflows', 'deadlock.ts'),
    });
  });
  afterAll(async () => {
    await tw?.stop();
  });

  it('has its workflow task failed as timed out', async () => {
    const handle = await tw.client.workflow.start('spinAfterTimer', {
      taskQueue: tw.worker.options.taskQueue,
      workflowId: `spin-${Date.now()}`,
    });
    try {
      const failure = await waitFor(
        async () => {
          const { events } = await handle.fetchHistory();
          const failed = events?.find(
            (e) => e.eventType === temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED,
          );
          return failed?.workflowTaskFailedEventAttributes?.failure?.message ?? undefined;
        },
        { what: "spinAfterTimer's workflow task failed" },
      );
      expect(failure).toMatch(/Script execution timed out after 5000ms/);
    } finally {
      await handle.terminate('test done');
    }
  });

  it('serves a workflow that yields afterwards', async () => {
    expect(
      await tw.client.workflow.execute('yieldsAfterTimer', {
        taskQueue: tw.worker.options.taskQueue,
        workflowId: `yields-${Date.now()}`,
      }),
    ).toBe('done');
  });
});
