import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import {
  FAILURE,
  signalOf,
  WORKFLOW_ID,
  type EndpointSupervisorWorkflow,
  type MarkFailingInput,
  type MarkFailingResult,
  type NotifySupervisorInput,
  type SupervisorMessage,
  type SupervisorPayload,
} from '../core/delivery-contract';
import type { Pool } from '../domain/database';
import { markEndpointFailing, recordAbandonedStreak } from '../domain/endpoint-health';
import { EmailNotSentError } from '../domain/notifications';
import type { Config } from '../infra/config';
import type { Mailer } from '../infra/mailer';

export interface SupervisorDeps {
  config: Config;
  pool: Pool;
  /** Needed by notifySupervisor only: a workflow cannot signal-with-start, an activity can. */
  temporal?: Client;
  /** Built from SMTP_URL; absent: notifications are stored, not emailed. */
  mailer?: Mailer;
}

export function createSupervisorActivities(deps: SupervisorDeps) {
  return {
    /** Signal-with-start of the endpoint's supervisor, on the task queue of the worker running this. */
    async notifySupervisor(input: NotifySupervisorInput): Promise<void> {
      if (!deps.temporal) throw new Error('notifySupervisor needs a Temporal client in the activity deps');
      // The threshold rides with each abandonment: a running supervisor's start arguments are those of the
      // event that started it, possibly under an older configuration.
      const message: SupervisorMessage =
        input.signal.kind === 'abandoned' ? { ...input.signal, failingThreshold: input.failingThreshold } : input.signal;
      const { signal, payload } = signalOf(message);
      await deps.temporal.workflow.signalWithStart<EndpointSupervisorWorkflow, [SupervisorPayload]>('endpointSupervisor', {
        workflowId: WORKFLOW_ID.supervisor(input.endpointId),
        taskQueue: Context.current().info.taskQueue,
        args: [{ endpointId: input.endpointId, failingThreshold: input.failingThreshold }],
        staticSummary: `supervisor of ${input.endpointId}${input.url ? ` (${input.url})` : ''}`,
        signal,
        signalArgs: [payload],
      });
    },

    async recordAbandonedStreak(endpointId: string, streak: number): Promise<void> {
      await recordAbandonedStreak(deps.pool, endpointId, streak);
    },

    /** A failed email throws, so Temporal retries it (domain/endpoint-health.ts keeps a retry from sending twice). */
    async markEndpointFailing(input: MarkFailingInput): Promise<MarkFailingResult> {
      try {
        const result = await markEndpointFailing(deps, input);
        if (result.emailed) log.info('endpoint failing: merchant emailed', { endpointId: input.endpointId });
        return result;
      } catch (err) {
        // Typed, so the supervisor can tell "stored, not emailed" (give up after the retries) from "not stored".
        if (err instanceof EmailNotSentError) throw ApplicationFailure.retryable(err.message, FAILURE.notificationEmailFailed);
        throw err;
      }
    },
  };
}
