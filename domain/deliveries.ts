import Type, { type Static } from 'typebox';
import type { AttemptRecord, DeliveryTrigger, RecordResult, SkipReason } from '../core/delivery-contract';
import { ApiError } from '../core/errors';
import { openSecret } from '../core/secrets';
import * as attempts from '../db/delivery-attempts';
import type { DeliveryAttemptRow } from '../db/delivery-attempts';
import { markDeliverySkipped, type DeliveryRef } from '../db/deliveries';
import { findAttemptClaim, loadAttemptContext, releaseAttemptClaim, type AttemptClaim, type AttemptClaimHolderRow, type EndpointScope } from '../db/endpoints';
import type { Pool } from '../db/pool';
import { getEndpoint, unixSeconds, type EndpointDeps, type Page } from './endpoints';

/**
 * Deliveries: what an attempt reads before posting, how it is recorded, and the deliveries log merchants read.
 * The attempt's messages themselves are the workflow contract's (core/delivery-contract.ts).
 */

const DELIVERY_ID = /^dlv_[A-Za-z0-9]{1,64}$/;

export interface EndpointForDelivery {
  id: string;
  url: string;
  accountId: string;
  livemode: boolean;
  status: 'enabled' | 'failing';
  disabled: boolean;
  deleted: boolean;
  accountSuspended: boolean;
  /** A listen session's pinned certificate: the loopback URL is posted to trusting exactly this one. */
  localCertificate: string | null;
  /** Plain secrets to sign with: the current one first, then the previous one while within its grace. */
  secrets: string[];
}

/**
 * The endpoint and the event's stored body in one round trip. The body is read here rather than carried in
 * each activity's input: there it would be copied into workflow history once per attempt per endpoint
 * (50 endpoints x 6 attempts x the body), and one workflow task scheduling every endpoint's first attempt
 * would exceed Temporal's 4 MB gRPC message with bodies of under 100 KB. `body` is null when the event is
 * unknown. Throws SecretUnavailableError when a secret cannot be opened.
 */
export async function loadDeliveryContext(
  pool: Pool,
  endpointId: string,
  eventId: string | null,
  key?: Buffer,
  claim?: AttemptClaim,
  deliveryId?: string,
): Promise<{ endpoint: EndpointForDelivery; body: string | null; fresh: boolean; deliveryStopped: boolean } | undefined> {
  const row = await loadAttemptContext(pool, endpointId, eventId, { claim, deliveryId });
  if (!row) return undefined;
  const secrets = [openSecret(row.secret, key)];
  if (row.previous_secret !== null) secrets.push(openSecret(row.previous_secret, key));
  const endpoint: EndpointForDelivery = {
    id: row.id,
    url: row.url,
    accountId: row.account_id,
    livemode: row.livemode,
    status: row.status,
    disabled: row.disabled,
    deleted: row.deleted,
    accountSuspended: row.account_suspended,
    localCertificate: row.local_certificate,
    secrets,
  };
  // Ended from outside while its ladder waited (the endpoint was disabled): the ladder stops here.
  return { endpoint, body: row.event_body, fresh: row.fresh, deliveryStopped: row.delivery_status === 'skipped' };
}

export type { AttemptClaim };

/** A run that claimed its attempt and then skipped it (nothing posted, no record) gives its claim back. */
export async function releaseClaim(pool: Pool, claim: Pick<AttemptClaim, 'attemptId' | 'run'>): Promise<void> {
  await releaseAttemptClaim(pool, claim);
}

/** Who holds an attempt's claim and, once it is recorded, what the attempt came to; undefined when unclaimed. */
export async function attemptClaimHolder(pool: Pool, attemptId: string): Promise<AttemptClaimHolderRow | undefined> {
  return findAttemptClaim(pool, attemptId);
}

/** The endpoint as a delivery sees it, without an event. */
export async function loadEndpointForDelivery(pool: Pool, endpointId: string, key?: Buffer): Promise<EndpointForDelivery | undefined> {
  return (await loadDeliveryContext(pool, endpointId, null, key))?.endpoint;
}

/**
 * Records an attempt and its delivery's progress, idempotent on (delivery, attempt) so the first writer wins; a
 * success also clears the endpoint's abandoned streak and failing mark (`recovered` then says the supervisor
 * must hear of it).
 */
export async function recordAttempt(pool: Pool, record: AttemptRecord): Promise<RecordResult> {
  return attempts.insertAttempt(pool, record);
}

/** The attempt posted nothing (endpoint removed or disabled, account suspended): its delivery ends skipped. */
export async function recordSkipped(pool: Pool, ref: DeliveryRef, reason: SkipReason): Promise<void> {
  await markDeliverySkipped(pool, ref, reason);
}

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
  response_body: Type.Union([Type.String(), Type.Null()], { description: 'First 500 characters (spec 2.4).' }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: 'Null, or why no valid answer came: timeout, connection_refused, dns, tls, redirect, ...',
  }),
  duration_ms: Type.Integer(),
  succeeded: Type.Boolean(),
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
export async function findAttempt(pool: Pool, attemptId: string): Promise<{ attempt: number; trigger: DeliveryTrigger } | undefined> {
  return DELIVERY_ID.test(attemptId) ? attempts.findAttemptSummary(pool, attemptId) : undefined;
}
