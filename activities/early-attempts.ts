import { attemptInput, type DeliverEventInput } from '../core/delivery-contract';
import { createEarlyAttempt, type EarlyAttemptResult, type EarlyAttemptSource, type SignAndPostDeps } from './sign-and-post';

/**
 * Early first attempts (DELIVERY_EARLY_FIRST_ATTEMPT, on by default). The outbox dispatcher learns of an event
 * within a millisecond of its commit, but its workflow reaches its first attempt only after Temporal has stored
 * the start, handed back the first task and the worker has built the workflow: most of the time from publish to
 * the receiver (README "Performance"). So for a one-endpoint local delivery the dispatcher makes attempt 1 itself,
 * beside the start, under the attempt id fixed at hand-off (DeliverEventInput.firstAttemptIds), claimed, posted
 * and recorded exactly as the workflow's try would; the workflow's try then adopts the outcome instead of posting.
 *
 * What the workflow's try meets (activities/sign-and-post.ts):
 * - in this process (an eager start brings the first task here): the attempt's promise, no query at all;
 * - in another process, or after a restart: the early run's claim; it waits for the record (at most until the
 *   early attempt has surely ended) and adopts it; with no record by then the early run died mid-post, and the
 *   attempt is recorded lost, as a local try lost with its worker is, and the ladder goes on;
 * - nothing posted early (the endpoint to skip, our database down, no room): the try runs as it always did,
 *   taking over a claim the early run names as not posted.
 * The attempt's id is the same from every dispatcher, so a start retried after a crash never posts attempt 1
 * again. The workflow's history shows the attempt as before (the local activity's marker, its summary and
 * outcome, with `early: true`); only the POST left the worker a few milliseconds sooner.
 */

/** How long an outcome no try took is kept (a first task that went to another worker): long past any try. */
const UNCLAIMED_KEEP_MS = 120_000;

export interface EarlyAttempts extends EarlyAttemptSource {
  /** Makes attempt 1 of this delivery now, when it is one to make early and there is room; never waits. */
  begin(input: DeliverEventInput): void;
  /** Early attempts under way. */
  inFlight(): number;
  /** Resolves when every early attempt under way has ended (a worker shutting down lets them finish). */
  drain(): Promise<void>;
}

export interface EarlyAttemptsOptions {
  /** Early attempts under way at once; past it the workflow's own try makes attempt 1 (as the worker's slots). */
  maxInFlight: number;
  warn?: (message: string) => void;
}

export function createEarlyAttempts(deps: SignAndPostDeps, options: EarlyAttemptsOptions): EarlyAttempts {
  const attempt = createEarlyAttempt(deps, options.warn ?? (() => undefined));
  const made = new Map<string, Promise<EarlyAttemptResult>>();
  const running = new Set<Promise<unknown>>();

  return {
    begin(input) {
      if (input.attemptKind !== 'local' || !input.firstAttemptIds || input.endpointIds.length !== 1) return;
      const endpointId = input.endpointIds[0]!;
      const attemptId = input.firstAttemptIds[endpointId];
      // Already made here (a start retried after Temporal refused it): its outcome stands.
      if (!attemptId || made.has(attemptId) || running.size >= options.maxInFlight) return;
      // Never rejects: whatever went wrong is left to the workflow's try, which finds the claim.
      const outcome = attempt(attemptInput(input, endpointId, 1, attemptId)).catch((): EarlyAttemptResult => ({}));
      made.set(attemptId, outcome);
      running.add(outcome);
      void outcome.then(() => {
        running.delete(outcome);
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
      await Promise.all([...running]);
    },
  };
}
