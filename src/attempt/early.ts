import {
  attemptInput,
  type DeliverEventInput,
  type FirstAttemptOutcome,
  type FirstAttemptThrottle,
  type SignAndPostInput,
} from '../core/delivery-contract';
import { dispatchLeaseMs, EARLY_RECORD_DRAIN_MS, EARLY_RECORD_LEASE_MARGIN_MS } from '../core/delivery-policy';
import type { AccountRoom } from '../db/outbox';
import { createAccountShare } from './account-share';
import type { AttemptDeps } from './deps';
import { recordUntilAnswered } from './record';
import { leaveToWorkflow } from './claim';
import { runAttempt, type Attempted } from './run';
import { settleClaimed } from './settle';

/**
 * Early first attempts: the outbox owns attempt 1. The dispatcher learns of an event within a millisecond of its
 * commit, but its workflow reaches its first attempt only after Temporal has stored the start, handed back the
 * first task and the worker has built the workflow. So the dispatcher makes attempt 1 of every endpoint itself,
 * side by side, each under the id derived from its delivery (domain/delivery-start.ts earlyAttemptIds), through
 * the same pipeline as the workflow's try (run.ts): claim, post, record, and only then the start (handOff), whose
 * input carries each outcome on record (DeliverEventInput.firstAttemptOutcomes). The workflow's first task ends
 * those ladders or sets their retry timers without an activity: one workflow task, whatever the number of
 * endpoints. The workflow owns every other attempt, under ids it draws itself, so no attempt has two owners.
 *
 * The start waits for every attempt 1 it made to be on record: a slow endpoint holds up its event's other ladders
 * (their retries) by its timeout at most. An answer the inline record missed is written again until Postgres
 * answers, within the dispatcher's lease on the row (core/delivery-policy.ts dispatchLeaseMs). When attempt 1
 * cannot be settled (our database did not answer before the post, or the record could not be written within the
 * lease), the hand-off fails and no workflow starts: the row is claimed again, and whoever claims it finds the
 * attempt as this run left it (settle.ts).
 *
 * Attempt 1 is not made here, and the workflow makes it under an id of its own, when nothing was claimed for it:
 * no room (the worker's capacity, the account's share), a paused endpoint, a fan-out's endpoint held back by its
 * rate limit, an endpoint kept in order per parcel. A one-endpoint delivery held back by its rate limit takes its
 * place in the queue here, and waits for it in the outbox (domain/outbox.ts): the next hand-off makes attempt 1
 * with that place (DeliverEventInput.firstAttemptThrottles).
 */

/** What one early attempt came to: its outcome on record, the place it took (one endpoint), or nothing made. */
export type EarlyAttemptResult =
  { outcome: FirstAttemptOutcome; throttle?: undefined } | { outcome?: undefined; throttle?: FirstAttemptThrottle };

