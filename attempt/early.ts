import { attemptInput, type AttemptOutcome, type DeliverEventInput, type SignAndPostInput } from '../core/delivery-contract';
import { EARLY_RECORD_DRAIN_MS } from '../core/delivery-policy';
import type { AttemptDeps } from './deps';
import { recordUntilAnswered } from './record';
import { runAttempt } from './run';

/**
 * Early first attempts (DELIVERY_EARLY_FIRST_ATTEMPT, on by default). The outbox dispatcher learns of an event
 * within a millisecond of its commit, but its workflow reaches its first attempt only after Temporal has stored
 * the start, handed back the first task and the worker has built the workflow. So for a one-endpoint local
 * delivery the dispatcher makes attempt 1 itself, beside the start, under the attempt id fixed at hand-off
 * (DeliverEventInput.firstAttemptIds), through the same pipeline as the workflow's try (run.ts); the workflow's
 * try then adopts the outcome instead of posting. What that try meets is in index.ts.
 */

/**
 * What an early attempt came to: its outcome when it posted (or skipped), else nothing was posted, and
 * `notPostedRun` names the claim it may have left, which the workflow's try may take.
 */
export type EarlyAttemptResult = { outcome: AttemptOutcome; notPostedRun?: undefined } | { outcome?: undefined; notPostedRun?: string };

export interface EarlyAttemptSource {
  /** The early attempt of this id made in this process, once; undefined when it made none. */
  take(attemptId: string): Promise<EarlyAttemptResult> | undefined;
}

export interface EarlyAttempts extends EarlyAttemptSource {
  /** Makes attempt 1 of this delivery now, when it is one to make early and there is room; never waits. */
  begin(input: DeliverEventInput): void;
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

/**
 * One early attempt. Whatever keeps it from posting (a claim already held, our database, an endpoint to skip,
 * no rate token this second) is left to the workflow's try, which meets it again. An answer it could not record
 * is handed back at once (a try in this process records it through the recordAttempt activity) and written on in
 * the background until Postgres answers (`write`), for a try in another process to adopt.
 */
async function earlyAttempt(
  deps: AttemptDeps,
  input: SignAndPostInput,
  write: (work: Promise<unknown>) => void,
  stopped: () => boolean,
): Promise<EarlyAttemptResult> {
  const run = await runAttempt(deps, input, 'early');
  switch (run.kind) {
    case 'posted':
      if (!run.outcome.recorded && run.outcome.record) write(recordUntilAnswered(deps.pool, run.outcome.record, stopped));
      return { outcome: { ...run.outcome, early: true } };
    case 'skipped':
      return { outcome: { kind: 'skipped', reason: run.reason } };
    case 'notPosted':
      return { notPostedRun: run.run };
    // No token this second: the workflow's try asks again (and reserves one). A token that came too late had
    // been claimed with: the claim is given back, and named so a try in this process may take it regardless.
    case 'throttled':
      return run.run ? { notPostedRun: run.run } : {};
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

  return {
    begin(input) {
      if (input.attemptKind !== 'local' || !input.firstAttemptIds || input.endpointIds.length !== 1) return;
      const endpointId = input.endpointIds[0]!;
      const attemptId = input.firstAttemptIds[endpointId];
      // Already made here (a start retried after Temporal refused it): its outcome stands.
      if (!attemptId || made.has(attemptId) || running.size >= options.maxInFlight || stopped) return;
      // Never rejects: whatever went wrong is left to the workflow's try, which finds the claim.
      const outcome = earlyAttempt(deps, attemptInput(input, endpointId, 1, attemptId), track, () => stopped).catch(
        (): EarlyAttemptResult => ({}),
      );
      made.set(attemptId, outcome);
      track(outcome);
      void outcome.then(() => {
        setTimeout(() => {
          if (made.get(attemptId) === outcome) made.delete(attemptId);
        }, UNCLAIMED_KEEP_MS).unref();
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
