import {
  ActivityFailure,
  ApplicationFailure,
  isCancellation,
  log,
  makeContinueAsNewFunc,
  patched,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import {
  attemptInput,
  attemptRecord,
  FAILURE,
  NOT_POSTED_FAILURES,
  notPostedRun,
  throttleWait,
  type ExpiryRecord,
  type AttemptOutcome,
  type DeliverEventInput,
  type DeliverEventResult,
  type DeliveryActivities,
  type LadderResult,
  type ParcelWaitState,
  type SignAndPostInput,
  type Throttled,
} from '../core/delivery-contract';
import {
  DB_UNAVAILABLE_INITIAL_BACKOFF_MS,
  DB_UNAVAILABLE_MAX_BACKOFF_MS,
  deliveryExpiresAtMs,
  heldRecheckFactor,
  localAttempts,
  localAttemptTaskTimeoutMs,
  NOTIFY_SUPERVISOR_TIMEOUT,
  RECORD_ATTEMPT_RETRY,
  RECORD_ATTEMPT_TIMEOUT,
  SIGN_AND_POST_MARGIN_MS,
} from '../core/delivery-policy';
import { formatDuration } from '../core/durations';
import { attemptIdFromUuid } from '../core/ids';
import { telemetryUrl } from '../core/telemetry-url';
import { DatabaseGate } from './database-gate';
import { hasExpired, sleepWithinMaxAge } from './max-age';
import { ParcelLanes, type ParkedLadder } from './parcel-order';

const { recordAttempt } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: RECORD_ATTEMPT_TIMEOUT,
  retry: RECORD_ATTEMPT_RETRY,
});

// Options are set per call (executeWithOptions): the timeout follows each event's own config.
const { signAndPost } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 1 },
});

// The same activity run inside the workflow task: how a one-ladder workflow made its attempts before
// ATTEMPTS_AS_ACTIVITIES, kept for such workflows still running. A local try claims its attempt
// (attempt/claim.ts), so a re-run after a lost workflow task never posts again.
const { signAndPost: signAndPostLocally } = proxyLocalActivities<DeliveryActivities>({
  startToCloseTimeout: '15s',
  retry: { maximumAttempts: 1 },
});

const { recordExpiry } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: RECORD_ATTEMPT_TIMEOUT,
  retry: RECORD_ATTEMPT_RETRY,
});

const { notifySupervisor } = proxyActivities<DeliveryActivities>({
  startToCloseTimeout: NOTIFY_SUPERVISOR_TIMEOUT,
  retry: RECORD_ATTEMPT_RETRY,
});

/**
 * Every attempt a workflow makes is a regular activity: a receiver slow to answer holds an activity slot, and the
 * workflow task that scheduled it ends at once, so one account's slow receiver never holds the workflow tasks
 * every other delivery of the worker needs. A one-ladder workflow without this marker in its history made its
 * attempts as local activities (localAttempts) and keeps doing so where its history says it did.
 */
const ATTEMPTS_AS_ACTIVITIES = 'attempts-as-activities';

function attemptsRunLocally(ladders: number): boolean {
  return localAttempts(ladders) && !patched(ATTEMPTS_AS_ACTIVITIES);
}

/**
 * A held attempt's re-check is longer by the number of this workflow's ladders held at that moment, not by all
 * its ladders: a fan-out with one paused endpoint re-checks it as often as a one-endpoint delivery does, so it
 * goes out as soon after the resume. A workflow without this marker keeps multiplying by every ladder.
 */
const HELD_RECHECK_PER_HELD_LADDER = 'held-recheck-per-held-ladder';

/** The ladders of one workflow whose attempt waits, held by its paused endpoint. */
type HeldLadders = Set<string>;

type Attempted = Extract<AttemptOutcome, { kind: 'attempted' }>;

/**
 * The failure under an attempt's error: a regular activity's comes wrapped in an ActivityFailure, a local
 * activity's arrives as itself.
 */
function attemptFailure(err: unknown): unknown {
  return err instanceof ActivityFailure ? err.cause : err;
}

function failureType(err: unknown): string | undefined {
  const failure = attemptFailure(err);
  return failure instanceof ApplicationFailure ? (failure.type ?? undefined) : undefined;
}

function isNotPosted(err: unknown): boolean {
  return NOT_POSTED_FAILURES.includes(failureType(err) ?? '');
}

