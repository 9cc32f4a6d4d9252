import {
  attemptInput,
  type AttemptOutcome,
  type DeliverEventInput,
  type FirstAttemptOutcome,
  type FirstAttemptThrottle,
  type SignAndPostInput,
} from '../core/delivery-contract';
import { EARLY_RECORD_DRAIN_MS, FAN_OUT_START_WAIT_MS } from '../core/delivery-policy';
import type { AccountRoom } from '../db/outbox';
import { createAccountShare } from './account-share';
import type { AttemptDeps } from './deps';
import { recordUntilAnswered } from './record';
import { runAttempt } from './run';

/**
 * Early first attempts. The outbox dispatcher learns of an event within a millisecond of its commit, but its
 * workflow reaches its first attempt only after Temporal has stored the start, handed back the first task and the
 * worker has built the workflow. So the dispatcher makes attempt 1 of every endpoint itself, side by side, each
 * under the attempt id fixed at hand-off (DeliverEventInput.firstAttemptIds), through the same pipeline as the
 * workflow's try (run.ts), and the start waits for them (handOff): each attempt 1 that ended on record rides in
 * the start's input (DeliverEventInput.firstAttemptOutcomes), and the workflow's first task ends those ladders or
 * sets their retry timers without an activity: one workflow activation, whatever the number of endpoints.
 *
 * A one-endpoint start waits for its attempt to end. An attempt 1 held back by its endpoint's rate limit or
 * Retry-After takes its place in the queue here and rides in the input as that place
 * (DeliverEventInput.firstAttemptThrottles): the outbox keeps the delivery waiting for it (domain/outbox.ts), and
 * the next hand-off makes attempt 1 here again with that place, so a throttled delivery costs one workflow task
 * once posted, not a task to take its place and another to post. A fan-out's start waits until every attempt 1
 * has ended or FAN_OUT_START_WAIT_MS has passed, so a slow endpoint holds up the others' ladders by that bound at
 * most; its throttled attempts 1 take no place here and are left to their ladders.
 *
 * An attempt 1 not on record at the start (still posting, Postgres did not answer, another run holds the claim)
 * is met by its ladder's try (what it meets is in index.ts): in this process it takes the outcome from memory
 * (take), elsewhere it adopts the early try's record (adopt.ts).
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
   * Makes attempt 1 of each endpoint of this delivery with a fixed id now, while there is room, and waits for
   * them: a one-endpoint start at most the attempt's own span (the post's timeout, one record write), a fan-out's
   * at most `fanOutWaitMs` (FAN_OUT_START_WAIT_MS by default). Resolves with the input to start the workflow with: carrying each outcome on
   * record, or (one endpoint) the place it took when throttled. The input itself, at once, when no early attempt
   * is made (none to make early, or no room); a start retried after Temporal refused it finds the outcomes made
   * the first time.
   */
  handOff(input: DeliverEventInput, fanOutWaitMs?: number): DeliverEventInput | Promise<DeliverEventInput>;
  /** Early attempts under way (posting, or holding an answer not yet recorded). */
  inFlight(): number;
  /** How many more events of each account holding places the outbox may claim now (account-share.ts). */
  accountRoom(): AccountRoom;
  /** Calls `listener` whenever an account at its share gives a place back: its waiting events may be claimed. */
  onShareFreed(listener: () => void): void;
  /** Resolves when every early post has ended and every unrecorded answer was written or given up (bounded). */
  drain(): Promise<void>;
}

export interface EarlyAttemptsOptions {
  /** Early attempts under way at once (one per endpoint); past it the workflow's own try makes attempt 1. */
  maxInFlight: number;
}

/** How long an outcome no try took is kept (a first task that went to another worker): long past any try. */
const UNCLAIMED_KEEP_MS = 120_000;

/** What a start may carry as attempt 1: only an outcome already on record, trimmed to what the ladder reads. */
export function recordedFirstAttempt(result: EarlyAttemptResult): FirstAttemptOutcome | undefined {
  const outcome = result.outcome;
  if (outcome?.kind === 'skipped') return outcome;
  if (outcome?.kind !== 'attempted' || !outcome.recorded) return undefined;
  const { statusCode, error, durationMs, url, succeeded, recovered, retryAfterMs, gone } = outcome;
  return {
    kind: 'attempted',
    statusCode,
    error,
    durationMs,
    url,
    succeeded,
    recovered,
    recorded: true,
    early: true,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    ...(gone ? { gone } : {}),
  };
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
      if (!run.outcome.recorded && run.outcome.record)
        write(recordUntilAnswered(deps.pool, run.outcome.record, stopped));
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
    // Paused by its owner: nothing is posted before the start; the workflow's try holds the attempt.
    case 'held':
    case 'claimed':
      return {};
  }
}

