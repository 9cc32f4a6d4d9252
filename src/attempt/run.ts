import { attemptRecord, type AttemptOutcome, type SignAndPostInput, type SkipReason } from '../core/delivery-contract';
import { RATE_LIMIT_POST_BY_MS, RATE_LIMIT_USABLE_MS } from '../core/delivery-policy';
import { telemetryUrl } from '../core/telemetry-url';
import { claimFor, releaseClaim, type AttemptClaim, type AttemptTrigger } from './claim';
import { readContext, skipReason, type DeliveryContext, type ReadContext, type Throttle } from './context';
import { withinDeadline } from './deadline';
import { logOf, type AttemptDeps } from './deps';
import { postAttempt } from './post';
import { recordInline, recordSkipped } from './record';

export type Attempted = Extract<AttemptOutcome, { kind: 'attempted' }>;

/** Where one run of the pipeline stopped. */
export type AttemptRun =
  /** Posted; `outcome.recorded` false when the inline record failed (`outcome.record` must then be written). */
  | { kind: 'posted'; outcome: Attempted }
  /** Nothing posted, its delivery recorded skipped, its claim given back. */
  | { kind: 'skipped'; reason: SkipReason }
  /** Nothing posted: our database did not answer. `run` names the claim this run may have left. */
  | { kind: 'notPosted'; error: Error; run?: string }
  /** Nothing posted: another run holds the attempt (or it is recorded). */
  | { kind: 'claimed'; claim: AttemptClaim; url: string }
  /**
   * Nothing posted, nothing claimed (or the claim given back, `run` naming it): the endpoint's rate limit or
   * Retry-After holds the attempt until then.
   */
  | { kind: 'throttled'; throttle: Throttle; run?: string }
  /**
   * Nothing posted, nothing claimed: the endpoint is paused by its owner (held since `pausedForMs` ago). Not an
   * attempt: the workflow re-checks later (core/delivery-policy.ts heldRecheckMs), the early try leaves it to it.
   */
  | { kind: 'held'; pausedForMs: number };

/**
 * One attempt, the same steps whoever runs it: take a rate token and claim (in the read), read, skip or sign and
 * post, record. The workflow's try and the dispatcher's early try differ only in the trigger, which names the
 * claim; `reserve` says whether a throttled attempt reserves a later token (the workflow's try always does; the
 * early try does when its start will wait for that place, and otherwise leaves the attempt to the try). What each
 * makes of the result is theirs (try.ts, early.ts). One round trip before the post, one after.
 */
export async function runAttempt(
  deps: AttemptDeps,
  input: SignAndPostInput,
  trigger: AttemptTrigger,
  reserve = trigger === 'workflow',
): Promise<AttemptRun> {
  const claim = claimFor(input, trigger);
  const asked = { reserve, reservedSecond: input.reservedSecond, usableMs: RATE_LIMIT_USABLE_MS };
  let context: ReadContext;
  try {
    context = await readContext(deps, input, claim, asked);
  } catch (err) {
    return { kind: 'notPosted', error: err as Error, run: claim?.run };
  }
  if (context && context !== 'secretUnavailable' && context.throttled)
    return { kind: 'throttled', throttle: context.throttled };
  const reason = skipReason(context);
  // A paused endpoint holds its attempts, unless they are to end anyway (removed, disabled, stopped).
  if (!reason && context && context !== 'secretUnavailable' && context.pausedForMs !== undefined)
    return { kind: 'held', pausedForMs: context.pausedForMs };
  if (claim && context && context !== 'secretUnavailable' && !context.fresh)
    return { kind: 'claimed', claim, url: telemetryUrl(context.endpoint.url) };
  if (reason) return skip(deps, input, reason, claim);
  const { token } = context as DeliveryContext;
  if (token && Date.now() >= token.second * 1000 + RATE_LIMIT_POST_BY_MS) return late(deps, claim, token);
  return { kind: 'posted', outcome: await postAndRecord(deps, input, context as DeliveryContext & { body: string }) };
}

/**
 * The rate token came back too late in its second for the post to arrive within it. Nothing is posted and the
 * token is let go (it stays counted, so the limit only errs low): the claim goes back, as a skip's does, and the
 * attempt asks again at once, keeping its place in the queue (the token's second: it is due, and is told when to
 * ask again). The run is named, so a claim that could not be given back does not stop the next try.
 */
async function late(
  deps: AttemptDeps,
  claim: AttemptClaim | undefined,
  token: { second: number; rateLimit: number | null },
): Promise<AttemptRun> {
  if (claim) await withinDeadline(releaseClaim(deps.pool, claim), 'releasing the claim').catch(() => undefined);
  return {
    kind: 'throttled',
    throttle: { untilMs: Date.now(), reservedSecond: token.second, rateLimit: token.rateLimit },
    run: claim?.run,
  };
}

/**
 * Nothing is posted; the delivery ends skipped. The claim goes back first, so a re-run of this try skips too
 * instead of being recorded lost. Failing to write the skip is failing before posting: the attempt is tried
 * again, checks again, and the delivery is never left pending.
 */
async function skip(
  deps: AttemptDeps,
  input: SignAndPostInput,
  reason: SkipReason,
  claim: AttemptClaim | undefined,
): Promise<AttemptRun> {
  if (reason === 'secret_unavailable') {
    logOf(deps).error('endpoint secret cannot be opened: its delivery ends skipped', { endpointId: input.endpointId });
  }
  if (claim) await withinDeadline(releaseClaim(deps.pool, claim), 'releasing the claim').catch(() => undefined);
  try {
    await recordSkipped(deps.pool, input, reason);
  } catch (err) {
    return { kind: 'notPosted', error: err as Error, run: claim?.run };
  }
  return { kind: 'skipped', reason };
}

/** Posts the attempt and records it; a record that cannot be written goes back to the caller to write. */
async function postAndRecord(
  deps: AttemptDeps,
  input: SignAndPostInput,
  context: DeliveryContext & { body: string },
): Promise<Attempted> {
  const result = await postAttempt(deps, input, context.endpoint, context.body, context.traceParent);
  const record = attemptRecord(input, result);
  const summary = {
    kind: 'attempted' as const,
    statusCode: result.statusCode,
    error: result.error,
    durationMs: result.durationMs,
    url: telemetryUrl(context.endpoint.url),
    ...(result.retryAfterMs === undefined ? {} : { retryAfterMs: result.retryAfterMs }),
  };
  try {
    const stored = await recordInline(deps.pool, record);
    return {
      ...summary,
      succeeded: stored.succeeded,
      recorded: true,
      recovered: stored.recovered,
      ...(stored.gone ? { gone: true as const } : {}),
    };
  } catch (err) {
    logOf(deps).warn('attempt posted but not recorded; it is recorded once the database answers', {
      error: (err as Error).message,
    });
    return { ...summary, succeeded: result.succeeded, recorded: false, recovered: false, record };
  }
}