/** The backoff timer's summary: why the attempt was not posted, and when it is tried again. */
function notPostedSummary(err: unknown, attempt: number, backoffMs: number): string {
  const why = failureType(err) === FAILURE.earlyAttemptUndecided ? 'early attempt undecided' : 'database unavailable';
  return `${why}: retry attempt ${attempt} in ${formatDuration(backoffMs)}`;
}

/**
 * The throttle timer's summary: which attempt waits, for what, and until when (UTC, to the second); `held:` when
 * its endpoint is paused (`held: attempt 2/6 to we_... waits while its endpoint is paused (since 12:00:00), checks
 * again at 12:05:00`).
 */
function throttledSummary(throttled: Throttled, label: string): string {
  return `${throttled.pausedSinceMs === undefined ? 'throttled' : 'held'}: ${label} ${throttleWait(throttled)}`;
}

/** The execution a try's not-posted failure names (its details); undefined when the try claimed nothing. */
function runOf(err: unknown): string | undefined {
  const failure = attemptFailure(err);
  return failure instanceof ApplicationFailure ? notPostedRun(failure.details) : undefined;
}

/**
 * The activity itself failed (worker killed mid-post: start-to-close timeout). Whatever happened on the wire,
 * the attempt is recorded as failed unless the lost worker had already written the real record.
 */
async function recordLostAttempt(input: SignAndPostInput, err: unknown, activityTimeoutMs: number): Promise<Attempted> {
  // A local try that found the attempt run by a lost worker (or by an early try surely dead) reports the same
  // loss a regular attempt's timeout does.
  const timedOut = failureType(err) === FAILURE.attemptLost || attemptFailure(err) instanceof TimeoutFailure;
  const record = attemptRecord(input, {
    statusCode: null,
    responseBody: null,
    error: timedOut ? 'timeout' : 'internal_error',
    durationMs: activityTimeoutMs,
    succeeded: false,
  });
  const stored = await recordAttempt(record);
  // A success here was written by the lost worker, which may have cleared the endpoint's streak without living
  // to tell the supervisor: tell it now (this path is rare, and resetting a count of zero changes nothing).
  const recovered = stored.recovered || stored.succeeded;
  return {
    kind: 'attempted',
    ...stored,
    recovered,
    statusCode: null,
    error: record.error,
    durationMs: activityTimeoutMs,
    url: '',
    recorded: true,
  };
}

type Decided = Exclude<AttemptOutcome, Throttled>;

/**
 * A wait of the attempt (its throttle, a database backoff) ran into the delivery's max age: nothing was posted.
 * `reservedSecond` is the place in its endpoint's rate-limit queue it held then, which the give-up releases.
 */
interface Expired {
  kind: 'expired';
  reservedSecond?: number;
}

function expired(reservedSecond: number | null | undefined): Expired {
  return reservedSecond == null ? { kind: 'expired' } : { kind: 'expired', reservedSecond };
}

/**
 * One attempt, whatever our own database does: retried until it was either posted or skipped. While the
 * database is down, one ladder of the event probes and the rest wait at the gate. An attempt throttled by its
 * endpoint's rate limit or Retry-After waits on a timer (holding no slot and no claim) and is tried again with
 * the token it reserved; that wait is not an attempt.
 */
