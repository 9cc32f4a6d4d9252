import Type, { type Static } from 'typebox';
import type { DeliveryTrigger } from '../core/delivery-contract';
import { ApiError } from '../core/errors';
import * as attempts from '../db/delivery-attempts';
import type { DeliveryAttemptRow } from '../db/delivery-attempts';
import type { EndpointScope } from '../db/endpoints';
import type { Pool } from '../db/pool';
import { getEndpoint, unixSeconds, type EndpointDeps, type Page } from './endpoints';

/**
 * The deliveries log merchants read: every attempt to an endpoint, newest first. Making and recording attempts
 * is the delivery core's (attempt/); this module only reads what it stored.
 */

const DELIVERY_ID = /^dlv_[A-Za-z0-9]{1,64}$/;

export const DeliveryTriggerSchema = Type.Union(
  [Type.Literal('automatic'), Type.Literal('resend'), Type.Literal('recover'), Type.Literal('test')],
  { description: 'What started the delivery: publishing (automatic), a resend, a recovery or a test event.' },
);

export const DeliveryAttemptRecord = Type.Object({
  id: Type.String(),
  object: Type.Literal('delivery_attempt'),
  endpoint_id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  attempt: Type.Integer({ description: 'Attempt number within its delivery, from 1.' }),
  trigger: DeliveryTriggerSchema,
  status_code: Type.Union([Type.Integer(), Type.Null()], { description: 'Null when the endpoint did not answer.' }),
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'First 500 characters.' }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Null, or why no valid answer came: timeout, connection_refused, dns, tls, redirect, ...',
  }),
  duration_ms: Type.Integer(),
  succeeded: Type.Boolean(),
  reason: Type.Union([Type.String(), Type.Null()], {
    description:
      'Null on an attempt; set on the entry of a delivery given up without one: expired (not answered 2xx within the max age).',
  }),
  livemode: Type.Boolean(),
  created: Type.Integer({ description: 'Unix seconds.' }),
});
export type DeliveryAttemptRecord = Static<typeof DeliveryAttemptRecord>;

export function toDeliveryAttemptRecord(row: DeliveryAttemptRow): DeliveryAttemptRecord {
  return {
    id: row.id,
    object: 'delivery_attempt',
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type,
    attempt: row.attempt,
    trigger: row.trigger,
    status_code: row.status_code,
    response_body: row.response_body,
    error: row.error,
    duration_ms: row.duration_ms,
    succeeded: row.succeeded,
    reason: row.reason,
    livemode: row.livemode,
    created: unixSeconds(row.created_at),
  };
}

/** The deliveries log. Deliveries of a removed endpoint are gone with it, as the endpoint itself is (404). */
export async function listDeliveries(
  deps: EndpointDeps,
  scope: EndpointScope,
  endpointId: string,
  query: { limit: number; startingAfter?: string; eventId?: string; outcome?: 'succeeded' | 'failed' },
): Promise<Page<DeliveryAttemptRecord>> {
  await getEndpoint(deps, scope, endpointId);
  if (query.eventId?.includes('\u0000')) {
    throw new ApiError('parameter_invalid', 'event_id must not contain NUL characters.', { param: 'event_id' });
  }
  const cursor = query.startingAfter;
  const result =
    cursor === undefined || DELIVERY_ID.test(cursor)
      ? await attempts.listDeliveryAttempts(deps.pool, { ...query, endpointId, accountId: scope.accountId })
      : undefined;
  if (!result) {
    throw new ApiError('resource_missing', 'starting_after is not a delivery attempt of this endpoint.', {
      param: 'starting_after',
    });
  }
  return { data: result.rows.map(toDeliveryAttemptRecord), hasMore: result.hasMore };
}

/** An attempt's number and its delivery's trigger, once recorded (the engine records right after the answer). */
export async function findAttempt(
  pool: Pool,
  attemptId: string,
): Promise<{ attempt: number; trigger: DeliveryTrigger } | undefined> {
  return DELIVERY_ID.test(attemptId) ? attempts.findAttemptSummary(pool, attemptId) : undefined;
}
