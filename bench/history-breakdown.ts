import type { Client } from '@temporalio/client';
import { percentile } from './stats';

type HistoryEvent = { eventType?: number | null; eventTime?: { seconds?: unknown; nanos?: number | null } | null };

// temporal.api.enums.v1.EventType values of the steps we time.
const WORKFLOW_STARTED = 1;
const WORKFLOW_COMPLETED = 2;
const WORKFLOW_TASK_STARTED = 6;
const WORKFLOW_TASK_COMPLETED = 7;
const ACTIVITY_SCHEDULED = 10;
const ACTIVITY_STARTED = 11;
const ACTIVITY_COMPLETED = 12;

function ms(event: HistoryEvent | undefined): number {
  const t = event?.eventTime;
  return t ? Number(t.seconds ?? 0) * 1000 + (t.nanos ?? 0) / 1e6 : NaN;
}

const STEPS = {
  'start -> first workflow task started': [WORKFLOW_STARTED, WORKFLOW_TASK_STARTED],
  // With a local attempt the attempt runs inside this first task, and the next step is the whole rest.
  'first workflow task (a local attempt runs inside it)': [WORKFLOW_TASK_STARTED, WORKFLOW_TASK_COMPLETED],
  'first workflow task completed -> workflow completed': [WORKFLOW_TASK_COMPLETED, WORKFLOW_COMPLETED],
  'activity scheduled -> started': [ACTIVITY_SCHEDULED, ACTIVITY_STARTED],
  'activity running (check, sign, POST, record)': [ACTIVITY_STARTED, ACTIVITY_COMPLETED],
  'activity completed -> workflow completed': [ACTIVITY_COMPLETED, WORKFLOW_COMPLETED],
} as const;

/** Median server-side time of each step over the given workflows, from their histories' timestamps. */
export async function historyBreakdown(client: Client, workflowIds: string[]): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(STEPS).map((k) => [k, []]));
  for (const id of workflowIds) {
    const events = ((await client.workflow.getHandle(id).fetchHistory()).events ?? []) as HistoryEvent[];
    const first = (type: number) => events.find((e) => e.eventType === type);
    for (const [step, [from, to]] of Object.entries(STEPS)) {
      const value = ms(first(to)) - ms(first(from));
      if (Number.isFinite(value)) samples[step]?.push(value);
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([step, values]) => [
      step,
      Math.round(
        percentile(
          [...values].sort((a, b) => a - b),
          50,
        ) * 10,
      ) / 10,
    ]),
  );
}
