import { ScheduleAlreadyRunning, ScheduleOverlapPolicy, type Client } from '@temporalio/client';
import { RETENTION_SCHEDULE_INTERVAL } from '../core/delivery-policy';
import { formatDuration } from '../core/durations';
import type { Config } from '../infra/config';

/** One retention schedule per task queue: its workers run the purge, whichever of them created it. */
export const retentionScheduleId = (taskQueue: string) => `event-retention:${taskQueue}`;

/**
 * Creates the Schedule that runs purgeExpiredEvents every RETENTION_SCHEDULE_INTERVAL, unless it exists: every
 * worker calls this at start, so the first one creates it and the others find it. Overlapping runs are skipped.
 */
export async function ensureRetentionSchedule(
  client: Client,
  config: Config,
  log: (line: string) => void,
): Promise<void> {
  const taskQueue = config.temporal.taskQueue;
  try {
    await createSchedule(client, config, taskQueue);
    log(`retention schedule ${retentionScheduleId(taskQueue)} created (every ${RETENTION_SCHEDULE_INTERVAL})`);
  } catch (err) {
    if (err instanceof ScheduleAlreadyRunning) return;
    // Retention is housekeeping: a worker that cannot create the schedule (permissions on a cloud namespace) still
    // delivers; it says so, and the next worker to start tries again.
    log(
      `could not create the retention schedule (${(err as Error).message}); old events are not deleted until one exists`,
    );
  }
}

async function createSchedule(client: Client, config: Config, taskQueue: string): Promise<void> {
  const retention = formatDuration(config.retention.eventRetentionMs);
  await client.schedule.create({
    scheduleId: retentionScheduleId(taskQueue),
    spec: { intervals: [{ every: RETENTION_SCHEDULE_INTERVAL }] },
    action: {
      type: 'startWorkflow',
      workflowType: 'purgeExpiredEvents',
      taskQueue,
      args: [],
      workflowId: `event-retention:${taskQueue}`,
    },
    policies: { overlap: ScheduleOverlapPolicy.SKIP, catchupWindow: RETENTION_SCHEDULE_INTERVAL },
    // The cutoff itself is read by each run from its worker's EVENT_RETENTION, so changing it needs no new schedule.
    state: {
      note: `Deletes events, attempts, deliveries and notifications older than EVENT_RETENTION (${retention} at creation), in batches.`,
    },
  });
}
