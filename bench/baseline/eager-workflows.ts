import { proxyLocalActivities } from '@temporalio/workflow';

// Temporal's own floor for publish-to-first-attempt (bench phase bare-eager-idle): a workflow started eagerly
// whose first workflow task makes the same signed POST as a delivery attempt, as a local activity. It has no
// database, no outbox and no record: what a workflow per event costs before its first attempt, and no less.
// Its own bundle, so the bare phases' workflow code stays what earlier runs measured.
const { post } = proxyLocalActivities<{ post(eventId: string): Promise<void> }>({
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 1 },
});

export async function eagerPostWorkflow(eventId: string): Promise<void> {
  await post(eventId);
}
