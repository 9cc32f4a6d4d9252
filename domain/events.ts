import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { SEARCH_ATTRIBUTES, WORKFLOW_ID, type DeliverEventInput, type DeliverEventWorkflow } from '../core/delivery-contract';
import { localAttemptTaskTimeoutMs } from '../core/delivery-policy';
import { formatDuration } from '../core/durations';
import { ApiError } from '../core/errors';
import { EVENT_TYPES, isEventType, type EventType } from '../core/event-catalog';
import { newId } from '../core/ids';
import { findEvent, insertEventWithFanOut, type EventRow } from '../db/events';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { countPublished } from '../infra/metrics';

/**
 * Events: what a valid event is (spec 2, 6) and the one way to publish one (internal API, CLI, simulator,
 * TypeScript callers): stored with its fan-out snapshot, then delivered by its own deliverEvent workflow.
 */

export interface PublishDeps {
  pool: Pool;
  temporal: Client;
  config: Config;
  /**
   * The client shares its NativeConnection with a worker polling the delivery task queue (one process): the
   * server may then hand the first workflow task straight back with the start (eager workflow start), skipping
   * a trip through matching. A client on its own connection must leave this off (the SDK refuses it).
   */
  eagerStart?: boolean;
}

export interface PublishInput {
  accountId: string;
  livemode: boolean;
  type: string;
  data: unknown;
  id?: string;
}

/** Spec 2.1: the body posted to endpoints, serialised once at publish time. */
export interface EventEnvelope {
  id: string;
  object: 'event';
  type: EventType;
  created: number;
  data: Record<string, unknown>;
  livemode: boolean;
}

export interface PublishedEvent {
  event: EventEnvelope;
  accountId: string;
  endpointIds: string[];
  /** false when the id had already been published: the same event, not a new delivery. */
  created: boolean;
  workflowId: string | null;
}

export const EVENT_ID_PATTERN = /^evt_[A-Za-z0-9_]{1,64}$/;

const PARCEL_FIELD_TYPES: Record<string, 'string' | 'number'> = {
  id: 'string',
  parcel_number: 'string',
  tracking_number: 'string',
  status: 'string',
  payment_status: 'string',
  total_fee: 'number',
  currency: 'string',
  description: 'string',
  package_size: 'string',
  recipient_name: 'string',
  pickup_run_id: 'string',
};