export function createEarlyAttempts(deps: AttemptDeps, options: EarlyAttemptsOptions): EarlyAttempts {
  const made = new Map<string, Promise<EarlyAttemptResult>>();
  const running = new Set<Promise<unknown>>();
  // One account (and mode) holds at most its share of them (account-share.ts), so a slow receiver's backlog
  // leaves room for every other account's attempt 1.
  let shareFreed = () => undefined as void;
  const shares = createAccountShare(options.maxInFlight, () => shareFreed());
  let stopped = false;
  const track = (work: Promise<unknown>) => {
    running.add(work);
    void work.catch(() => undefined).finally(() => running.delete(work));
  };

  const make = (
    input: DeliverEventInput,
    endpointId: string,
    attemptId: string,
    reserve: boolean,
  ): Promise<EarlyAttemptResult> | undefined => {
    // Already made here (a start retried after Temporal refused it): its outcome stands.
    const before = made.get(attemptId);
    if (before || running.size >= options.maxInFlight || stopped) return before;
    const release = shares.take(`${input.accountId}:${input.livemode}`);
    if (!release) return undefined;
    // Attempt 1 deferred to its rate-limit place at an earlier hand-off (domain/outbox.ts) asks with that place.
    const place = input.firstAttemptThrottles?.[endpointId]?.reservedSecond;
    const request = {
      ...attemptInput(input, endpointId, 1, attemptId),
      ...(place == null ? {} : { reservedSecond: place }),
    };
    // Never rejects: whatever went wrong is left to the workflow's try, which finds the claim.
    const outcome = earlyAttempt(deps, request, reserve, track, () => stopped).catch((): EarlyAttemptResult => ({}));
    made.set(attemptId, outcome);
    track(outcome);
    void outcome.finally(release);
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
    handOff(input, fanOutWaitMs = FAN_OUT_START_WAIT_MS) {
      // A one-endpoint start may wait for its place in a rate-limit queue; a fan-out's is never delayed for one of
      // its endpoints, whose throttled attempt 1 is left to its ladder.
      const single = input.endpointIds.length === 1;
      const attempts = Object.entries(input.firstAttemptIds ?? {}).flatMap(([endpointId, attemptId]) => {
        const attempt = make(input, endpointId, attemptId, single);
        return attempt ? [{ endpointId, attempt }] : [];
      });
      if (attempts.length === 0) return input;
      const ended = new Map<string, EarlyAttemptResult>();
      const all = Promise.all(
        attempts.map(({ endpointId, attempt }) => attempt.then((result) => void ended.set(endpointId, result))),
      );
      let bound: NodeJS.Timeout | undefined;
      const waited = single
        ? all
        : Promise.race([all, new Promise<void>((resolve) => (bound = setTimeout(resolve, fanOutWaitMs)))]);
      return waited.then(() => {
        clearTimeout(bound);
        const outcomes: Record<string, FirstAttemptOutcome> = {};
        // A place carried in from an earlier hand-off (domain/outbox.ts) stays until its attempt 1 is on record.
        const { firstAttemptThrottles: carried, ...rest } = input;
        const throttles: Record<string, FirstAttemptThrottle> = { ...carried };
        for (const [endpointId, result] of ended) {
          const first = recordedFirstAttempt(result);
          if (first) {
            outcomes[endpointId] = first;
            delete throttles[endpointId];
          } else if (result.throttle) throttles[endpointId] = result.throttle;
        }
        return {
          ...rest,
          ...(Object.keys(outcomes).length > 0 ? { firstAttemptOutcomes: outcomes } : {}),
          ...(Object.keys(throttles).length > 0 ? { firstAttemptThrottles: throttles } : {}),
        };
      });
    },
    take(attemptId) {
      const outcome = made.get(attemptId);
      made.delete(attemptId);
      return outcome;
    },
    inFlight: () => running.size,
    accountRoom: () => shares.room(),
    onShareFreed(listener) {
      shareFreed = listener;
    },
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
