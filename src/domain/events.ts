import { Compile } from 'typebox/compile';
import { WORKFLOW_ID } from '../core/delivery-contract';
import { ApiError } from '../core/errors';
import { EVENT_TYPES, isEventType, type EventType } from '../core/event-catalog';
import { newId } from '../core/ids';
import { API_VERSION_NAMES, dataSchemaIn, upgradeData } from '../core/versions';
import { findEvent, insertEventWithFanOut, type EventRow } from '../db/events';
import { OPERATIONAL_ACCOUNT_ID } from '../db/operational-webhooks';
import type { Pool } from '../db/pool';
import { countPublished } from '../infra/metrics';
import { publishTraceparent } from '../infra/tracing';

/**
 * Events: what a valid event is (each kind's shape is in core/event-schemas.ts) and the one way to
 * publish one (internal API, CLI, simulator, TypeScript callers): stored with its fan-out snapshot; a worker's
 * dispatcher then starts its deliverEvent workflow (domain/outbox.ts).
 */

/** Publishing only stores: it needs the database and nothing else (no Temporal, no delivery settings). */
export interface PublishDeps {
  pool: Pool;
}

export interface PublishInput {
  accountId: string;
  livemode: boolean;
  type: string;
  data: unknown;
  id?: string;
  /** The W3C traceparent the publishing request carried (the parcel system's), continued by the delivery's trace. */
  traceParent?: string;
}

/** The body posted to endpoints, serialised once at publish time. */
export interface EventEnvelope {
  id: string;
  object: 'event';
  type: EventType;
  created: number;
  data: Record<string, unknown>;
  livemode: boolean;
  /**
   * Set on every event about a parcel (data.parcel.id: parcel events and settlements): 1, 2, 3 ... per account,
   * mode and parcel, in publish order and without gaps, so a receiver can tell a stale state from a newer one.
   */
  sequence?: number;
}

export interface PublishedEvent {
  event: EventEnvelope;
  accountId: string;
  endpointIds: string[];
  /** false when the id had already been published: the same event, not a new delivery. */
  created: boolean;
  /** The newest API version whose shape the data was sent in: the publisher's own view of the event. */
  inputVersion: string;
  workflowId: string | null;
}

export const EVENT_ID_PATTERN = /^evt_[A-Za-z0-9_]{1,64}$/;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Each kind's `data` schema in each version, newest first, compiled once: a publisher may send the data of any
 * served version (the parcel system keeps sending the shapes it always has); it is stored in the newest.
 */
const DATA_CHECKS = new Map(
  EVENT_TYPES.map((type) => [
    type,
    API_VERSION_NAMES.map((version) => ({ version, check: Compile(dataSchemaIn(type, version)) })),
  ]),
);

interface SchemaIssue {
  keyword: string;
  instancePath: string;
  params: Record<string, unknown>;
  message: string;
}

/** `/parcel/total_fee` -> `data.parcel.total_fee`; a missing property is named by its own path. */
function issueParam(issue: SchemaIssue): string {
  const segments = issue.instancePath
    .split('/')
    .filter(Boolean)
    .map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  const missing = issue.params.requiredProperties;
  const extra = issue.params.additionalProperties;
  if (Array.isArray(missing) && missing.length > 0) segments.push(String(missing[0]));
  else if (Array.isArray(extra) && extra.length > 0) segments.push(String(extra[0]));
  return ['data', ...segments].join('.');
}

function issueMessage(issue: SchemaIssue, param: string, type: EventType): string {
  if (issue.keyword === 'required') return `Missing required field ${param} for a ${type} event.`;
  if (issue.keyword === 'additionalProperties') {
    return `Unknown field ${param}: a ${type} event carries only ${type === 'cod.settled' ? 'data.parcel and data.cod_settlement' : 'data.parcel'}.`;
  }
  return `Invalid ${param}: ${issue.message}.`;
}

/** The issues of one compiled check, the schema's own bare `additionalProperties: false` issue last. */
function issuesOf(check: { Errors(value: unknown): Iterable<unknown> }, data: unknown): SchemaIssue[] {
  const issues = [...check.Errors(data)] as SchemaIssue[];
  return [
    ...issues.filter((issue) => issue.keyword !== 'boolean'),
    ...issues.filter((issue) => issue.keyword === 'boolean'),
  ];
}

/**
 * The data in the newest shape: as it is when it has that shape, else brought forward from the newest version
 * whose shape it has. Throws invalid_event_data naming the first field that fits no version, taken from the
 * version it comes closest to.
 */
