import { proxyActivities } from '@temporalio/workflow';

// The bare Temporal cost the engine is compared with: a workflow whose activities make the same signed POST to the
// same receiver as a delivery attempt, with the same activity options (no Temporal retry).
const { post } = proxyActivities<{ post(id: string): Promise<void> }>({
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 1 },
});

/** One delivery: one activity. */
export async function bareWorkflow(id: string): Promise<void> {
  await post(id);
}

/** One event to `endpoints` endpoints: one activity each, side by side, as a workflow per event would. */
export async function bareFanOutWorkflow(id: string, endpoints: number): Promise<void> {
  await Promise.all(Array.from({ length: endpoints }, (_, n) => post(`${id}/${n}`)));
}

/** A workflow that does nothing: the least a workflow per event costs on the server (the `empty-load` phase). */
export async function emptyWorkflow(): Promise<void> {}
