import { recordForHistory, type AttemptOutcome, type SignAndPostInput } from '../core/delivery-contract';
import {
  heldRecheckMs,
  SIGN_AND_POST_MARGIN_MS,
  THROTTLE_HOLD_MAX_MS,
  THROTTLE_HOLD_MS,
  THROTTLE_HOLDS,
  THROTTLE_WAKE_MARGIN_MS,
  throttleWaitMs,
} from '../core/delivery-policy';
import type { AttemptDeps } from './deps';
import { isDependencyOutage } from '../infra/outages';
import { logOf } from './deps';
import { attemptLost, attemptReadFailed, databaseUnavailable } from './failures';
import { runAttempt } from './run';
import { recordedOutcome } from './settle';
import { withinDeadline } from './deadline';
import { claimHolder, isEarlyRun } from './claim';

export type TryDeps = AttemptDeps;

/** Room kept between a try's end and its timeout (the workflow's: timeout + margin), for its answer to travel. */
const TRY_END_SAFETY_MS = 500;

/**
 * The workflow's try of an attempt (the signAndPost activity). Temporal never retries it: a failure after posting
 * must not post again, so it returns a typed outcome, and throws only typed failures that say nothing was posted
 * (the workflow tries the same attempt again) or that another run may have (the attempt is lost).
 */
export async function workflowTry(deps: TryDeps, input: SignAndPostInput): Promise<AttemptOutcome> {
  const endsAt = Date.now() + input.timeoutMs + SIGN_AND_POST_MARGIN_MS - TRY_END_SAFETY_MS;
  let request = input;
  let run = await runAttempt(deps, request, 'workflow');
  // A place reserved for a second that begins within THROTTLE_HOLD_MAX_MS is waited for here, not on a timer: a
  // timer's wake-up reaches the database hundreds of milliseconds late (the server's timer queue, a workflow task,
  // this try), and a place asked for that late in its second would be put off to the next one, and the next. And a
  // due place put off to a coming second (its second's tokens gone to others asking late, as a backlog does) waits
  // for it here too: a timer would cost a workflow task per put-off, the very capacity the backlog lacks.
  for (
    let holds = 0;
    run.kind === 'throttled' && run.throttle.reservedSecond !== null && holds < THROTTLE_HOLDS;
    holds++
  ) {
    const aheadMs = run.throttle.untilMs - Date.now();
    if (aheadMs > THROTTLE_HOLD_MAX_MS || Date.now() + Math.max(0, aheadMs) + THROTTLE_HOLD_MS >= endsAt) break;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, aheadMs) + THROTTLE_WAKE_MARGIN_MS));
    const notPostedRuns = run.run ? [...(request.notPostedRuns ?? []), run.run] : request.notPostedRuns;
    request = { ...request, reservedSecond: run.throttle.reservedSecond, ...(notPostedRuns ? { notPostedRuns } : {}) };
    run = await runAttempt(deps, request, 'workflow');
  }
  switch (run.kind) {
    case 'posted':
      return forHistory(run.outcome);
    case 'skipped':
      return { kind: 'skipped', reason: run.reason };
    case 'throttled': {
      // The wait is measured here, on the clock that just compared with the database's, and lands in history.
      // A reserved place wakes the workflow a hold early: the try then waits for the second itself (above).
      const { untilMs, reservedSecond, rateLimit } = run.throttle;
      const waitMs = throttleWaitMs(run.throttle, Date.now());
      return {
        kind: 'throttled',
        untilMs,
        waitMs,
        reservedSecond,
        rateLimit,
        ...(run.run ? { notPostedRun: run.run } : {}),
      };
    }
    case 'held': {
      // Paused by its owner: not an attempt, no place held; the workflow checks again later, spread at random.
      const waitMs = heldRecheckMs(run.pausedForMs, Math.random());
      const now = Date.now();
      return {
        kind: 'throttled',
        untilMs: now + waitMs,
        waitMs,
        reservedSecond: null,
        rateLimit: null,
        pausedSinceMs: now - run.pausedForMs,
      };
    }
    case 'notPosted':
      // Only our database being unreachable makes the same attempt wait and try again; anything else is a bug,
      // reported with ids only (an error's message may quote a value), and that attempt fails.
      if (isDependencyOutage(run.error)) throw databaseUnavailable(run.error, run.run);
      logOf(deps).error('attempt read failed, not an outage: recorded as internal_error', {
        endpointId: input.endpointId,
        attemptId: input.attemptId,
        error: run.error.name,
        code: (run.error as { code?: unknown }).code,
      });
      throw attemptReadFailed(run.error);
    case 'claimed': {
      // Another run holds the attempt. A workflow started before the outbox owned attempt 1 may meet its attempt 1
      // claimed by the dispatcher's early try, whose record, once written, is this attempt's outcome. Any other
      // run (a re-run of a local try whose workflow task was lost) may have posted: the attempt is lost.
      const holder = await withinDeadline(claimHolder(deps.pool, input.attemptId), 'reading the claim').catch(
        (err: unknown) => {
          throw databaseUnavailable(err, undefined);
        },
      );
      if (holder && isEarlyRun(holder.run) && holder.recorded) return recordedOutcome(holder, run.url);
      throw attemptLost(input.attemptId);
    }
  }
}

/**
 * The try's outcome is history: an answer not yet on record goes to the recordAttempt activity without its body
 * (the receiver's answer may echo the posted event). The early try's own writer, in memory, keeps the body.
 */
function forHistory(outcome: AttemptOutcome): AttemptOutcome {
  if (outcome.kind !== 'attempted' || !outcome.record) return outcome;
  return { ...outcome, record: recordForHistory(outcome.record) };
}
