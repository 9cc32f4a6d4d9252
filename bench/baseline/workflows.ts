import { proxyActivities } from '@temporalio/workflow';

// The bare Temporal cost the engine is compared with: one workflow, one no-op activity, the same activity
// options as a delivery attempt (no Temporal retry).
const { noop } = proxyActivities<{ noop(id: string): Promise<void> }>({
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 1 },
});

export async function bareWorkflow(id: string): Promise<void> {
  await noop(id);
}
