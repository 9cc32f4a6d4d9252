import { isGrpcServiceError, ServiceError, WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import {
  SEARCH_ATTRIBUTES,
  WORKFLOW_ID,
  type DeliverEventInput,
  type DeliverEventWorkflow,
  type RecoverEndpointWorkflow,
  type RecoveryBatchInput,
  type RecoveryBatchResult,
} from '../core/delivery-contract';
import { ApiError } from '../core/errors';
import { EVENT_TYPES, isEventType } from '../core/event-catalog';
import { newId } from '../core/ids';
import * as deliveries from '../db/deliveries';
import type { DeliveryToStart } from '../db/deliveries';
import type { EndpointScope } from '../db/endpoints';
import { findEventOf, insertTestEvent } from '../db/events';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { isDependencyOutage, serviceUnavailable } from '../infra/outages';
import { findUsableEndpoint } from './endpoints';
import { EVENT_ID_PATTERN, type EventEnvelope } from './events';
import { sampleEventData } from './parcel-simulator';

/**
 * Deliveries a merchant asks for: resend an event, recover what an endpoint missed, send it a test event. Each
 * is a stored delivery (trigger resend, recover or test) and its own `delivery:<dly_id>` workflow running the
 * usual deliverEvent ladder for one endpoint, with the ladder of the process that starts it. The API, the CLI
 * and the developers page all call these functions.
 */

export interface RedeliveryDeps {
  pool: Pool;
  temporal: Client;
  config: Config;
}

/**
 * How long a merchant's request waits for Temporal to accept the workflows: the client would otherwise retry
 * an unreachable server for about half a minute while the HTTP request hangs.
 */
const START_DEADLINE_MS = 5_000;

/**
 * Temporal did not answer (down, unreachable, overloaded): a 503 the caller retries, not a 500. The outage rules
 * are infra/outages.ts's; any other ServiceError from starting a delivery is treated as Temporal's trouble too.
 */
function isTemporalUnavailable(err: unknown): boolean {
  return isDependencyOutage(err) || err instanceof ServiceError || isGrpcServiceError(err);
}

function unavailable(): ApiError {
  return serviceUnavailable('Deliveries cannot be started right now; retry shortly.');
}

function summaryOf(d: DeliveryToStart): string {
  return `${d.trigger} ${d.event_type} ${d.event_id} -> ${d.endpoint_id} (${d.account_id}, ${d.livemode ? 'live' : 'test'})`;
}

function workflowInput(config: Config, d: DeliveryToStart): DeliverEventInput {
  return {
    eventId: d.event_id,
    eventType: d.event_type,
    accountId: d.account_id,
    livemode: d.livemode,
    endpointIds: [d.endpoint_id],
    deliveryIds: { [d.endpoint_id]: d.id },
    trigger: d.trigger,
    // The ladder of the process that starts the delivery, carried in its input like a published event's.
    retryDelaysMs: config.delivery.retryDelaysMs,
    timeoutMs: config.delivery.timeoutMs,
    failingThreshold: config.delivery.failingThreshold,
    // Started without a local workflow task timeout: its attempts run as regular activities.
    attemptKind: 'activity',
  };
}

/** Starts one workflow per delivery; an existing one (a retried batch) counts as started. */
export async function startDeliveryWorkflows(deps: RedeliveryDeps, rows: DeliveryToStart[]): Promise<void> {
  await deps.temporal.withDeadline(Date.now() + START_DEADLINE_MS, () => startEach(deps, rows));
}

async function startEach(deps: RedeliveryDeps, rows: DeliveryToStart[]): Promise<void> {
  await Promise.all(
    rows.map(async (d) => {
      try {
        await deps.temporal.workflow.start<DeliverEventWorkflow>('deliverEvent', {
          workflowId: WORKFLOW_ID.delivery(d.id),
          taskQueue: deps.config.temporal.taskQueue,
          args: [workflowInput(deps.config, d)],
          workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
          typedSearchAttributes: [
            { key: SEARCH_ATTRIBUTES.accountId, value: d.account_id },
            { key: SEARCH_ATTRIBUTES.livemode, value: d.livemode },
            { key: SEARCH_ATTRIBUTES.eventId, value: d.event_id },
            { key: SEARCH_ATTRIBUTES.eventType, value: d.event_type },
            { key: SEARCH_ATTRIBUTES.endpointIds, value: [d.endpoint_id] },
          ],
          staticSummary: summaryOf(d),
          staticDetails: `**${d.trigger}** delivery \`${d.id}\` of \`${d.event_id}\` (${d.event_type}) to \`${d.endpoint_id}\``,
        });
      } catch (err) {
        if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
      }
    }),
  );
}

/** Starts stored deliveries now; when Temporal is out of reach they end skipped (not_started) and the caller gets a 503. */
async function startOrGiveBack(deps: RedeliveryDeps, rows: DeliveryToStart[]): Promise<void> {
  try {
    await startDeliveryWorkflows(deps, rows);
  } catch (err) {
    await deliveries.markNotStarted(deps.pool, { deliveryIds: rows.map((d) => d.id) });
    if (isTemporalUnavailable(err)) throw unavailable();
    throw err;
  }
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
    const reached = await deliveries.liveEndpointsOfEvent(deps.pool, event.id);
    const subscribed = endpoint.events.length === 0 || endpoint.events.includes(event.type);
    if (!subscribed && !reached.includes(endpoint.id)) {
      throw new ApiError('endpoint_not_subscribed', `The endpoint ${endpoint.id} does not receive ${event.type} events.`, {
        param: 'endpoint_id',
      });
    }
    endpointIds = [endpoint.id];
  } else {
    endpointIds = await deliveries.liveEndpointsOfEvent(deps.pool, event.id);
  }
  const rows = endpointIds.length > 0 ? await deliveries.insertDeliveries(deps.pool, { eventId: event.id, endpointIds, trigger: 'resend' }) : [];
  await startOrGiveBack(deps, rows);
  return { object: 'resend', event_id: event.id, endpoint_ids: endpointIds, livemode: scope.livemode };
}

