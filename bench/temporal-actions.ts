/**
 * Temporal Cloud bills by the action: a workflow started, an activity scheduled or retried, the local activities
 * of one workflow task (one action together), a timer started, a signal, a query, a heartbeat, a search attribute
 * upsert, a child workflow (two). Two ways to count them for a delivery:
 *   - the server's own `action` counter (Prometheus, service_name "frontend"), read before and after a measured
 *     window: what the server counted, queries and heartbeats included; the figure the bench reports;
 *   - the billable events of a workflow's history (`actionsInHistory`): a cross-check for one delivery's shape,
 *     blind to queries and heartbeats, which leave no event.
 */
import { temporal } from '@temporalio/proto';

const EventType = temporal.api.enums.v1.EventType;

/** The `action` counter of the server's frontend, by action type, the server's own namespace left out. */
export type ActionCounts = Record<string, number>;

const LINE = /^action\{([^}]*)\}\s+([0-9.eE+-]+)$/;

export function parseActionCounts(metricsText: string): ActionCounts {
  const counts: ActionCounts = {};
  for (const line of metricsText.split('\n')) {
    const match = LINE.exec(line.trim());
    if (!match) continue;
    const labels = Object.fromEntries([...(match[1] as string).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    // The frontend counts each action once; other services may count their part of the same one again.
    if (labels.service_name !== undefined && labels.service_name !== 'frontend') continue;
    if ((labels.namespace ?? labels.exported_namespace) === 'temporal_system') continue;
    const type = labels.action_type ?? labels.operation ?? 'unknown';
    counts[type] = (counts[type] ?? 0) + Number(match[2]);
  }
  return counts;
}

export interface ActionsPerDelivery {
  total: number;
  byType: Record<string, number>;
}

/** The actions counted between two readings, per delivery, to a hundredth. */
export function actionsPerDelivery(before: ActionCounts, after: ActionCounts, deliveries: number): ActionsPerDelivery {
  const per = (n: number) => Math.round((n / Math.max(1, deliveries)) * 100) / 100;
  const byType: Record<string, number> = {};
  let total = 0;
  for (const [type, value] of Object.entries(after)) {
    const delta = value - (before[type] ?? 0);
    if (delta <= 0) continue;
    total += delta;
    byType[type] = per(delta);
  }
  return { total: per(total), byType };
}

/** The fields of a history event this count reads (the SDK's decoded history). */
export interface HistoryEventLike {
  eventType?: number | null;
  activityTaskStartedEventAttributes?: { attempt?: number | null } | null;
  markerRecordedEventAttributes?: { workflowTaskCompletedEventId?: unknown } | null;
}

/**
 * The billable actions a history shows: the start, each activity scheduled and each retry of it, each timer,
 * each signal received, each search attribute upsert, each child workflow (two), each update, and one for all
 * the local activity markers one workflow task recorded. Queries and heartbeats leave no event and are not counted.
 */
export function actionsInHistory(events: HistoryEventLike[]): number {
  let actions = 0;
  const markerTasks = new Set<string>();
  for (const event of events) {
    switch (event.eventType) {
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED:
      case EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
      case EventType.EVENT_TYPE_TIMER_STARTED:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED:
      case EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES:
      case EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED:
        actions += 1;
        break;
      case EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED:
        actions += 2;
        break;
      case EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED:
        // Retries leave no event of their own: the started event carries the attempt it ran as.
        actions += Math.max(0, (event.activityTaskStartedEventAttributes?.attempt ?? 1) - 1);
        break;
      case EventType.EVENT_TYPE_MARKER_RECORDED:
        markerTasks.add(event.markerRecordedEventAttributes?.workflowTaskCompletedEventId?.toString() ?? '');
        break;
    }
  }
  return actions + markerTasks.size;
}