async function attemptOnce(
  input: SignAndPostInput,
  local: boolean,
  labels: { summary: string; throttle: string },
  gate: DatabaseGate,
  expiresAtMs: number | undefined,
  ladders: number,
  held: HeldLadders,
): Promise<Decided | Expired> {
  const { summary } = labels;
  const activityTimeoutMs = input.timeoutMs + SIGN_AND_POST_MARGIN_MS;
  const ladder = input.endpointId;
  let backoffMs = DB_UNAVAILABLE_INITIAL_BACKOFF_MS;
  let tries = 0;
  // Executions of this attempt that this history shows posted nothing; a try may take over their claims and no
  // other (a re-run of a local try whose workflow task was lost does not know what the lost run did).
  const notPostedRuns: string[] = [];
  try {
    for (;;) {
      await gate.waitTurn(ladder);
      if (hasExpired(expiresAtMs)) return expired(input.reservedSecond);
      try {
        // The ladder is the only retry: Temporal must never post twice on its own.
        const options = { startToCloseTimeout: activityTimeoutMs, retry: { maximumAttempts: 1 }, summary };
        // Every try claims the attempt, local or regular: a local try run again after a lost workflow task must not
        // post again.
        const request = { ...input, claimTry: tries++, notPostedRuns: [...notPostedRuns] };
        const outcome = local
          ? await signAndPostLocally.executeWithOptions(options, [request])
          : await signAndPost.executeWithOptions(options, [request]);
        gate.release(ladder);
        if (outcome.kind === 'throttled' && outcome.pausedSinceMs !== undefined) held.add(ladder);
        else held.delete(ladder);
        if (outcome.kind === 'throttled') {
          if (outcome.notPostedRun !== undefined) notPostedRuns.push(outcome.notPostedRun);
          // A held attempt (its endpoint paused) re-checks less often the more ladders are held in this history.
          const waitMs =
            outcome.pausedSinceMs === undefined
              ? outcome.waitMs
              : outcome.waitMs * heldRecheckFactor(patched(HELD_RECHECK_PER_HELD_LADDER) ? held.size : ladders);
          const wait = { ...outcome, untilMs: outcome.untilMs - outcome.waitMs + waitMs };
          if (!(await sleepWithinMaxAge(expiresAtMs, waitMs, throttledSummary(wait, labels.throttle))))
            return expired(outcome.reservedSecond);
          input = { ...input, reservedSecond: outcome.reservedSecond ?? undefined };
          continue;
        }
        if (outcome.kind === 'attempted' && !outcome.recorded && outcome.record) {
          const stored = await recordAttempt(outcome.record);
          // Another writer may have written first (an early try met by a workflow started before the outbox owned
          // attempt 1), clearing the endpoint's failing mark without telling anyone: a success tells the
          // supervisor (a no-op if unset).
          const recovered = stored.recovered || (outcome.early === true && stored.succeeded);
          return { ...outcome, ...stored, recovered, recorded: true, record: undefined };
        }
        return outcome;
      } catch (err) {
        // An operator cancelling the delivery stops it; it is not a lost attempt.
        if (isCancellation(err)) throw err;
        if (!isNotPosted(err)) {
          gate.release(ladder);
          return await recordLostAttempt(input, err, activityTimeoutMs);
        }
        const run = runOf(err);
        if (run !== undefined) notPostedRuns.push(run);
        if (!gate.claim(ladder)) continue;
        log.warn('attempt not posted, retrying', { endpointId: input.endpointId, type: failureType(err), backoffMs });
        if (!(await sleepWithinMaxAge(expiresAtMs, backoffMs, notPostedSummary(err, input.attempt, backoffMs))))
          return expired(input.reservedSecond);
        backoffMs = Math.min(backoffMs * 2, DB_UNAVAILABLE_MAX_BACKOFF_MS);
      }
    }
  } finally {
    gate.release(ladder);
    held.delete(ladder);
  }
}

/**
 * The delivery is given up at its max age before attempt `n` (the id drawn for it names the log's entry): its
 * delivery ends failed with the reason `expired`, and nothing more is posted. The rate-limit place it held, if
 * any, is given back in the same write.
 */
async function giveUp(
  input: DeliverEventInput,
  endpointId: string,
  n: number,
  attemptId: string,
  reservedSecond?: number | null,
): Promise<LadderResult> {
  const { attemptId: id, timeoutMs: _timeout, ...identity } = attemptInput(input, endpointId, n, attemptId);
  const record: ExpiryRecord = { id, ...identity, ...(reservedSecond == null ? {} : { reservedSecond }) };
  await recordExpiry(record);
  log.info('delivery expired', { eventId: input.eventId, endpointId, attempt: n });
  return { endpointId, outcome: 'expired', attempts: n - 1 };
}

function attemptSummary(n: number, total: number, target: string): string {
  return `attempt ${n}/${total} POST ${target}`;
}