const SETTLEMENT_FIELD_TYPES: Record<string, 'string' | 'number'> = {
  id: 'string',
  parcel_id: 'string',
  parcel_number: 'string',
  amount: 'number',
  currency: 'string',
  settled_at: 'number',
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Loose on purpose: `id` is required; the other known fields, when present, must have their spec type. */
function checkObject(data: Record<string, unknown>, key: string, fields: Record<string, 'string' | 'number'>): void {
  const value = data[key];
  const param = `data.${key}`;
  if (!isObject(value)) {
    throw new ApiError('parameter_missing', `This event type needs ${param} as an object.`, { param });
  }
  if (typeof value.id !== 'string' || value.id === '') {
    throw new ApiError('parameter_missing', `Missing required parameter: ${param}.id.`, { param: `${param}.id` });
  }
  for (const [field, type] of Object.entries(fields)) {
    if (value[field] !== undefined && value[field] !== null && typeof value[field] !== type) {
      throw new ApiError('parameter_invalid', `Invalid ${param}.${field}: must be a ${type}.`, { param: `${param}.${field}` });
    }
  }
}

export function validateEventInput(input: PublishInput): { type: EventType; data: Record<string, unknown> } {
  if (!isEventType(input.type)) {
    throw new ApiError('unknown_event_type', `Unknown event type ${JSON.stringify(input.type)}; use one of ${EVENT_TYPES.join(', ')}.`, {
      param: 'type',
    });
  }
  if (input.id !== undefined && !EVENT_ID_PATTERN.test(input.id)) {
    throw new ApiError('parameter_invalid', 'Invalid id: must match evt_ followed by 1 to 64 of [A-Za-z0-9_].', { param: 'id' });
  }
  if (!isObject(input.data)) throw new ApiError('parameter_invalid', 'data must be a JSON object.', { param: 'data' });
  if (input.type === 'cod.settled') checkObject(input.data, 'cod_settlement', SETTLEMENT_FIELD_TYPES);
  else checkObject(input.data, 'parcel', PARCEL_FIELD_TYPES);
  return { type: input.type, data: input.data };
}

/** The stored row, and its envelope: the one just built, or the earlier one parsed back when the id was seen before. */
async function storeEvent(
  pool: Pool,
  input: PublishInput,
  type: EventType,
  data: Record<string, unknown>,
): Promise<{ row: EventRow; event: EventEnvelope }> {
  const envelope: EventEnvelope = {
    id: input.id ?? newId('event'),
    object: 'event',
    type,
    created: Math.floor(Date.now() / 1000),
    data,
    livemode: input.livemode,
  };
  const row = { id: envelope.id, accountId: input.accountId, livemode: input.livemode, type, created: envelope.created };
  const stored = await insertEventWithFanOut(pool, { ...row, body: JSON.stringify(envelope) });
  if (stored === null) throw new ApiError('resource_missing', `No such account: ${input.accountId}.`, { param: 'account_id' });
  if (stored?.inserted) return { row: stored, event: envelope };
  // A concurrent publish of the same id committed after our statement's snapshot: read it now.
  const existing = stored ?? (await findEvent(pool, envelope.id));
  if (!existing) throw new Error(`event ${envelope.id} neither inserted nor found`);
  if (existing.account_id !== input.accountId) {
    throw new ApiError('idempotency_conflict', `The event id ${envelope.id} is already used.`, { param: 'id' });
  }
  return { row: { inserted: false, ...existing }, event: JSON.parse(existing.body) as EventEnvelope };
}

/**
 * Temporal refuses to start a workflow whose search attribute value is over 2 KB (dynamic config
 * limit.searchAttributesSizeOfValueLimit, the same default on the dev server and a self-hosted cluster), measured
 * on the JSON payload. A keyword list of endpoint ids reaches it at about 68 endpoints.
 */
export const SEARCH_ATTRIBUTE_VALUE_MAX_BYTES = 2 * 1024;

/**
 * The endpoint ids an event workflow is searchable by: all of them when they fit, else the first ones that do.
 * An account with a wider fan-out still gets its deliveries; past the cap, find its events by account instead.
 */
export function searchableEndpointIds(endpointIds: readonly string[]): string[] {
  const kept: string[] = [];
  let size = 2; // the list's brackets
  for (const id of endpointIds) {
    const added = Buffer.byteLength(JSON.stringify(id)) + (kept.length > 0 ? 1 : 0);
    if (size + added > SEARCH_ATTRIBUTE_VALUE_MAX_BYTES) break;
    kept.push(id);
    size += added;
  }
  return kept;
}
function deliveryInput(
row: EventRow, config: Config): DeliverEventInput {
  return {
    eventId: row.id,
    eventType: row.type,
    accountId: row.account_id,
    livemode: row.livemode,
    endpointIds: row.endpoint_ids,
    deliveryIds: row.delivery_ids,
    // Read at publish time and carried in the input, so a config change never alters a running ladder.
    retryDelaysMs: config.delivery.retryDelaysMs,
    timeoutMs: config.delivery.timeoutMs,
    failingThreshold: config.delivery.failingThreshold,
    attemptKind: config.delivery.attemptKind,
  };
}

function describe(input: DeliverEventInput): { staticSummary: string; staticDetails: string } {
  const mode = input.livemode ? 'live' : 'test';
  const count = input.endpointIds.length;
  const ladder = input.retryDelaysMs.map(formatDuration).join(', ');
  return {
    staticSummary: `${input.eventType} ${input.eventId} -> ${count} endpoint${count === 1 ? '' : 's'} (${input.accountId}, ${mode})`,
    staticDetails: [
      `**Event** \`${input.eventId}\` (${input.eventType}), account \`${input.accountId}\`, ${mode} mode`,
      '',
      `**Endpoints**: ${input.endpointIds.map((id) => `\`${id}\``).join(', ')}`,
      '',
      `**Ladder**: ${input.retryDelaysMs.length + 1} attempts, waits ${ladder}; ` +
        `timeout ${formatDuration(input.timeoutMs)} per attempt; failing after ${input.failingThreshold} abandoned deliveries`,
    ].join('\n'),
  };
}

/** Idempotent: an existing workflow for this event (running or finished) is success, never a second delivery. */
async function startDelivery(temporal: Client, config: Config, input: DeliverEventInput, eagerStart = false): Promise<string> {
  const workflowId = WORKFLOW_ID.deliverEvent(input.eventId);
  try {
    await temporal.workflow.start<DeliverEventWorkflow>('deliverEvent', {
      workflowId,
      taskQueue: config.temporal.taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      requestEagerStart: eagerStart,
      // A local attempt runs inside the workflow task, which must outlast it (core/delivery-policy.ts).
      ...(input.attemptKind === 'local' ? { workflowTaskTimeout: localAttemptTaskTimeoutMs(input.timeoutMs) } : {}),
      typedSearchAttributes: [
        { key: SEARCH_ATTRIBUTES.accountId, value: input.accountId },
        { key: SEARCH_ATTRIBUTES.livemode, value: input.livemode },
        { key: SEARCH_ATTRIBUTES.eventId, value: input.eventId },
        { key: SEARCH_ATTRIBUTES.eventType, value: input.eventType },
        { key: SEARCH_ATTRIBUTES.endpointIds, value: searchableEndpointIds(input.endpointIds) },
      ],
      ...describe(input),
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
  return workflowId;
}

/**
 * The one way to publish (internal API, CLI, TypeScript callers): store the event with its fan-out snapshot in
 * one statement, then start its delivery workflow. The workflow is started again for an id seen before, in case
 * an earlier call stopped between the two, but not once an attempt is recorded: Temporal forgets a finished
 * workflow id after the namespace's retention, and a late re-publish would then deliver the event a second time.
 */
export async function publishEvent(deps: PublishDeps, input: PublishInput): Promise<PublishedEvent> {
  const { type, data } = validateEventInput(input);
  const { row, event } = await storeEvent(deps.pool, input, type, data);
  if (row.inserted) countPublished(type, input.livemode);
  let workflowId: string | null = null;
  if (row.endpoint_ids.length > 0) {
    workflowId = row.inserted || !row.attempted
      ? await startDelivery(deps.temporal, deps.config, deliveryInput(row, deps.config), deps.eagerStart)
      : WORKFLOW_ID.deliverEvent(row.id);
  }
  return { event, accountId: row.account_id, endpointIds: row.endpoint_ids, created: row.inserted, workflowId };
}
