import { ApiError } from '../core/errors';
import { EVENT_TYPES, isEventType } from '../core/event-catalog';
import { newId } from '../core/ids';
import { renderEvent } from '../core/versions';
import * as deliveries from '../db/deliveries';
import type { EndpointScope } from '../db/endpoints';
import { findEventOf, insertTestEvent } from '../db/events';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { endpointMissing, findUsableEndpoint } from './endpoints';
import { EVENT_ID_PATTERN, type EventEnvelope } from './events';
import { sampleEventData } from './parcel-simulator';

/**
 * Deliveries a merchant asks for: resend an event, recover what an endpoint missed, send it a test event. Each
 * is a stored delivery (trigger resend, recover or test) that waits in the outbox like a published event: these
 * functions only store and answer, and a worker's dispatcher starts its own `delivery:<dly_id>` workflow running
 * the usual deliverEvent ladder for one endpoint (domain/outbox.ts, domain/delivery-start.ts). So a request
 * made while Temporal is out of reach is accepted all the same, and delivered once Temporal answers. The API,
 * the CLI and the developers page all call these functions, each with the account and mode it acts in: the
 * lookups and the statements that write are both scoped to them, so nothing of another account or mode moves.
 */

export interface RedeliveryDeps {
  pool: Pool;
  /** RECOVER_RATE_PER_SECOND: the pace a recovery's deliveries are spaced at. */
  config: Config;
}

/** Seconds a refused redelivery is asked to wait: pending deliveries end as they are tried. */
export const PENDING_RETRY_AFTER_SECONDS = 30;

/**
 * REDELIVERY_MAX_PENDING: an account (both modes together) may have that many redeliveries pending (neither
 * delivered nor given up); a request that would add `adding` more past it is refused, 429
 * too_many_pending_deliveries. The count and the insert are two statements, not one lock: requests racing
 * past the same count may overshoot the limit by their fan-out (at most 20 for a resend). A recovery's size is
 * known only as it is stored, so it is refused when the limit is already reached and otherwise stored whole.
 */
async function assertRoomForRedeliveries(deps: RedeliveryDeps, scope: EndpointScope, adding: number): Promise<void> {
  const max = deps.config.delivery.redeliveryMaxPending;
  const pending = await deliveries.countPendingRedeliveries(deps.pool, scope.accountId);
  if (pending + adding <= max) return;
  throw new ApiError(
    'too_many_pending_deliveries',
    `This account has ${pending} redeliveries pending (at most ${max}); retry once some have been delivered.`,
    {},
    { 'Retry-After': String(PENDING_RETRY_AFTER_SECONDS) },
  );
}

function eventMissing(id: string): ApiError {
  return new ApiError('resource_missing', `No such event: '${id.slice(0, 80)}'.`);
}

/**
 * POST /v1/events/:id/resend: a new delivery of the same bytes to one endpoint (subscribed to the kind, or
 * already delivered to) or to every live endpoint the event was delivered to (its snapshot, tests, resends).
 */
export async function resendEvent(
  deps: RedeliveryDeps,
  scope: EndpointScope,
  eventId: string,
  options: { endpointId?: string } = {},
): Promise<{ object: 'resend'; event_id: string; endpoint_ids: string[]; livemode: boolean }> {
  const event = EVENT_ID_PATTERN.test(eventId) ? await findEventOf(deps.pool, scope, eventId) : undefined;
  if (!event) throw eventMissing(eventId);
  let endpointIds: string[];
  if (options.endpointId !== undefined) {
    const endpoint = await findUsableEndpoint(deps.pool, scope, options.endpointId, 'endpoint_id');
    const reached = await deliveries.liveEndpointsOfEvent(deps.pool, scope, event.id);
    const subscribed = endpoint.events.length === 0 || endpoint.events.includes(event.type);
    if (!subscribed && !reached.includes(endpoint.id)) {
      throw new ApiError(
        'endpoint_not_subscribed',
        `The endpoint ${endpoint.id} does not receive ${event.type} events.`,
        {
          param: 'endpoint_id',
        },
      );
    }
    endpointIds = [endpoint.id];
  } else {
    endpointIds = await deliveries.liveEndpointsOfEvent(deps.pool, scope, event.id);
  }
  if (endpointIds.length > 0) await assertRoomForRedeliveries(deps, scope, endpointIds.length);
  if (endpointIds.length > 0)
    await deliveries.insertDeliveries(deps.pool, scope, { eventId: event.id, endpointIds, trigger: 'resend' });
  return { object: 'resend', event_id: event.id, endpoint_ids: endpointIds, livemode: scope.livemode };
}

/**
 * POST /v1/webhooks/:id/recover: the window's deliveries are stored at once, spaced 1 / RECOVER_RATE_PER_SECOND
 * seconds apart, for the dispatchers to start at that pace (db/deliveries.ts insertRecoveryDeliveries). A second
 * call for the same window finds them pending (or succeeded) and makes none.
 */
export async function recoverEndpoint(
  deps: RedeliveryDeps,
  scope: EndpointScope,
  endpointId: string,
  window: { since: number; until?: number },
  now = Math.floor(Date.now() / 1000),
): Promise<{ object: 'recovery'; id: string | null; endpoint_id: string; event_count: number; livemode: boolean }> {
  if (window.since > now) throw new ApiError('parameter_invalid', 'since is in the future.', { param: 'since' });
  const until = window.until ?? now;
  if (until < window.since) throw new ApiError('parameter_invalid', 'until is before since.', { param: 'until' });
  const endpoint = await findUsableEndpoint(deps.pool, scope, endpointId);
  await assertRoomForRedeliveries(deps, scope, 1);
  const recoveryId = newId('recovery');
  const count = await deliveries.insertRecoveryDeliveries(deps.pool, {
    recoveryId,
    endpointId: endpoint.id,
    accountId: scope.accountId,
    livemode: scope.livemode,
    since: window.since,
    until,
    intervalMs: 1000 / deps.config.delivery.recoverRatePerSecond,
  });
  const base = { object: 'recovery' as const, endpoint_id: endpoint.id, livemode: scope.livemode };
  return count === 0 ? { ...base, id: null, event_count: 0 } : { ...base, id: recoveryId, event_count: count };
}

/**
 * POST /v1/webhooks/:id/test: a synthetic event of that kind with the simulator's sample data, stored and listed
 * like any event of the account, delivered to this endpoint only.
 */
export async function sendTestEvent(
  deps: RedeliveryDeps,
  scope: EndpointScope,
  endpointId: string,
  options: { type?: string } = {},
): Promise<EventEnvelope> {
  const type = options.type ?? 'parcel.created';
  if (!isEventType(type)) {
    throw new ApiError(
      'unknown_event_type',
      `Unknown event type ${JSON.stringify(type.slice(0, 100))}; use one of ${EVENT_TYPES.join(', ')}.`,
      {
        param: 'type',
      },
    );
  }
  const endpoint = await findUsableEndpoint(deps.pool, scope, endpointId);
  await assertRoomForRedeliveries(deps, scope, 1);
  const envelope: EventEnvelope = {
    id: newId('event'),
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    data: sampleEventData(type),
    livemode: scope.livemode,
  };
  const body = JSON.stringify(envelope);
  // The statement checks the endpoint's account and mode again: one removed or disabled meanwhile gets nothing.
  if (!(await insertTestEvent(deps.pool, { ...envelope, accountId: scope.accountId, body }, endpoint.id)))
    throw endpointMissing(endpoint.id);
  // As the endpoint receives it: in its API version.
  return renderEvent(envelope, endpoint.api_version);
}
