import type { Client } from '@temporalio/client';
import type { DeliverEventInput } from '../core/delivery-contract';
import {
  claimUndispatched,
  deferDeliveries,
  deferEvents,
  claimUndispatchedDeliveries,
  markDeliveriesDispatched,
  markDispatched,
  nextDeliveryDueInMs,
  OUTBOX_CHANNEL,
  releaseDeliveryLeases,
  releaseLeases,
  type AccountRoom,
  type OutboxDeferral,
  type UndispatchedDelivery,
  type UndispatchedEvent,
} from '../db/outbox';
import type { Pool } from '../db/pool';
import type { Config } from '../infra/config';
import { withStoredTrace } from '../infra/tracing';
import { deliveryExpiresAtMs, dispatchLeaseMs } from '../core/delivery-policy';
import { deliveryInput, earlyAttemptIds, startDelivery, type DeliveryStart } from './delivery-start';

/**
 * The hand-off of stored deliveries to Temporal. Publishing stores an event and its automatic deliveries
 * (domain/events.ts); a resend, a recovery or a test event stores deliveries of its own (domain/redelivery.ts).
 * Either only stores, and answers. A dispatcher in each worker claims what is waiting (events, and deliveries
 * that are due), starts each one's deliverEvent workflow with the worker's own delivery settings
 * (domain/delivery-start.ts), and marks it dispatched. Starting is idempotent (workflow ids `event:<evt_id>` and
 * `delivery:<dly_id>`, duplicates rejected), so a claim retried after a crash or a lapsed lease never delivers
 * twice, and anything stored while Temporal is out of reach is started once it answers again.
 */

/** What a dispatcher LISTENs on: the insert triggers notify it with each waiting event's or delivery's id. */
export { OUTBOX_CHANNEL };
export { deliveryInput, earlyAttemptIds, firstAttemptId } from './delivery-start';

export interface DispatchDeps {
  pool: Pool;
  temporal: Client;
  /** The worker's: its ladder, timeout and task queue are what every delivery it starts gets. */
  config: Config;
  /**
   * The client shares its NativeConnection with a worker polling the delivery task queue (one process): the
   * server may then hand the first workflow task straight back with the start (eager workflow start), skipping
   * a trip through matching. A client on its own connection must leave this off (the SDK refuses it).
   */
  eagerStart: boolean;
  /**
   * Called with each claimed workflow input (every trigger) and the attempts 1 the outbox makes itself
   * (delivery-start.ts earlyAttemptIds) before its start is asked for; returns the input to start with. The worker
   * makes those attempts there (attempt/early.ts), and the start goes out once they are on record, carrying their
   * outcomes; a rejection means no start. A promise only when the start waits (on attempts 1): such starts do not
   * count against a pass's own bound.
   */
  beforeStart?: (
    input: DeliverEventInput,
    attemptIds: Record<string, string>,
  ) => DeliverEventInput | Promise<DeliverEventInput>;
  /**
   * Called right before each start with the input it carries and the attempts 1 the outbox was to make: the
   * worker claims those not on record as its workflow's (attempt/early.ts), so a later hand-off of the same row
   * posts none of them, and resolves to the input to start with (undefined: `ready`). A rejection means no start.
   */
  beforeLaunch?: (
    ready: DeliverEventInput,
    attemptIds: Record<string, string>,
  ) => Promise<DeliverEventInput> | undefined;
  /**
   * How many more events of each account the claim may take (the worker's early attempts: an account at its
   * share is claimed no further, and the rest of its backlog waits here). Absent: no account is bounded.
   */
  accountRoom?: () => AccountRoom;
}

/** One start may wait this long for Temporal; the row is claimed again after the lease otherwise. */
export const START_DEADLINE_MS = 10_000;

/** The place a deferred attempt 1 holds (deferral), for the next hand-off to ask with. */
function placeOf(row: {
  first_attempt_place: number | null;
  rate_limit: number | null;
}): Pick<DeliveryStart, 'firstAttemptPlace'> {
  if (row.first_attempt_place === null) return {};
  const place = Number(row.first_attempt_place);
  return { firstAttemptPlace: { untilMs: place * 1000, reservedSecond: place, rateLimit: row.rate_limit } };
}

/**
 * Whether a start should instead wait in the outbox: its attempt 1 was made at hand-off and found no rate token,
 * and its place comes before the delivery's max age. The row is then due again at that place, and the next
 * hand-off makes attempt 1 there: a throttled delivery so costs Temporal nothing while it waits, and one workflow
 * task once posted, as an unthrottled one does. A place past the max age starts the workflow, which gives up.
 * A one-endpoint delivery only: a fan-out's start never waits for one of its endpoints (its other attempts 1 are
 * made and their ladders go on), so a throttled attempt 1 of a fan-out takes its place in its ladder.
 */
