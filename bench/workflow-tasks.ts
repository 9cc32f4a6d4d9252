import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { p50p99 } from './stats';

export interface WorkflowTaskDurations {
  /** Workflow tasks read, in the histories sampled. */
  tasks: number;
  p99Ms: number;
  maxMs: number;
  /** Tasks that took over a second. */
  overOneSecond: number;
}

type Timestamp = { seconds?: unknown; nanos?: number | null } | null | undefined;

const ms = (t: Timestamp) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;

/**
 * How long the worker held each workflow task of these workflows: from its WorkflowTaskStarted to its
 * WorkflowTaskCompleted (or failed, or timed out), on the server's clock. A task the worker queues behind its CPU
 * shows here; one waiting for a free slot does not (it is not started until a slot takes it). The latest run of
 * about `sample` of the ids, spread over the list, is read.
 */
export async function workflowTaskDurations(
  client: Client,
  workflowIds: string[],
  sample = 200,
): Promise<WorkflowTaskDurations> {
  const step = Math.max(1, Math.floor(workflowIds.length / sample));
  const durations: number[] = [];
  for (let i = 0; i < workflowIds.length; i += step) {
    // A delivery whose attempt 1 has arrived may not be started yet (the outbox starts it once that is on record).
    const history = await client.workflow
      .getHandle(workflowIds[i] as string)
      .fetchHistory()
      .catch((err: unknown) => {
        if (err instanceof WorkflowNotFoundError || (err as { code?: number }).code === 5) return undefined;
        throw err;
      });
    if (!history) continue;
    const started = new Map<string, number>();
    for (const event of history.events ?? []) {
      if (event.workflowTaskStartedEventAttributes) started.set(String(event.eventId), ms(event.eventTime));
      const ended =
        event.workflowTaskCompletedEventAttributes ??
        event.workflowTaskFailedEventAttributes ??
        event.workflowTaskTimedOutEventAttributes;
      const from = ended ? started.get(String(ended.startedEventId)) : undefined;
      if (from !== undefined) durations.push(ms(event.eventTime) - from);
    }
  }
  const { p99Ms } = p50p99(durations);
  return {
    tasks: durations.length,
    p99Ms,
    maxMs: Math.round(Math.max(0, ...durations)),
    overOneSecond: durations.filter((d) => d > 1_000).length,
  };
}
