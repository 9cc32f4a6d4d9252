import {
  attemptInput,
  type AttemptOutcome,
  type DeliverEventInput,
  type FirstAttemptOutcome,
  type FirstAttemptThrottle,
  type SignAndPostInput,
} from '../core/delivery-contract';
import { EARLY_RECORD_DRAIN_MS } from '../core/delivery-policy';
import type { AttemptDeps } from './deps';
import { recordUntilAnswered } from './record';
import { runAttempt } from './run';

/**
 * Early first attempts (DELIVERY_EARLY_FIRST_ATTEMPT, on by default). The outbox dispatcher learns of an event
 * within a millisecond of its commit, but its workflow reaches its first attempt only after Temporal has stored
 * the start, handed back the first task and the worker has built the workflow. So for a one-endpoint local
 * delivery the dispatcher makes attempt 1 itself under the attempt id fixed at hand-off
 * (DeliverEventInput.firstAttemptIds), through the same pipeline as the workflow's try (run.ts).
 *
 * Then, by default (DELIVERY_START_AFTER_FIRST_ATTEMPT), the start waits for it (handOff): an attempt 1 that
 * ended on record rides in the start's input (DeliverEventInput.firstAttemptOutcomes), and the workflow's first
 * task ends the ladder or waits for attempt 2 without a local activity: one workflow activation instead of two,
 * and no marker. An attempt 1 held back by its endpoint's rate limit or Retry-After takes its place in the queue
 * here and rides in the input as that place (DeliverEventInput.firstAttemptThrottles): the start is delayed until
 * it, so a throttled delivery costs one workflow task, not a task to take its place and another to post. An
 * attempt 1 that did not end on record otherwise (Postgres did not answer, another run holds the claim) starts
 * the workflow as it is, and its try meets the attempt as it would beside the start (what it meets is in
 * index.ts). With the setting off, the start goes out beside the attempt (begin), which takes no place in a
 * rate-limit queue, and the try adopts its outcome or takes the place itself.
 */

/**
 * What an early attempt came to: its outcome when it posted (or skipped), else nothing was posted, and
 * `notPostedRun` names the claim it may have left, which the workflow's try may take; `throttle` is the place it
 * took in its endpoint's queue when it was asked to (handOff), claiming nothing.
 */
export type EarlyAttemptResult =
  | { outcome: AttemptOutcome; notPostedRun?: undefined; throttle?: undefined }
  | { outcome?: undefined; notPostedRun?: string; throttle?: FirstAttemptThrottle };

export interface EarlyAttemptSource {
  /** The early attempt of this id made in this process, once; undefined when it made none. */
  take(attemptId: string): Promise<EarlyAttemptResult> | undefined;
}

export interface EarlyAttempts extends EarlyAttemptSource {
  /**
   * Makes attempt 1 of this delivery now, when it is one to make early and there is room; never waits. Returns
   * what the attempt comes to (also when it was made before), or undefined when none is made.
   */
  begin(input: DeliverEventInput): Promise<EarlyAttemptResult> | undefined;
  /**
   * Makes attempt 1 as begin does and waits for it (at most its own span: the post's timeout, one record
   * write). Resolves with the input to start the workflow with: carrying the outcome when it is on record, or
   * the place it took when throttled. The input itself, at once, when no early attempt is made (not one to make
   * early, or no room).
   */
  handOff(input: DeliverEventInput): DeliverEventInput | Promise<DeliverEventInput>;
  /** Early attempts under way (posting, or holding an answer not yet recorded). */
  inFlight(): number;
  /** Resolves when every early post has ended and every unrecorded answer was written or given up (bounded). */
  drain(): Promise<void>;
}

export interface EarlyAttemptsOptions {
  /** Early attempts under way at once; past it the workflow's own try makes attempt 1 (as the worker's slots). */
  maxInFlight: number;
}

/** How long an outcome no try took is kept (a first task that went to another worker): long past any try. */
const UNCLAIMED_KEEP_MS = 120_000;

/** What a start may carry as attempt 1: only an outcome already on record, trimmed to what the ladder reads. */
export function recordedFirstAttempt(result: EarlyAttemptResult): FirstAttemptOutcome | undefined {
  const outcome = result.outcome;
  if (outcome?.kind === 'skipped') return outcome;
  if (outcome?.kind !== 'attempted' || !outcome.recorded) return undefined;
  const { statusCode, error, durationMs, url, succeeded, recovered, retryAfterMs } = outcome;
  return { kind: 'attempted', statusCode, error, durationMs, url, succeeded, recovered, recorded: true, early: true, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) };
}

