import { Context, log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Client } from '@temporalio/client';
import type { Config } from '../infra/config';
import type { Mailer } from '../infra/mailer';
import { newId } from '../core/ids';
import { markEmailSent, markFailingWithNotification, setAbandonedStreak, type FailingEndpoint } from '../db/notifications';
import type { Pool } from '../db/pool';
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

export interface SupervisorDeps {
  config: Config;
  pool: Pool;
  /** Needed by notifySupervisor only: a workflow cannot signal-with-start, an activity can. */
  temporal?: Client;
  /** Built from SMTP_URL; absent: notifications are stored, not emailed. */
  mailer?: Mailer;
}

function composeFailingNotice(endpoint: FailingEndpoint, input: MarkFailingInput, config: Config) {
  const attempts = config.delivery.retryDelaysMs.length + 1;
  const subject = `Webhook endpoint failing: ${endpoint.url}`;
  const body = [
    `Your webhook endpoint ${endpoint.url} (${input.endpointId}) is marked failing:`,
    `${input.streak} deliveries in a row were abandoned after ${attempts} attempts each, with no successful delivery in between.`,
    '',
    'We keep sending new events to it. To fix it:',
    `- make sure the URL answers a 2xx status within ${Math.round(config.delivery.timeoutMs / 1000)} seconds, over https with a valid certificate, without redirects;`,
    `- look at the status codes and responses of recent attempts: GET /v1/webhooks/${input.endpointId}/deliveries;`,
    '- the mark clears on the next successful delivery.',
  ].join('\n');
  return { subject, body };
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
      await setAbandonedStreak(deps.pool, endpointId, streak);
    },

    /**
     * Marks the endpoint failing and tells the merchant: a notification row (once per episode, even when this
     * activity is retried) and, with SMTP_URL set, an email. A failed send throws, so Temporal retries it;
     * email_sent_at keeps a retry from sending twice.
     */
    async markEndpointFailing(input: MarkFailingInput): Promise<MarkFailingResult> {
      const notification = await markFailingWithNotification(deps.pool, {
        endpointId: input.endpointId,
        streak: input.streak,
        notificationId: newId('notification'),
        dedupeKey: `endpoint_failing:${input.endpointId}:${input.episodeStartEventId}`,
        compose: (endpoint) => composeFailingNotice(endpoint, input, deps.config),
      });
      if (!notification) return { notificationId: null, emailed: false };
      if (!deps.mailer || !notification.email_to || notification.email_sent_at) {
        return { notificationId: notification.id, emailed: notification.email_sent_at !== null };
      }
      try {
        await deps.mailer.sendMail({
          from: deps.config.notificationFrom,
          to: notification.email_to,
          subject: notification.subject,
          text: notification.body,
        });
      } catch (err) {
        // Typed, so the supervisor can tell "stored, not emailed" (give up after the retries) from "not stored".
        throw ApplicationFailure.retryable((err as Error).message, FAILURE.notificationEmailFailed);
      }
      await markEmailSent(deps.pool, notification.id);
      log.info('endpoint failing: merchant emailed', { endpointId: input.endpointId });
      return { notificationId: notification.id, emailed: true };
    },
  };
}