async function runLadder(
  input: DeliverEventInput,
  endpointId: string,
  gate: DatabaseGate,
  held: HeldLadders,
): Promise<LadderResult> {
  const total = input.retryDelaysMs.length + 1;
  const expiresAtMs = deliveryExpiresAtMs(input);
  let url: string | undefined;
  for (let n = 1; n <= total; n++) {
    // Generated here, not in the activity, so an attempt lost with its worker keeps its id. Attempt 1 of a
    // workflow whose input names it (started before the outbox owned attempt 1) takes that one; uuid4() is drawn
    // for every attempt all the same, so attempt n's id never depends on whether attempt 1's was named.
    const drawn = attemptIdFromUuid(uuid4());
    const attemptId = (n === 1 ? input.firstAttemptIds?.[endpointId] : undefined) ?? drawn;
    // Attempt 1 whose place in a rate-limit queue the dispatcher took before a delayed start asks for that place.
    const place = n === 1 ? input.firstAttemptThrottles?.[endpointId]?.reservedSecond : undefined;
    const request = {
      ...attemptInput(input, endpointId, n, attemptId),
      ...(place == null ? {} : { reservedSecond: place }),
    };
    const labels = {
      summary: attemptSummary(n, total, url ?? endpointId),
      throttle: `attempt ${n}/${total} to ${endpointId}`,
    };
    // Attempt 1 made by the dispatcher and on record before the start (attempt/early.ts handOff) is taken as is.
    const decided = n === 1 ? input.firstAttemptOutcomes?.[endpointId] : undefined;
    // Every wait before it ended at the latest at the max age: past it, the delivery is given up, not posted.
    if (decided === undefined && hasExpired(expiresAtMs)) return giveUp(input, endpointId, n, attemptId, place);
    const outcome =
      decided ??
      (await attemptOnce(
        request,
        attemptsRunLocally(input.endpointIds.length),
        labels,
        gate,
        expiresAtMs,
        input.endpointIds.length,
        held,
      ));
    if (outcome.kind === 'expired') return giveUp(input, endpointId, n, attemptId, outcome.reservedSecond);
    if (outcome.kind === 'skipped') return { endpointId, outcome: 'skipped', attempts: n - 1, reason: outcome.reason };
    url = telemetryUrl(outcome.url) || url;
    // 410 Gone disabled the endpoint with this record (domain/endpoint-lifecycle.ts): no retry, no abandonment to
    // count. Only an outcome recorded by this release says so; an older history never takes this turn.
    if (outcome.gone === true && !outcome.succeeded) return { endpointId, outcome: 'gone', attempts: n };
    if (outcome.succeeded) {
      if (outcome.recovered) {
        await notifySupervisor({
          endpointId,
          failingThreshold: input.failingThreshold,
          url,
          signal: { kind: 'deliverySucceeded', eventId: input.eventId },
        });
      }
      return { endpointId, outcome: 'delivered', attempts: n };
    }
    const delay = input.retryDelaysMs[n - 1];
    if (delay !== undefined) {
      // An answer's Retry-After may ask for longer than the ladder; never for less.
      const wait = Math.max(delay, outcome.retryAfterMs ?? 0);
      const why = wait > delay ? ' (Retry-After)' : '';
      // Cut short at the max age, the next turn of the loop gives the delivery up.
      await sleepWithinMaxAge(
        expiresAtMs,
        wait,
        `retry ${n + 1}/${total} of ${endpointId} in ${formatDuration(wait)}${why}`,
      );
    }
  }
  await notifySupervisor({
    endpointId,
    failingThreshold: input.failingThreshold,
    url,
    signal: { kind: 'abandoned', eventId: input.eventId, attemptCount: total },
  });
  return { endpointId, outcome: 'abandoned', attempts: total };
}

/**
 * One event, one workflow (workflow id `event:<id>`): a ladder per endpoint of the publish-time snapshot,
 * side by side. Attempts are activities Temporal never retries; the gaps are durable timers. A ladder to an
 * endpoint that keeps order per parcel starts in its turn (workflows/parcel-order.ts).
 */
export async function deliverEvent(input: DeliverEventInput): Promise<DeliverEventResult> {
  const gate = new DatabaseGate();
  const held: HeldLadders = new Set();
  const lanes = new ParcelLanes(input);
  const results = await Promise.all(
    input.endpointIds.map((endpointId) => lanes.run(endpointId, () => runLadder(input, endpointId, gate, held))),
  );
  const endpoints = [...(input.endedLadders ?? []), ...results.filter((r): r is LadderResult => !('parked' in r))];
  const parked = results.filter((r): r is ParkedLadder => 'parked' in r);
  // Ladders still waiting their turn past the re-check bound, every other ladder ended: a new run takes them over.
  if (parked.length > 0) {
    const parcelWaits: Record<string, ParcelWaitState> = Object.fromEntries(
      parked.map((p) => [p.endpointId, p.parked]),
    );
    const endpointIds = parked.map((p) => p.endpointId);
    // The new run holds the parked ladders only: one left gets the workflow task timeout of a one-ladder start,
    // whose local steps (its parcel lane's checks) run inside the task.
    const workflowTaskTimeout = localAttempts(endpointIds.length)
      ? localAttemptTaskTimeoutMs(input.timeoutMs)
      : workflowInfo().taskTimeoutMs;
    const next = makeContinueAsNewFunc<typeof deliverEvent>({ workflowTaskTimeout });
    await next({ ...input, endpointIds, endedLadders: endpoints, parcelWaits });
  }
  return { eventId: input.eventId, endpoints };
}