/**
 * One early attempt. Whatever keeps it from posting (a claim already held, our database, an endpoint to skip,
 * no rate token this second) is left to the workflow's try, which meets it again. An answer it could not record
 * is handed back at once (a try in this process records it through the recordAttempt activity) and written on in
 * the background until Postgres answers (`write`), for a try in another process to adopt.
 */
async function earlyAttempt(
  deps: AttemptDeps,
  input: SignAndPostInput,
  reserve: boolean,
  write: (work: Promise<unknown>) => void,
  stopped: () => boolean,
): Promise<EarlyAttemptResult> {
  const run = await runAttempt(deps, input, 'early', reserve);
  switch (run.kind) {
    case 'posted':
      if (!run.outcome.recorded && run.outcome.record) write(recordUntilAnswered(deps.pool, run.outcome.record, stopped));
      return { outcome: { ...run.outcome, early: true } };
    case 'skipped':
      return { outcome: { kind: 'skipped', reason: run.reason } };
    case 'notPosted':
      return { notPostedRun: run.run };
    // No token this second: the place reserved (when asked to reserve), for the start to wait for; else the
    // workflow's try asks again and reserves one. A token that came too late had been claimed with: the claim is
    // given back, and named so a try in this process may take it regardless (the try asks again at once).
    case 'throttled': {
      if (run.run) return { notPostedRun: run.run };
      if (!reserve) return {};
      const { untilMs, reservedSecond, rateLimit } = run.throttle;
      return { throttle: { untilMs, reservedSecond, rateLimit } };
    }
    case 'claimed':
      return {};
  }
}

export function createEarlyAttempts(deps: AttemptDeps, options: EarlyAttemptsOptions): EarlyAttempts {
  const made = new Map<string, Promise<EarlyAttemptResult>>();
  const running = new Set<Promise<unknown>>();
  let stopped = false;
  const track = (work: Promise<unknown>) => {
    running.add(work);
    void work.catch(() => undefined).finally(() => running.delete(work));
  };

  const make = (input: DeliverEventInput, reserve: boolean): Promise<EarlyAttemptResult> | undefined => {
    if (input.attemptKind !== 'local' || !input.firstAttemptIds || input.endpointIds.length !== 1) return undefined;
    const endpointId = input.endpointIds[0]!;
    const attemptId = input.firstAttemptIds[endpointId];
    if (!attemptId) return undefined;
    // Already made here (a start retried after Temporal refused it): its outcome stands.
    const before = made.get(attemptId);
    if (before || running.size >= options.maxInFlight || stopped) return before;
    // Attempt 1 deferred to its rate-limit place at an earlier hand-off (domain/outbox.ts) asks with that place.
    const place = input.firstAttemptThrottles?.[endpointId]?.reservedSecond;
    const request = { ...attemptInput(input, endpointId, 1, attemptId), ...(place == null ? {} : { reservedSecond: place }) };
    // Never rejects: whatever went wrong is left to the workflow's try, which finds the claim.
    const outcome = earlyAttempt(deps, request, reserve, track, () => stopped).catch((): EarlyAttemptResult => ({}));
    made.set(attemptId, outcome);
    track(outcome);
    void outcome.then((result) => {
      // A place taken is not an outcome: the next hand-off of this delivery asks again, with it.
      if (result.throttle && made.get(attemptId) === outcome) made.delete(attemptId);
      setTimeout(() => {
        if (made.get(attemptId) === outcome) made.delete(attemptId);
      }, UNCLAIMED_KEEP_MS).unref();
    });
    return outcome;
  };

  return {
    begin: (input) => make(input, false),
    handOff(input) {
      const attempt = make(input, true);
      if (!attempt) return input;
      return attempt.then((result) => {
        const endpointId = input.endpointIds[0]!;
        const first = recordedFirstAttempt(result);
        if (first) {
          const { firstAttemptThrottles: _place, ...rest } = input;
          return { ...rest, firstAttemptOutcomes: { [endpointId]: first } };
        }
        return result.throttle ? { ...input, firstAttemptThrottles: { [endpointId]: result.throttle } } : input;
      });
    },
    take(attemptId) {
      const outcome = made.get(attemptId);
      made.delete(attemptId);
      return outcome;
    },
    inFlight: () => running.size,
    async drain() {
      const grace = setTimeout(() => (stopped = true), EARLY_RECORD_DRAIN_MS);
      try {
        while (running.size > 0) await Promise.all([...running]);
      } finally {
        clearTimeout(grace);
        stopped = true;
      }
    },
  };
}
