import type { SignAndPostInput, SkipReason } from '../core/delivery-contract';
import { openSecret, SecretUnavailableError, type KeyRing } from '../core/secrets';
import { openHeaders } from '../domain/endpoint-headers';
import { renderForVersion } from '../core/versions';
import { loadAttemptContext, type AttemptClaim, type RateTokenRequest } from '../db/attempt-claims';
import type { Pool } from '../db/pool';
import { withinDeadline } from './deadline';
import type { AttemptDeps } from './deps';

/** The endpoint as an attempt sees it, its secrets opened. */
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
  /** The merchant's custom headers, sent on every POST (domain/endpoint-headers.ts). */
  headers: Record<string, string>;
  /** The API version this delivery posts in (its own, made with it; else the endpoint's): Service-Version. */
  apiVersion: string;
}

/** What an attempt reads before posting. */
export interface DeliveryContext {
  endpoint: EndpointForDelivery;
  /** The event's body in the delivery's API version, the bytes signed and posted; null when the event is unknown. */
  body: string | null;
  /** The publish's W3C traceparent: the POST continues its trace (infra/tracing.ts tracePost). */
  traceParent: string | null;
  /** This run holds the attempt's claim (or none was asked for) and no record exists: it may post. */
  fresh: boolean;
  /** Ended from outside while its ladder waited (the endpoint was disabled): the ladder stops here. */
  deliveryStopped: boolean;
  /** Set when the attempt may not post yet (the endpoint's rate limit or Retry-After); nothing was claimed. */
  throttled?: Throttle;
  /** The rate token it holds: the clock second (Unix seconds) it counts in; absent when the endpoint has no limit. */
  token?: { second: number; rateLimit: number | null };
  /** How long the endpoint has been paused by its owner (ms); absent when it is not: the attempt is held. */
  pausedForMs?: number;
}

/** Why and until when an attempt waits before posting; `reservedSecond` is its place in the endpoint's queue. */
export interface Throttle {
  untilMs: number;
  reservedSecond: number | null;
  /** The endpoint's limit; null when only its Retry-After holds the attempt back. */
  rateLimit: number | null;
}

/**
 * The endpoint and the event's stored body in one round trip, claiming the attempt in it when a claim is given.
 * The body is read here rather than carried in each attempt's input: there it would be copied into workflow
 * history once per attempt per endpoint (50 endpoints x 6 attempts x the body), and one workflow task scheduling
 * every endpoint's first attempt would exceed Temporal's 4 MB gRPC message with bodies of under 100 KB.
 * Throws SecretUnavailableError when a secret cannot be opened.
 */
export async function loadDeliveryContext(
  pool: Pool,
  endpointId: string,
  eventId: string | null,
  ring: KeyRing = [],
  claim?: AttemptClaim,
  deliveryId?: string,
  token?: RateTokenRequest,
): Promise<DeliveryContext | undefined> {
  const row = await loadAttemptContext(pool, endpointId, eventId, { claim, deliveryId, token });
  if (!row) return undefined;
  // Any stored form opens (core/secrets.ts), so a delivery reading while `secrets reencrypt` runs signs alike.
  const secrets = [openSecret(row.secret, row.id, ring)];
  if (row.previous_secret !== null) secrets.push(openSecret(row.previous_secret, row.id, ring));
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
    headers: openHeaders(row.headers, row.id, ring),
    apiVersion: row.api_version,
  };
  const throttled =
    row.throttled_until_ms === null
      ? undefined
      : { untilMs: row.throttled_until_ms, reservedSecond: row.reserved_second, rateLimit: row.rate_limit };
  return {
    endpoint,
    body: row.event_body === null ? null : renderForVersion(row.event_body, row.api_version),
    traceParent: row.event_trace_parent,
    fresh: row.fresh,
    deliveryStopped: row.delivery_status === 'skipped',
    throttled,
    token: row.granted_second === null ? undefined : { second: row.granted_second, rateLimit: row.rate_limit },
    ...(row.paused_for_ms == null ? {} : { pausedForMs: Math.max(0, row.paused_for_ms) }),
  };
}

/** The endpoint as a delivery sees it, without an event. */
export async function loadEndpointForDelivery(
  pool: Pool,
  endpointId: string,
  ring: KeyRing = [],
): Promise<EndpointForDelivery | undefined> {
  return (await loadDeliveryContext(pool, endpointId, null, ring))?.endpoint;
}

/** What the read came to: the context, no endpoint at all, or a secret that cannot be opened. */
export type ReadContext = DeliveryContext | undefined | 'secretUnavailable';

/**
 * The attempt's read, within its deadline. Our database not answering throws (nothing was posted). A secret that
 * cannot be opened is this endpoint's problem, not an outage: it comes back as `secretUnavailable`.
 */
export async function readContext(
  deps: AttemptDeps,
  input: SignAndPostInput,
  claim: AttemptClaim | undefined,
  token: RateTokenRequest,
): Promise<ReadContext> {
  try {
    const ring = deps.config.webhook.secretEncryptionKeys;
    const context = loadDeliveryContext(
      deps.pool,
      input.endpointId,
      input.eventId,
      ring,
      claim,
      input.deliveryId,
      token,
    );
    return await withinDeadline(context, 'reading the endpoint');
  } catch (err) {
    if (err instanceof SecretUnavailableError) return 'secretUnavailable';
    throw err;
  }
}

/** Why this attempt posts nothing and ends its delivery skipped; undefined when it may post. */
export function skipReason(context: ReadContext): SkipReason | undefined {
  // Posting unsigned or badly signed is never an option, and retrying will not fix a lost key.
  if (context === 'secretUnavailable') return 'secret_unavailable';
  if (!context) return 'endpoint_missing';
  if (context.endpoint.deleted) return 'endpoint_deleted';
  if (context.endpoint.disabled) return 'endpoint_disabled';
  if (context.deliveryStopped) return 'delivery_stopped';
  if (context.endpoint.accountSuspended) return 'account_suspended';
  // Events are never deleted while a delivery of theirs runs; a missing row would be a bug of ours.
  if (context.body === null) return 'event_missing';
  return undefined;
}
