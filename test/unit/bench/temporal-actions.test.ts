import { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { actionsInHistory, actionsPerDelivery, parseActionCounts } from '../../../bench/temporal-actions';

const T = temporal.api.enums.v1.EventType;

describe('bench/temporal-actions: the server counter', () => {
  const scrape = (start: number, activity: number) =>
    [
      '# HELP action action counter',
      '# TYPE action counter',
      `action{action_type="grpc_StartWorkflowExecution",namespace="default",service_name="frontend"} ${start}`,
      `action{action_type="command_ScheduleActivityTask",namespace="default",service_name="frontend"} ${activity}`,
      // The server's own workflows and other services' counts are not our deliveries' actions.
      'action{action_type="grpc_StartWorkflowExecution",namespace="temporal_system",service_name="frontend"} 7',
      'action{action_type="grpc_StartWorkflowExecution",namespace="default",service_name="history"} 99',
      'action_total_like_but_other{namespace="default"} 5',
    ].join('\n');

  it("reads the frontend's action counter by type, the server's own namespace left out", () => {
    expect(parseActionCounts(scrape(10, 4))).toEqual({
      grpc_StartWorkflowExecution: 10,
      command_ScheduleActivityTask: 4,
    });
  });

  it('divides what the window added by the deliveries completed in it', () => {
    const before = parseActionCounts(scrape(10, 4));
    const after = parseActionCounts(scrape(110, 104));
    expect(actionsPerDelivery(before, after, 100)).toEqual({
      total: 2,
      byType: { grpc_StartWorkflowExecution: 1, command_ScheduleActivityTask: 1 },
    });
    expect(actionsPerDelivery(before, before, 100)).toEqual({ total: 0, byType: {} });
    // A counter first seen after the window opened counts from zero.
    expect(actionsPerDelivery({}, { command_StartTimer: 50 }, 100).total).toBe(0.5);
  });
});

describe('bench/temporal-actions: a history', () => {
  const event = (eventType: number, extra: object = {}) => ({ eventType, ...extra });

  it('counts a start, each activity and one action for all the markers of one workflow task', () => {
    const events = [
      event(T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
      event(T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED),
      event(T.EVENT_TYPE_MARKER_RECORDED, { markerRecordedEventAttributes: { workflowTaskCompletedEventId: 4 } }),
      event(T.EVENT_TYPE_MARKER_RECORDED, { markerRecordedEventAttributes: { workflowTaskCompletedEventId: 4 } }),
      event(T.EVENT_TYPE_MARKER_RECORDED, { markerRecordedEventAttributes: { workflowTaskCompletedEventId: 9 } }),
      event(T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
      event(T.EVENT_TYPE_ACTIVITY_TASK_STARTED, { activityTaskStartedEventAttributes: { attempt: 1 } }),
      event(T.EVENT_TYPE_ACTIVITY_TASK_COMPLETED),
      event(T.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED),
    ];
    expect(actionsInHistory(events)).toBe(1 + 2 + 1);
  });

  it('counts retries from the attempt an activity started as, timers, signals and child workflows', () => {
    const events = [
      event(T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED),
      event(T.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED),
      event(T.EVENT_TYPE_ACTIVITY_TASK_STARTED, { activityTaskStartedEventAttributes: { attempt: 3 } }),
      event(T.EVENT_TYPE_TIMER_STARTED),
      event(T.EVENT_TYPE_TIMER_FIRED),
      event(T.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED),
      event(T.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED),
    ];
    expect(actionsInHistory(events)).toBe(1 + 1 + 2 + 1 + 1 + 2);
  });

  it('counts a workflow that only starts and completes as one action', () => {
    const events = [
      T.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      T.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED,
      T.EVENT_TYPE_WORKFLOW_TASK_STARTED,
      T.EVENT_TYPE_WORKFLOW_TASK_COMPLETED,
      T.EVENT_TYPE_WORKFLOW_EXECUTION_COMPLETED,
    ];
    expect(actionsInHistory(events.map((t) => event(t)))).toBe(1);
  });
});
