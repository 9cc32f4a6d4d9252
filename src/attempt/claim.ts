import { randomUUID } from 'node:crypto';
import type { SignAndPostInput } from '../core/delivery-contract';
import {
  claimAttemptsFor,
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
 * The run an attempt 1 the outbox left to the workflow is claimed under, before the start: a later hand-off of the
 * delivery (its start made, its row not marked) finds it and posts nothing, while the workflow makes its attempt 1
 * under an id of its own. No run ever takes it over.
 */
export const LEFT_TO_WORKFLOW_RUN = 'left-to-workflow';

/**
 * Marks these attempts 1 as left to the workflow (LEFT_TO_WORKFLOW_RUN) where nobody claimed them, in one
 * statement, and returns those an earlier hand-off's early try claimed (its worker died after the post, the lease
 * lapsed): the workflow's try must make those under their ids, to meet that claim rather than post again.
 */
export async function leaveToWorkflow(pool: Pool, attemptIds: string[]): Promise<string[]> {
  const held = await claimAttemptsFor(pool, attemptIds, LEFT_TO_WORKFLOW_RUN);
  return held.filter((claim) => isEarlyRun(claim.run)).map((claim) => claim.attempt_id);
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