/**
 * POST /v1/webhooks/:id/recover: the window's deliveries are stored at once (a second call for the same window
 * finds them pending and makes none), then one workflow starts them at RECOVER_RATE_PER_SECOND.
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
  const recoveryId = newId('recovery');
  const count = await deliveries.insertRecoveryDeliveries(deps.pool, {
    recoveryId,
    endpointId: endpoint.id,
    accountId: scope.accountId,
    livemode: scope.livemode,
    since: window.since,
    until,
  });
  const base = { object: 'recovery' as const, endpoint_id: endpoint.id, livemode: scope.livemode };
  if (count === 0) return { ...base, id: null, event_count: 0 };
  try {
    const start = () => deps.temporal.workflow.start<RecoverEndpointWorkflow>('recoverEndpoint', {
      workflowId: WORKFLOW_ID.recovery(recoveryId),
      taskQueue: deps.config.temporal.taskQueue,
      args: [{ recoveryId, endpointId: endpoint.id, accountId: scope.accountId, livemode: scope.livemode, ratePerSecond: deps.config.delivery.recoverRatePerSecond }],
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.accountId, value: scope.accountId },
        { key: SEARCH_ATTRIBUTES.livemode, value: scope.livemode },
        { key: SEARCH_ATTRIBUTES.endpointIds, value: [endpoint.id] },
      ],
      staticSummary: `recover ${count} event${count === 1 ? '' : 's'} -> ${endpoint.id} at ${deps.config.delivery.recoverRatePerSecond}/s (${scope.accountId}, ${scope.livemode ? 'live' : 'test'})`,
    });
    await deps.temporal.withDeadline(Date.now() + START_DEADLINE_MS, start);
  } catch (err) {
    await deliveries.markNotStarted(deps.pool, { recoveryId });
    if (isTemporalUnavailable(err)) throw unavailable();
    throw err;
  }
  return { ...base, id: recoveryId, event_count: count };
}

/** The recovery workflow's activity: the next batch of its deliveries, each started as its own workflow. */
export async function startRecoveryBatch(deps: RedeliveryDeps, input: RecoveryBatchInput): Promise<RecoveryBatchResult> {
  const rows = await deliveries.listRecoveryBatch(deps.pool, { recoveryId: input.recoveryId, afterId: input.afterDeliveryId, limit: input.limit });
  await startDeliveryWorkflows(deps, rows);
  return { started: rows.length, lastDeliveryId: rows.at(-1)?.id ?? null };
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
    throw new ApiError('unknown_event_type', `Unknown event type ${JSON.stringify(type.slice(0, 100))}; use one of ${EVENT_TYPES.join(', ')}.`, {
      param: 'type',
    });
  }
  const endpoint = await findUsableEndpoint(deps.pool, scope, endpointId);
  const envelope: EventEnvelope = {
    id: newId('event'),
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    data: sampleEventData(type),
    livemode: scope.livemode,
  };
  const body = JSON.stringify(envelope);
  const deliveryId = await insertTestEvent(deps.pool, { ...envelope, accountId: scope.accountId, body }, endpoint.id);
  const row: DeliveryToStart = {
    id: deliveryId,
    event_id: envelope.id,
    event_type: type,
    endpoint_id: endpoint.id,
    account_id: scope.accountId,
    livemode: scope.livemode,
    trigger: 'test',
  };
  await startOrGiveBack(deps, [row]);
  return envelope;
}