function deferral(input: DeliverEventInput, nowMs: number): Omit<OutboxDeferral, 'id'> | undefined {
  const throttles = Object.values(input.firstAttemptThrottles ?? {});
  if (input.endpointIds.length !== 1 || throttles.length !== 1 || input.firstAttemptOutcomes) return undefined;
  const throttle = throttles[0]!;
  const expiresAtMs = deliveryExpiresAtMs(input);
  if (throttle.untilMs <= nowMs || (expiresAtMs !== undefined && throttle.untilMs >= expiresAtMs)) return undefined;
  // Due at the start of its place's second: the second's places are claimed together, in one sweep, and their
  // attempts ask within the part of the second whose tokens are handed out.
  const untilMs = throttle.reservedSecond === null ? throttle.untilMs : throttle.reservedSecond * 1000;
  return { untilMs: Math.max(untilMs, nowMs), place: throttle.reservedSecond };
}

function fromEvent(row: UndispatchedEvent): DeliveryStart {
  return {
    eventId: row.id,
    eventType: row.type,
    accountId: row.account_id,
    livemode: row.livemode,
    trigger: 'automatic',
    endpointIds: row.endpoint_ids,
    deliveryIds: row.delivery_ids,
    ageFromMs: Math.floor(row.stored_at_ms),
    ...placeOf(row),
    ...(row.parcel_id !== null && row.sequence !== null && row.ordered_endpoint_ids.length > 0
      ? { parcelOrder: { parcelId: row.parcel_id, sequence: row.sequence, endpointIds: row.ordered_endpoint_ids } }
      : {}),
  };
}

function fromDelivery(row: UndispatchedDelivery): DeliveryStart {
  return {
    eventId: row.event_id,
    eventType: row.event_type,
    accountId: row.account_id,
    livemode: row.livemode,
    trigger: row.trigger,
    endpointIds: [row.endpoint_id],
    deliveryIds: { [row.endpoint_id]: row.id },
    ageFromMs: Math.floor(row.stored_at_ms),
    ...placeOf(row),
  };
}

export interface DispatchResult {
  /** Rows (events and deliveries) claimed in this call. */
  claimed: number;
  /** Of those, started (or found started) and marked dispatched: event ids and delivery ids. */
  dispatched: string[];
  /** Of those, sent back to wait for their attempt 1's rate-limit place (deferral). */
  deferred: string[];
  /** The first reason a start failed, when one did: those rows' leases are given back, to be claimed again. */
  error?: Error;
}

/** One table of the outbox: how its waiting rows are claimed, turned into starts, and marked. */
interface OutboxTable<Row extends { id: string; trace_parent: string | null }> {
  claim(pool: Pool, input: { ids?: string[]; limit: number; leaseMs: number; room?: AccountRoom }): Promise<Row[]>;
  start(row: Row): DeliveryStart;
  mark(pool: Pool, ids: string[]): Promise<void>;
  release(pool: Pool, ids: string[]): Promise<void>;
  defer(pool: Pool, rows: OutboxDeferral[]): Promise<void>;
}

const EVENTS: OutboxTable<UndispatchedEvent> = {
  claim: claimUndispatched,
  start: fromEvent,
  mark: markDispatched,
  release: releaseLeases,
  defer: deferEvents,
};
const DELIVERIES: OutboxTable<UndispatchedDelivery> = {
  claim: claimUndispatchedDeliveries,
  start: fromDelivery,
  mark: markDeliveriesDispatched,
  release: releaseDeliveryLeases,
  defer: deferDeliveries,
};

/**
 * Claims up to `limit` waiting rows of one table and starts their workflows side by side. The hand-off is
 * marked in one statement for the batch; if that write fails, the next claim starts them again, which finds the
 * workflows started and changes nothing. Rows Temporal refused are given back at once: the caller's backoff,
 * not the lease, decides when they are tried again.
 */
