import { setTimeout as sleep } from 'node:timers/promises';
import type { DeliveryError, SignAndPostInput } from '../core/delivery-contract';
import {
  EARLY_RECORD_DEADLINE_MS,
  EARLY_RECORD_SILENCE_MS,
  earlyAttemptSpanMs,
  GONE_STATUS,
} from '../core/delivery-policy';
import { claimHolder, isEarlyRun, type AttemptClaim, type AttemptClaimHolderRow } from './claim';
import { withinDeadline } from './deadline';
import type { AttemptDeps } from './deps';
import { databaseUnavailable, earlyAttemptUndecided } from './failures';
import type { Attempted } from './run';

/** The longest pause between two looks at the claim. */
const MAX_POLL_PAUSE_MS = 250;

/** The outcome of an early try's record, as this try reports it. */
function adopted(holder: AttemptClaimHolderRow, url: string): Attempted {
  const succeeded = holder.succeeded ?? false;
  // Whether the record cleared a failing mark is not stored: a success tells the supervisor anyway (resetting a
  // count of zero changes nothing), as a lost worker's success does.
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

/**
 * A workflow's try found the attempt claimed by another run. When that run is an early one (another process's
 * dispatcher, or this one's before a restart), its outcome is this attempt's: the try waits for its record and
 * adopts it. It calls the early try dead (undefined: the attempt is lost, as with any other run) only when sure:
 *
 * 1. while the claim is younger than the early try's span (its read, post and inline record, each bounded), the
 *    run may still be posting: wait;
 * 2. past the span, a living early try that holds an answer is retrying its record (record.ts recordUntilAnswered)
 *    and lands it within one retry of Postgres answering. So the try needs a continuous window, longer than
 *    EARLY_RECORD_SILENCE_MS, in which every look at the claim is answered and no record appears. A look that
 *    fails ends the try as not posted (DatabaseUnavailable): the next try starts a new window.
 *
 * A try has its own timeout (the workflow's, timeout + margin), which the wait must never reach: that would
 * record the attempt lost through the back door. When the try's time runs out undecided, it ends as not posted
 * (EarlyAttemptUndecided), and the workflow's next try looks again, past the span by then.
 *
 * The window is measured on this try's clock from Postgres's answers, and the span on Postgres's clock: no clock
 * of another process is trusted. What remains: an early try cut off from Postgres while this try is not (a
 * one-sided partition) longer than the window, whose answer is then recorded as a timeout (the first writer
 * wins). A heartbeat on the claim row would not close it (a cut-off run cannot heartbeat either) and would cost a
 * write per attempt, so the window is what decides.
 */
export async function adoptEarlyRecord(
  deps: AttemptDeps,
  input: SignAndPostInput,
  claimed: { claim: AttemptClaim; url: string },
  endsAt: number,
): Promise<Attempted | undefined> {
  const spanMs = earlyAttemptSpanMs(input.timeoutMs);
  let answeringSince: number | undefined;
  let pauseMs = 10;
  for (;;) {
    const lookedAt = Date.now();
    if (lookedAt + EARLY_RECORD_DEADLINE_MS > endsAt) throw earlyAttemptUndecided(input.attemptId, claimed.claim.run);
    let holder: AttemptClaimHolderRow | undefined;
    try {
      holder = await withinDeadline(
        claimHolder(deps.pool, input.attemptId),
        'reading the attempt claim',
        EARLY_RECORD_DEADLINE_MS,
      );
    } catch (err) {
      // This run holds no claim: it posted nothing, which is what its failure says.
      throw databaseUnavailable(err, claimed.claim.run);
    }
    // Given back since the read (the early try skipped): nobody posted, and the next try claims it afresh.
    if (!holder) throw earlyAttemptUndecided(input.attemptId, claimed.claim.run);
    if (!isEarlyRun(holder.run)) return undefined;
    if (holder.recorded) return adopted(holder, claimed.url);
    if (holder.age_ms > spanMs) {
      answeringSince ??= Date.now();
      if (lookedAt - answeringSince > EARLY_RECORD_SILENCE_MS) return undefined;
    }
    const untilSpan = holder.age_ms <= spanMs ? spanMs - holder.age_ms + 1 : MAX_POLL_PAUSE_MS;
    await sleep(Math.max(0, Math.min(pauseMs, untilSpan, endsAt - Date.now() - EARLY_RECORD_DEADLINE_MS)));
    pauseMs = Math.min(pauseMs * 2, MAX_POLL_PAUSE_MS);
  }
}
