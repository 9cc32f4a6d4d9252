import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { testConfig } from '../../helpers/env';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';

describe('harness: a workflow and an activity through the real dev server and Postgres', () => {
  const config = testConfig();
  let tw: TestWorker;

  beforeAll(async () => {
    tw = await startTestWorker(config);
  });
  afterAll(async () => {
    await tw?.stop();
  });

  it('runs healthProbe end to end', async () => {
    const result = await tw.client.workflow.execute('healthProbe', {
      taskQueue: config.temporal.taskQueue,
      workflowId: `health-probe-${config.temporal.taskQueue}`,
      workflowExecutionTimeout: '30s',
    });
    expect(result.worker).toBe('ok');
    expect(result.postgres).toMatch(/^\d+\.\d+/);
  });
});
