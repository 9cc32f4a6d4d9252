import { attemptRecord, type DeliveryError, type SignAndPostInput } from '../core/delivery-contract';
import { GONE_STATUS } from '../core/delivery-policy';
import { claimHolder, LEFT_TO_WORKFLOW_RUN, type AttemptClaimHolderRow } from './claim';
import type { AttemptDeps } from './deps';
import { recordInline } from './record';
import type { Attempted } from './run';

/**
 * An attempt 1 the outbox finds claimed by an earlier dispatcher's early try when it claims the delivery again:
 * that dispatcher's lease on the delivery lapsed (or it gave the delivery back), so its try has ended one way or
 * another, and the outbox, the delivery's one owner now, settles the attempt without posting. Its record, when it
 * has one, is the outcome; without one the run died between its claim and its record, and the attempt is recorded
 * lost (a timeout), as a regular activity lost with its worker is. The first writer wins: a record that landed
 * meanwhile is the outcome all the same. Undefined when an earlier hand-off left the attempt to the workflow
 * (LEFT_TO_WORKFLOW_RUN): it is the workflow's, and the outbox makes nothing of it.
 */
export async function settleClaimed(
  deps: AttemptDeps,
  input: SignAndPostInput,
  url: string,
): Promise<Attempted | undefined> {
  const before = await claimHolder(deps.pool, input.attemptId);
  if (before?.run === LEFT_TO_WORKFLOW_RUN) return undefined;
  if (before?.recorded) return recordedOutcome(before, url);
  const lost = attemptRecord(input, {
    statusCode: null,
    responseBody: null,
    error: 'timeout',
    durationMs: input.timeoutMs,
    succeeded: false,
  });
  await recordInline(deps.pool, lost);
  const after = await claimHolder(deps.pool, input.attemptId);
  if (!after?.recorded) throw new Error(`attempt ${input.attemptId} has no record after its record was written`);
  return recordedOutcome(after, url);
}

/**
 * The outcome of an attempt as its record stands. Whether the record cleared a failing mark is not stored: a
 * success tells the supervisor anyway (resetting a count of zero changes nothing).
 */
export function recordedOutcome(holder: AttemptClaimHolderRow, url: string): Attempted {
  const succeeded = holder.succeeded ?? false;
  return {
    kind: 'attempted',
    statusCode: holder.status_code,
    error: holder.error as DeliveryError | null,
    durationMs: holder.duration_ms ?? 0,
    succeeded,
    recovered: succeeded,
    url,
    recorded: true,
    early: true,
    // the record of a 410 disabled the endpoint with it (record.ts): the ladder stops here
    ...(holder.status_code === GONE_STATUS ? { gone: true as const } : {}),
  };
}
