import { randomUUID } from 'node:crypto';
import type { SignAndPostInput } from '../core/delivery-contract';
import {
  findAttemptClaim,
  releaseAttemptClaim,
  type AttemptClaim,
  type AttemptClaimHolderRow,
} from '../db/attempt-claims';
import type { Pool } from '../db/pool';

export type { AttemptClaim, AttemptClaimHolderRow };

/** Who runs an attempt: the workflow's try, or the outbox dispatcher before the workflow's start. */
export type AttemptTrigger = 'workflow' | 'early';

/** The run name an early attempt claims under: only the outbox settles such a claim (settle.ts). */
export const EARLY_ATTEMPT_RUN_PREFIX = 'early:';

export function isEarlyRun(run: string | null | undefined): boolean {
  return run?.startsWith(EARLY_ATTEMPT_RUN_PREFIX) ?? false;
}

/**
 * The claim this execution makes, named afresh every time: the same local try may run again (its workflow task
 * lost with a worker, or timed out), and only the history knows which runs posted nothing; the outbox's early try
 * may be made again (its delivery claimed again), and only its process knows which of its runs posted nothing.
 * A regular try claims too, though Temporal runs it once: a workflow started before the outbox owned attempt 1
 * may meet that attempt claimed by an early try. A try without `claimTry` claims nothing.
 */
export function claimFor(input: SignAndPostInput, trigger: AttemptTrigger): AttemptClaim | undefined {
  if (trigger === 'early')
    return {
      attemptId: input.attemptId,
      run: EARLY_ATTEMPT_RUN_PREFIX + randomUUID(),
      try: 0,
      notPostedRuns: input.notPostedRuns ?? [],
    };
  if (input.claimTry === undefined) return undefined;
  return {
    attemptId: input.attemptId,
    run: randomUUID(),
    try: input.claimTry,
    notPostedRuns: input.notPostedRuns ?? [],
  };
}

/** A run that claimed its attempt and then skipped it (nothing posted, no record) gives its claim back. */
export async function releaseClaim(pool: Pool, claim: Pick<AttemptClaim, 'attemptId' | 'run'>): Promise<void> {
  await releaseAttemptClaim(pool, claim);
}

/** Who holds an attempt's claim and, once it is recorded, what the attempt came to; undefined when unclaimed. */
export async function claimHolder(pool: Pool, attemptId: string): Promise<AttemptClaimHolderRow | undefined> {
  return findAttemptClaim(pool, attemptId);
}