async function dispatchTable<Row extends { id: string; trace_parent: string | null }>(
  deps: DispatchDeps,
  table: OutboxTable<Row>,
  input: { ids?: string[]; limit: number; leaseMs: number; onStartsAnswered?: () => void },
): Promise<DispatchResult> {
  let claimed: Row[];
  let results: PromiseSettledResult<OutboxDeferral | undefined>[];
  try {
    claimed = await table.claim(deps.pool, { ...input, room: deps.accountRoom?.() });
    // Every start asks to be eager: the SDK asks the server for it only while the worker has a free slot, so a
    // burst beyond the worker's slots goes through matching (worker/worker.ts deliverySlots).
    const options = {
      taskQueue: deps.config.temporal.taskQueue,
      eager: deps.eagerStart,
      deadlineMs: START_DEADLINE_MS,
    };
    const prepared: Array<DeliverEventInput | Promise<DeliverEventInput>> = [];
    // A start whose attempt 1 took a rate-limit place waits for it in the outbox instead (deferral).
    const launch = async (ready: DeliverEventInput, row: Row, attemptIds: Record<string, string>) => {
      const later = deferral(ready, Date.now());
      if (later) return { id: row.id, ...later };
      const launched = (await deps.beforeLaunch?.(ready, attemptIds)) ?? ready;
      await startDelivery(deps.temporal, launched, options);
      return undefined;
    };
    // Each row's hand-off (its early attempt included) continues the trace its publish stored (infra/tracing.ts);
    // withStoredTrace runs its function at once, so prepared[i] is row i's input.
    const starts = claimed.map((row) =>
      withStoredTrace(row.trace_parent, 'outbox hand-off', { 'parcel.outbox.row': row.id }, () => {
        const workflowInput = deliveryInput(table.start(row), deps.config);
        const attemptIds = earlyAttemptIds(workflowInput);
        const toStart = deps.beforeStart ? deps.beforeStart(workflowInput, attemptIds) : workflowInput;
        prepared.push(toStart);
        return toStart instanceof Promise
          ? toStart.then((ready) => launch(ready, row, attemptIds))
          : launch(toStart, row, attemptIds);
      }),
    );
    // Starts that wait for their first attempt are bounded by the early attempts' own limit; the rest by the pass.
    await Promise.allSettled(starts.filter((_, i) => !(prepared[i] instanceof Promise)));
    input.onStartsAnswered?.();
    results = await Promise.allSettled(starts);
  } finally {
    input.onStartsAnswered?.();
  }
  const later = results.flatMap((r) => (r.status === 'fulfilled' && r.value ? [r.value] : []));
  const dispatched = claimed
    .filter((_, i) => results[i]!.status === 'fulfilled' && !(results[i] as PromiseFulfilledResult<unknown>).value)
    .map((row) => row.id);
  const failure = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  await Promise.all([table.mark(deps.pool, dispatched), table.defer(deps.pool, later)]);
  // Best effort: a lease not given back only lapses (core/delivery-policy.ts dispatchLeaseMs).
  if (failure)
    await table
      .release(
        deps.pool,
        claimed.filter((_, i) => results[i]!.status === 'rejected').map((row) => row.id),
      )
      .catch(() => undefined);
  return {
    claimed: claimed.length,
    dispatched,
    deferred: later.map((row) => row.id),
    ...(failure ? { error: failure.reason as Error } : {}),
  };
}

const isDeliveryId = (id: string) => id.startsWith('dly_');

/**
 * Claims and starts what is waiting: up to `limit` events and up to `limit` due deliveries, or only `ids` when
 * given (event and delivery ids, as the notifications carry them).
 */
export async function dispatchWaiting(
  deps: DispatchDeps,
  input: {
    ids?: string[];
    limit: number;
    leaseMs?: number;
    /**
     * Called when Temporal has answered every start that was not waiting for its first attempt (beforeStart), or
     * the call failed: from then on the call only waits for those, and the caller may claim more beside it.
     * Called more than once; the caller acts on the first.
     */
    onStartsAnswered?: () => void;
  },
): Promise<DispatchResult> {
  const leaseMs = input.leaseMs ?? dispatchLeaseMs(deps.config.delivery.timeoutMs);
  const eventIds = input.ids?.filter((id) => !isDeliveryId(id));
  const deliveryIds = input.ids?.filter(isDeliveryId);
  const tables = (eventIds?.length === 0 ? 0 : 1) + (deliveryIds?.length === 0 ? 0 : 1);
  // The caller hears once both tables' immediate starts are answered.
  let unanswered = tables;
  const onceAnswered = () => {
    let called = false;
    return () => {
      if (called) return;
      called = true;
      if (--unanswered === 0) input.onStartsAnswered?.();
    };
  };
  if (tables === 0) input.onStartsAnswered?.();
  const [events, deliveries] = await Promise.all([
    eventIds?.length === 0
      ? undefined
      : dispatchTable(deps, EVENTS, { ids: eventIds, limit: input.limit, leaseMs, onStartsAnswered: onceAnswered() }),
    deliveryIds?.length === 0
      ? undefined
      : dispatchTable(deps, DELIVERIES, {
          ids: deliveryIds,
          limit: input.limit,
          leaseMs,
          onStartsAnswered: onceAnswered(),
        }),
  ]);
  const done = [events, deliveries].filter((pass): pass is DispatchResult => pass !== undefined);
  const dispatched = done.flatMap((pass) => pass.dispatched);
  const deferred = done.flatMap((pass) => pass.deferred);
  const error = done.find((pass) => pass.error)?.error;
  return {
    claimed: done.reduce((sum, pass) => sum + pass.claimed, 0),
    dispatched,
    deferred,
    ...(error ? { error } : {}),
  };
}

/** When the next waiting row may be claimed (db/outbox.ts nextDeliveryDueInMs), in ms from now; null when none waits. */
export function nextDueInMs(deps: Pick<DispatchDeps, 'pool'>): Promise<number | null> {
  return nextDeliveryDueInMs(deps.pool);
}