export interface EarlyAttempts {
  /**
   * Makes attempt 1 of each endpoint named in `attemptIds` now, while there is room, and resolves, once every one
   * made is on record, with the input to start the workflow with: carrying each outcome, or (one endpoint) the
   * place it took when throttled. The input itself, at once, when no early attempt is made. Rejects when an
   * attempt could not be settled: the start must not be made.
   */
  handOff(input: DeliverEventInput, attemptIds: Record<string, string>): DeliverEventInput | Promise<DeliverEventInput>;
  /**
   * Right before the start: the attempts 1 of `attemptIds` not on record in the input the start carries are the
   * workflow's, so they are claimed as left to it (claim.ts LEFT_TO_WORKFLOW_RUN), and a later hand-off of the same
   * delivery (the start made, its row not yet marked) posts none of them. Resolves to the input to start with:
   * one an earlier hand-off's early try already claimed (no room for a try now) is named in `firstAttemptIds`, so
   * the workflow's try meets that claim and takes its record or records it lost, posting nothing again.
   * Undefined when none is left.
   */
  leaveToWorkflow(
    started: DeliverEventInput,
    attemptIds: Record<string, string>,
  ): Promise<DeliverEventInput> | undefined;
  /** Early attempts under way (posting, or writing an answer not yet recorded). */
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

/** How long this process remembers that one of its early runs posted nothing: long past any re-claim. */
const NOT_POSTED_KEEP_MS = 120_000;

/** An attempt posted and on record, trimmed to what the ladder reads. */
function firstAttempt(outcome: Attempted): FirstAttemptOutcome {
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

export function createEarlyAttempts(deps: AttemptDeps, options: EarlyAttemptsOptions): EarlyAttempts {
  const running = new Set<Promise<unknown>>();
  // One account (and mode) holds at most its share of them (account-share.ts), so a slow receiver's backlog
  // leaves room for every other account's attempt 1.
  let shareFreed = () => undefined as void;
  const shares = createAccountShare(options.maxInFlight, () => shareFreed());
  // Runs of this process that claimed an attempt 1 and posted nothing (our database did not answer, a token came
  // too late): the next hand-off of that delivery here may take their claims (db/attempt-claims.ts).
  const notPosted = new Map<string, string[]>();
  let stopped = false;

  const remember = (attemptId: string, run: string | undefined) => {
    if (run === undefined) return;
    notPosted.set(attemptId, [...(notPosted.get(attemptId) ?? []), run]);
    setTimeout(() => notPosted.delete(attemptId), NOT_POSTED_KEEP_MS).unref();
  };

  /** One early attempt, settled: on record, a place taken, or nothing claimed. Rejects when it cannot be settled. */
  async function earlyAttempt(input: SignAndPostInput, reserve: boolean): Promise<EarlyAttemptResult> {
    const began = Date.now();
    const run = await runAttempt(deps, input, 'early', reserve);
    switch (run.kind) {
      case 'posted': {
        if (run.outcome.recorded || !run.outcome.record) return { outcome: firstAttempt(run.outcome) };
        const recordBy = began + dispatchLeaseMs(deps.config.delivery.timeoutMs) - EARLY_RECORD_LEASE_MARGIN_MS;
        const stored = await recordUntilAnswered(deps.pool, run.outcome.record, () => stopped || Date.now() > recordBy);
        if (!stored) throw new Error(`attempt ${input.attemptId} posted, and its record not written within the lease`);
        const recovered = stored.recovered || stored.succeeded;
        return { outcome: firstAttempt({ ...run.outcome, ...stored, recovered, recorded: true, record: undefined }) };
      }
      case 'skipped':
        return { outcome: { kind: 'skipped', reason: run.reason } };
      case 'notPosted':
        remember(input.attemptId, run.run);
        throw run.error;
      case 'claimed': {
        // An earlier owner's try under this id (a start retried, a lease lapsed): its record, or its loss; or an
        // earlier hand-off left it to the workflow.
        const settled = await settleClaimed(deps, input, run.url);
        return settled ? { outcome: firstAttempt(settled) } : {};
      }
      // No token this second: the place reserved (when asked to reserve), for the start to wait for in the outbox;
      // else the workflow's try asks and reserves one. A token that came too late had been claimed with: the claim
      // is given back, and remembered, so the next hand-off here may take it.
      case 'throttled': {
        remember(input.attemptId, run.run);
        if (!reserve) return {};
        const { untilMs, reservedSecond, rateLimit } = run.throttle;
        return { throttle: { untilMs, reservedSecond, rateLimit } };
      }
      // Paused by its owner: nothing claimed; the workflow's try holds the attempt.
      case 'held':
        return {};
    }
  }

  const make = (
    input: DeliverEventInput,
    endpointId: string,
    attemptId: string,
    reserve: boolean,
  ): Promise<EarlyAttemptResult> | undefined => {
    if (running.size >= options.maxInFlight || stopped) return undefined;
    const release = shares.take(`${input.accountId}:${input.livemode}`);
    if (!release) return undefined;
    // Attempt 1 deferred to its rate-limit place at an earlier hand-off (domain/outbox.ts) asks with that place.
    const place = input.firstAttemptThrottles?.[endpointId]?.reservedSecond;
    const request = {
      ...attemptInput(input, endpointId, 1, attemptId),
      notPostedRuns: notPosted.get(attemptId) ?? [],
      ...(place == null ? {} : { reservedSecond: place }),
    };
    const outcome = earlyAttempt(request, reserve);
    running.add(outcome);
    void outcome
      .catch(() => undefined)
      .finally(() => {
        running.delete(outcome);
        release();
      });
    return outcome;
  };

  return {
    handOff(input, attemptIds) {
      // A one-endpoint start may wait for its place in a rate-limit queue; a fan-out's is never delayed for one of
      // its endpoints, whose throttled attempt 1 is left to its ladder.
      const single = input.endpointIds.length === 1;
      const attempts = Object.entries(attemptIds).flatMap(([endpointId, attemptId]) => {
        const attempt = make(input, endpointId, attemptId, single);
        return attempt ? [attempt.then((result) => [endpointId, result] as const)] : [];
      });
      if (attempts.length === 0) return input;
      // Every attempt ends before the hand-off does, settled or not: a row given back while one still posts would
      // let the next owner settle it under the post.
      const handedOff = Promise.allSettled(attempts).then((settled) => {
        const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
        if (failed) throw failed.reason;
        const ended = settled.map((s) => (s as PromiseFulfilledResult<readonly [string, EarlyAttemptResult]>).value);
        const outcomes: Record<string, FirstAttemptOutcome> = {};
        // A place carried in from an earlier hand-off (domain/outbox.ts) stays until its attempt 1 is on record.
        const { firstAttemptThrottles: carried, ...rest } = input;
        const throttles: Record<string, FirstAttemptThrottle> = { ...carried };
        for (const [endpointId, result] of ended) {
          if (result.outcome) {
            outcomes[endpointId] = result.outcome;
            delete throttles[endpointId];
            notPosted.delete(attemptIds[endpointId]!);
          } else if (result.throttle) throttles[endpointId] = result.throttle;
        }
        return {
          ...rest,
          ...(Object.keys(outcomes).length > 0 ? { firstAttemptOutcomes: outcomes } : {}),
          ...(Object.keys(throttles).length > 0 ? { firstAttemptThrottles: throttles } : {}),
        };
      });
      return handedOff;
    },
    leaveToWorkflow(started, attemptIds) {
      const left = Object.entries(attemptIds).filter(([endpointId]) => !started.firstAttemptOutcomes?.[endpointId]);
      if (left.length === 0) return undefined;
      return leaveToWorkflow(
        deps.pool,
        left.map(([, attemptId]) => attemptId),
      ).then((claimedEarlier) => {
        const named = left.filter(([, attemptId]) => claimedEarlier.includes(attemptId));
        return named.length === 0 ? started : { ...started, firstAttemptIds: Object.fromEntries(named) };
      });
    },
    inFlight: () => running.size,
    accountRoom: () => shares.room(),
    onShareFreed(listener) {
      shareFreed = listener;
    },
    async drain() {
      const grace = setTimeout(() => (stopped = true), EARLY_RECORD_DRAIN_MS);
      try {
        while (running.size > 0) await Promise.allSettled([...running]);
      } finally {
        clearTimeout(grace);
        stopped = true;
      }
    },
  };
}
