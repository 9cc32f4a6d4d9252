import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import {
  FAILURE,
  signalOf,
  WORKFLOW_ID,
  type FailingNoticeResult,
  type NotifySupervisorInput,
  type RecordAbandonmentInput,
  type RecordAbandonmentResult,
  type SupervisorInput,
  type SupervisorMessage,
} from '../core/delivery-contract';
import type { Pool } from '../domain/database';
import { emailFailingNotice, recordAbandonment } from '../domain/endpoint-health';
import { EmailNotSentError } from '../domain/notifications';
import type { Config } from '../infra/config';
import type { Mailer } from '../infra/mailer';
import { countAbandoned } from '../infra/metrics';
import { signalWithStartOnce } from '../infra/temporal';

export interface SupervisorDeps {
  config: Config;
  pool: Pool;
  /** Needed by notifySupervisor only: a workflow cannot signal-with-start, an activity can. */
  temporal?: Client;
  /** Built from SMTP_URL; absent: notifications are stored, not emailed. */
  mailer?: Mailer;
}

/** Typed, so the supervisor can tell "stored, not emailed" (give up after the retries) from "not stored". */
async function typedEmailFailure<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (err instanceof EmailNotSentError)
      throw ApplicationFailure.retryable(err.message, FAILURE.notificationEmailFailed);
    throw err;
  }
}

export function createSupervisorActivities(deps: SupervisorDeps) {
  return {
    /**
     * Signal-with-start of the endpoint's supervisor, on the task queue of the worker running this. The request
     * id is the message's own (its kind and event), so a retry of this activity is not a second signal.
     */
    async notifySupervisor(input: NotifySupervisorInput): Promise<void> {
      if (!deps.temporal) throw new Error('notifySupervisor needs a Temporal client in the activity deps');
      // The threshold rides with each abandonment (AbandonedPayload.failingThreshold says why).
      const message: SupervisorMessage =
        input.signal.kind === 'abandoned'
          ? { ...input.signal, failingThreshold: input.failingThreshold }
          : input.signal;
      const { signal, payload } = signalOf(message);
      const start: SupervisorInput = { endpointId: input.endpointId, failingThreshold: input.failingThreshold };
      await signalWithStartOnce(deps.temporal, {
        requestId: `${message.kind}:${input.endpointId}:${message.eventId}`,
        workflowType: 'endpointSupervisor',
        workflowId: WORKFLOW_ID.supervisor(input.endpointId),
        taskQueue: Context.current().info.taskQueue,
        args: [start],
        signalName: signal.name,
        signalArgs: [payload],
        staticSummary: `supervisor of ${input.endpointId}${input.url ? ` (${input.url})` : ''}`,
      });
      if (message.kind === 'abandoned') countAbandoned();
    },

    async recordAbandonment(input: RecordAbandonmentInput): Promise<RecordAbandonmentResult> {
      const result = await recordAbandonment(deps, input);
      if (result.notificationId)
        log.info('endpoint marked failing', { endpointId: input.endpointId, streak: result.streak });
      return result;
    },

    /** A failed email throws, so Temporal retries it; the one-time claim keeps a retry from sending twice. */
    async emailFailingNotice(notificationId: string): Promise<FailingNoticeResult> {
      const result = await typedEmailFailure(emailFailingNotice(deps, notificationId));
      if (result.emailed) log.info('endpoint failing: merchant emailed', { notificationId });
      return result;
    },
  };
}
