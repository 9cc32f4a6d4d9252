import type { EndpointScope } from '../db/endpoints';
import { listEndpointNotifications, type NotificationRow } from '../db/notifications';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import type { Mailer } from '../infra/mailer';

/** What we tell merchants: the failing-endpoint notice, and its email. */

export type { NotificationRow };

/** Sending failed: the notification is stored, not emailed; the caller decides whether to try again. */
export class EmailNotSentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'EmailNotSentError';
  }
}

export function composeFailingNotice(
  endpoint: { url: string },
  input: { endpointId: string; streak: number },
  config: Pick<Config, 'delivery'>,
): { subject: string; body: string } {
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

/**
 * Sends a stored notification's email; throws EmailNotSentError when the mail server refuses or cannot be
 * reached. Whether it may be sent (once, still true) is the caller's claim to make (domain/endpoint-health.ts).
 */
export async function sendNotificationEmail(
  deps: { config: Pick<Config, 'notificationFrom'>; mailer?: Mailer },
  notification: NotificationRow,
): Promise<void> {
  if (!deps.mailer || !notification.email_to) return;
  try {
    await deps.mailer.sendMail({
      from: deps.config.notificationFrom,
      to: notification.email_to,
      subject: notification.subject,
      text: notification.body,
    });
  } catch (err) {
    throw new EmailNotSentError((err as Error).message);
  }
}

export interface NotificationRecord {
  id: string;
  object: 'notification';
  endpoint_id: string | null;
  kind: string;
  subject: string;
  body: string;
  email_to: string | null;
  email_sent_at: string | null;
  created_at: string;
}

/**
 * What an endpoint's owner was told (its failing marks), newest first. The caller has found the endpoint in
 * this scope (getEndpoint), which is what keeps another account's notifications out of reach.
 */
export async function listNotificationsForEndpoint(
  pool: Pool,
  scope: EndpointScope,
  endpointId: string,
  limit = 20,
): Promise<NotificationRecord[]> {
  const rows = await listEndpointNotifications(pool, { accountId: scope.accountId, endpointId, limit });
  return rows.map((row) => ({
    id: row.id,
    object: 'notification' as const,
    endpoint_id: row.endpoint_id,
    kind: row.kind,
    subject: row.subject,
    body: row.body,
    email_to: row.email_to,
    email_sent_at: row.email_sent_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  }));
}