function canonicalEventData(
  type: EventType,
  data: Record<string, unknown>,
): { data: Record<string, unknown>; version: string } {
  const checks = DATA_CHECKS.get(type) ?? [];
  const fitting = checks.find(({ check }) => check.Check(data));
  if (fitting) return { data: upgradeData(type, data, fitting.version), version: fitting.version };
  // Closest: fewest issues at the top of data (which objects it carries), then fewest in all; the newest on a tie.
  const rank = (issues: SchemaIssue[]) =>
    issues.filter((issue) => issue.instancePath === '').length * 1000 + issues.length;
  const closest = checks
    .map(({ check }) => issuesOf(check, data))
    .reduce<SchemaIssue[] | undefined>(
      (best, issues) => (best === undefined || rank(issues) < rank(best) ? issues : best),
      undefined,
    );
  const issue = closest?.[0];
  const param = issue ? issueParam(issue) : 'data';
  throw new ApiError(
    'invalid_event_data',
    issue ? issueMessage(issue, param, type) : `data does not have the shape of a ${type} event.`,
    { param },
  );
}

/** The parcel an event is about, numbered in that parcel's sequence: data.parcel.id (parcel events, settlements). */
export function parcelIdOf(data: Record<string, unknown>): string | null {
  const parcel = data.parcel;
  return isObject(parcel) && typeof parcel.id === 'string' && parcel.id !== '' ? parcel.id : null;
}

/** The kind and its data in the newest shape, and the newest version whose shape the data was sent in. */
export function validateEventInput(input: PublishInput): {
  type: EventType;
  data: Record<string, unknown>;
  version: string;
} {
  if (!isEventType(input.type)) {
    throw new ApiError(
      'unknown_event_type',
      `Unknown event type ${JSON.stringify(input.type)}; use one of ${EVENT_TYPES.join(', ')}.`,
      {
        param: 'type',
      },
    );
  }
  if (input.id !== undefined && !EVENT_ID_PATTERN.test(input.id)) {
    throw new ApiError('parameter_invalid', 'Invalid id: must match evt_ followed by 1 to 64 of [A-Za-z0-9_].', {
      param: 'id',
    });
  }
  if (!isObject(input.data)) throw new ApiError('invalid_event_data', 'data must be a JSON object.', { param: 'data' });
  return { type: input.type, ...canonicalEventData(input.type, input.data) };
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
  const row = {
    id: envelope.id,
    accountId: input.accountId,
    livemode: input.livemode,
    type,
    created: envelope.created,
  };
  // An event about a parcel takes its number in the insert's statement, which appends it to these bytes
  // (db/events.ts).
  const traceParent = publishTraceparent(input.traceParent);
  const stored = await insertEventWithFanOut(pool, {
    ...row,
    body: JSON.stringify(envelope),
    parcelId: parcelIdOf(data),
    traceParent,
  });
  if (stored === null)
    throw new ApiError('resource_missing', `No such account: ${input.accountId}.`, { param: 'account_id' });
  if (stored?.inserted)
    return { row: stored, event: stored.sequence === null ? envelope : { ...envelope, sequence: stored.sequence } };
  // A concurrent publish of the same id committed after our statement's snapshot: read it now.
  const existing = stored ?? (await findEvent(pool, envelope.id));
  if (!existing) throw new Error(`event ${envelope.id} neither inserted nor found`);
  if (existing.account_id !== input.accountId) {
    throw new ApiError('idempotency_conflict', `The event id ${envelope.id} is already used.`, { param: 'id' });
  }
  return { row: { inserted: false, ...existing }, event: JSON.parse(existing.body) as EventEnvelope };
}

/**
 * The one way to publish (internal API, CLI, simulator, TypeScript callers): store the event with its fan-out
 * snapshot and its automatic deliveries in one statement. That is the whole of publishing: the events table is
 * an outbox, and a worker's dispatcher starts the delivery workflow (domain/outbox.ts), so an accepted event is
 * delivered even when Temporal is down now, and its ladder is the worker's, whichever process published it.
 * Publishing an id seen before returns the earlier event, never a second delivery.
 */
export async function publishEvent(deps: PublishDeps, input: PublishInput): Promise<PublishedEvent> {
  const { type, data, version } = validateEventInput(input);
  // The operational webhooks' account (domain/operational-webhooks.ts) is no merchant: nothing is published to it.
  if (input.accountId === OPERATIONAL_ACCOUNT_ID)
    throw new ApiError('resource_missing', `No such account: ${input.accountId}.`, { param: 'account_id' });
  const { row, event } = await storeEvent(deps.pool, input, type, data);
  if (row.inserted) countPublished(type, input.livemode);
  const workflowId = row.endpoint_ids.length > 0 ? WORKFLOW_ID.deliverEvent(row.id) : null;
  return {
    event,
    accountId: row.account_id,
    endpointIds: row.endpoint_ids,
    created: row.inserted,
    workflowId,
    inputVersion: version,
  };
}
