import { createHash } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError, type Client } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { SEARCH_ATTRIBUTES, WORKFLOW_ID, type AttemptKind, type DeliverEventInput, type DeliverEventWorkflow } from '../core/delivery-contract';
import { attemptKindFor, localAttemptTaskTimeoutMs } from '../core/delivery-policy';
import { formatDuration } from '../core/durations';
import { attemptIdFromUuid } from '../core/ids';
import { claimUndispatched, markDispatched, OUTBOX_CHANNEL, releaseLeases, type UndispatchedEvent } from '../db/outbox';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';

/**
 * The hand-off of stored events to Temporal (DESIGN.md, "Hand-off"): publishing stores an event and its
 * deliveries (domain/events.ts); a dispatcher in each worker claims what is waiting, starts each event's
 * deliverEvent workflow with the worker's own delivery settings, and marks it dispatched. Starting is
 * idempotent (workflow id `event:<id>`, duplicates rejected), so a claim retried after a crash or a lapsed lease
 * never delivers an event twice.
 */

/** What a dispatcher LISTENs on: the events table's insert trigger notifies it with each waiting event's id. */
export { OUTBOX_CHANNEL };

export interface DispatchDeps {
  pool: Pool;
  temporal: Client;
  /** The worker's: its ladder, timeout and task queue are what every event it starts gets. */
  config: Config;
  /**
   * The client shares its NativeConnection with a worker polling the delivery task queue (one process): the
   * server may then hand the first workflow task straight back with the start (eager workflow start), skipping
   * a trip through matching. A client on its own connection must leave this off (the SDK refuses it).
   */
  eagerStart?: boolean;
  /**
   * Called with each claimed event's workflow input just before its start is asked for: the worker posts attempt
   * 1 there (attempt/early.ts). It must not wait: the start goes out beside it.
   */
  beforeStart?: (input: DeliverEventInput) => void;
  /** Called with the events whose workflows a pass started (or found started), once they are marked dispatched. */
  onDispatched?: (eventIds: string[]) => void;
}

/** How long a claim keeps other dispatchers off an event: well above one start, even a slow one. */
export const DISPATCH_LEASE_MS = 30_000;
/** One start may wait this long for Temporal; the event is claimed again after the lease otherwise. */
export const START_DEADLINE_MS = 10_000;

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

/**
 * Attempt 1's id, the same from every dispatcher that ever claims the event: derived from its delivery's id, so a
 * start retried after a crash names the attempt an earlier dispatcher may have posted (dlv_ + 32 hex digits, like
 * the ids workflows draw).
 */
export function firstAttemptId(deliveryId: string): string {
  return attemptIdFromUuid(createHash('sha256').update(`first-attempt:${deliveryId}`).digest('hex').slice(0, 32));
}

function firstAttemptIds(row: UndispatchedEvent, attemptKind: AttemptKind): Record<string, string> | undefined {
  if (attemptKind !== 'local' || !row.delivery_ids) return undefined;
  const ids = Object.entries(row.delivery_ids).map(([endpointId, deliveryId]) => [endpointId, firstAttemptId(deliveryId)]);
  return ids.length > 0 ? Object.fromEntries(ids) : undefined;
}

export function deliveryInput(row: UndispatchedEvent, config: Config): DeliverEventInput {
  const attemptKind = attemptKindFor(config.delivery.attemptKind, row.endpoint_ids.length);
  const firstIds = firstAttemptIds(row, attemptKind);
  return {
    eventId: row.id,
    eventType: row.type,
    accountId: row.account_id,
    livemode: row.livemode,
    endpointIds: row.endpoint_ids,
    deliveryIds: row.delivery_ids,
    // Read when the workflow starts and carried in its input, so a config change never alters a running ladder.
    retryDelaysMs: config.delivery.retryDelaysMs,
    timeoutMs: config.delivery.timeoutMs,
    failingThreshold: config.delivery.failingThreshold,
    attemptKind,
    ...(firstIds ? { firstAttemptIds: firstIds } : {}),
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
async function startDelivery(deps: DispatchDeps, input: DeliverEventInput, eager: boolean): Promise<void> {
  const start = () =>
    deps.temporal.workflow.start<DeliverEventWorkflow>('deliverEvent', {
      workflowId: WORKFLOW_ID.deliverEvent(input.eventId),
      taskQueue: deps.config.temporal.taskQueue,
      args: [input],
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      requestEagerStart: eager,
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
  try {
    await deps.temporal.withDeadline(Date.now() + START_DEADLINE_MS, start);
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

export interface DispatchResult {
  /** Events claimed in this call. */
  claimed: number;
  /** Of those, started (or found started) and marked dispatched. */
  dispatched: string[];
  /** The first reason a start failed, when one did: those events' leases are given back, to be claimed again. */
  error?: Error;
}

/**
 * Claims up to `limit` waiting events (only `ids` when given) and starts their workflows side by side. The
 * hand-off is marked in one statement for the batch; if that write fails, the next claim starts them again,
 * which finds the workflows started and changes nothing. Events Temporal refused are given back at once: the
 * caller's backoff, not the lease, decides when they are tried again.
 */
export async function dispatchWaiting(
  deps: DispatchDeps,
  input: { ids?: string[]; limit: number; leaseMs?: number },
): Promise<DispatchResult> {
  const leaseMs = input.leaseMs ?? DISPATCH_LEASE_MS;
  const claimed = await claimUndispatched(deps.pool, { ids: input.ids, limit: input.limit, leaseMs });
  // Every start asks to be eager: the SDK asks the server for it only while the worker has a free slot, so a
  // burst beyond the worker's slots goes through matching (worker/worker.ts deliverySlots).
  const eager = deps.eagerStart ?? false;
  const results = await Promise.allSettled(
    claimed.map((row) => {
      const input = deliveryInput(row, deps.config);
      deps.beforeStart?.(input);
      return startDelivery(deps, input, eager);
    }),
  );
  const dispatched = claimed.filter((_, i) => results[i]!.status === 'fulfilled').map((row) => row.id);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  await markDispatched(deps.pool, dispatched);
  if (dispatched.length > 0) deps.onDispatched?.(dispatched);
  // Best effort: a lease not given back only lapses (DISPATCH_LEASE_MS).
  if (failure) await releaseLeases(deps.pool, claimed.filter((_, i) => results[i]!.status === 'rejected').map((row) => row.id)).catch(() => undefined);
  return { claimed: claimed.length, dispatched, ...(failure ? { error: failure.reason as Error } : {}) };
}
