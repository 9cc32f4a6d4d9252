import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { Agent } from 'undici';
import {
  attemptRecord,
  EARLY_ATTEMPT_RUN_PREFIX,
  FAILURE,
  type DeliveryError,
  type AttemptOutcome,
  type NotPostedDetails,
  type SignAndPostInput,
  type SkipReason,
} from '../core/delivery-contract';
import { ATTEMPT_DB_DEADLINE_MS, USER_AGENT } from '../core/delivery-policy';
import { SecretUnavailableError } from '../core/secrets';
import { signatureHeader } from '../core/signing';
import type { Pool } from '../domain/database';
import { attemptClaimHolder, loadDeliveryContext, recordAttempt, recordSkipped, releaseClaim, type AttemptClaim } from '../domain/deliveries';
import type { Config } from '../infra/config';
import { postWebhook } from '../infra/http-client';
import { observeAttempt } from '../infra/metrics';

export interface SignAndPostDeps {
  config: Config;
  pool: Pool;
  http: Agent;
  /** The first attempts this process's dispatcher posted beside their workflows' starts (activities/early-attempts.ts). */
  early?: EarlyAttemptSource;
}

/**
 * What an early attempt (made by the dispatcher before the workflow ran it) came to: its outcome when it posted,
 * else nothing was posted, and `notPostedRun` names the claim it may have left, which the workflow's try may take.
 */
export type EarlyAttemptResult = { outcome: AttemptOutcome; notPostedRun?: undefined } | { outcome?: undefined; notPostedRun?: string };

export interface EarlyAttemptSource {
  /** The early attempt of this id made in this process, once; undefined when it made none. */
  take(attemptId: string): Promise<EarlyAttemptResult> | undefined;
}

/**
 * Rejects when `work` has not settled within ATTEMPT_DB_DEADLINE_MS. A hung query is left to fail on its own
 * (its pg client is released then); this attempt does not wait for it.
 */
async function withinDeadline<T>(work: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer from the database within ${ATTEMPT_DB_DEADLINE_MS} ms`)), ATTEMPT_DB_DEADLINE_MS);
  });
  work.catch(() => undefined); // a late failure after the deadline has nobody left to tell
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Nothing was posted because our database did not answer: the workflow tries this same attempt again (it never
 * counts as failed). A local try's failure names its run, so the workflow's next try may take over its claim.
 */
function databaseUnavailable(err: unknown, claim: AttemptClaim | undefined): ApplicationFailure {
  const details: NotPostedDetails[] | undefined = claim ? [{ run: claim.run }] : undefined;
  return ApplicationFailure.create({ type: FAILURE.databaseUnavailable, message: (err as Error).message, nonRetryable: true, details });
}

/**
 * What the attempt reads before posting (claiming the attempt for this run, for a local try). Our database not
 * answering throws DatabaseUnavailable. A secret that cannot be opened is this endpoint's problem, not an
 * outage: it comes back as `secretUnavailable`, and the ladder ends.
 */
async function loadContext(
  deps: SignAndPostDeps,
  input: SignAndPostInput,
  claim: AttemptClaim | undefined,
): Promise<DeliveryContext | undefined | 'secretUnavailable'> {
  try {
    const key = deps.config.webhook.secretEncryptionKey;
    const context = loadDeliveryContext(deps.pool, input.endpointId, input.eventId, key, claim, input.deliveryId);
    return await withinDeadline(context, 'reading the endpoint');
  } catch (err) {
    if (err instanceof SecretUnavailableError) return 'secretUnavailable';
    throw databaseUnavailable(err, claim);
  }
}

type DeliveryContext = NonNullable<Awaited<ReturnType<typeof loadDeliveryContext>>>;

function skipReason(context: DeliveryContext | undefined | 'secretUnavailable'): SkipReason | undefined {
  if (context === 'secretUnavailable') return 'secret_unavailable';
  if (!context) return 'endpoint_missing';
  if (context.endpoint.deleted) return 'endpoint_deleted';
  if (context.endpoint.disabled) return 'endpoint_disabled';
  if (context.deliveryStopped) return 'delivery_stopped';
  if (context.endpoint.accountSuspended) return 'account_suspended';
  // Events are never deleted while a delivery of theirs runs; a missing row would be a bug of ours.
  if (context.body === null) return 'event_missing';
  return undefined;
}

/**
 * Nothing is posted; the delivery ends skipped. Failing to write that is failing before posting: the workflow
 * retries this attempt, which checks again, so the delivery is never left pending.
 */
async function skip(deps: SignAndPostDeps, input: SignAndPostInput, reason: SkipReason, claim: AttemptClaim | undefined): Promise<AttemptOutcome> {
  try {
    await withinDeadline(recordSkipped(deps.pool, input, reason), 'recording the skipped delivery');
  } catch (err) {
    throw databaseUnavailable(err, claim);
  }
  return { kind: 'skipped', reason };
}

function deliveryHeaders(input: SignAndPostInput, body: string, secrets: string[]): Record<string, string> {
  return {
    'content-type': 'application/json',
    'user-agent': USER_AGENT,
    // A fresh t on every attempt: receivers reject signatures older than 300 s (spec 6.2, 8).
    'service-signature': signatureHeader(body, secrets, Math.floor(Date.now() / 1000)),
    'service-event': input.eventType,
    'service-delivery': input.attemptId,
  };
}

/** Posts the attempt and records it; a record that cannot be written goes back to the workflow to write. */
async function postAndRecord(
  deps: SignAndPostDeps,
  input: SignAndPostInput,
  context: DeliveryContext & { body: string },
  warn: (message: string, meta: Record<string, unknown>) => void,
): Promise<Extract<AttemptOutcome, { kind: 'attempted' }>> {
  const { endpoint, body } = context;
  const result = await postWebhook(deps.http, {
    url: endpoint.url,
    body,
    headers: deliveryHeaders(input, body, endpoint.secrets),
    timeoutMs: input.timeoutMs,
    allowPrivate: deps.config.webhook.allowPrivateTargets,
    pinnedCertificate: endpoint.localCertificate ?? undefined,
  });
  observeAttempt(result);
  const record = attemptRecord(input, result);
  const summary = {
    kind: 'attempted' as const,
    statusCode: result.statusCode,
    error: result.error,
    durationMs: result.durationMs,
    url: endpoint.url,
  };
  try {
    const stored = await withinDeadline(recordAttempt(deps.pool, record), 'recording the attempt');
    return { ...summary, succeeded: stored.succeeded, recorded: true, recovered: stored.recovered };
  } catch (err) {
    warn('attempt posted but not recorded; the workflow will record it', { error: (err as Error).message });
    return { ...summary, succeeded: result.succeeded, recorded: false, recovered: false, record };
  }
}

/**
 * An early attempt has surely ended, recorded or not, this long after its claim: its read, its post and its
 * record each end within their deadlines.
 */
function earlyAttemptSpanMs(timeoutMs: number): number {
  return timeoutMs + 2 * ATTEMPT_DB_DEADLINE_MS;
}

/**
 * The attempt is claimed by another run. When that run is an early attempt (another process's dispatcher, or
 * this one's before a restart), its outcome is this attempt's: wait for its record, at most until the early
 * attempt has surely ended. Undefined when the claim is not an early attempt's, or it ended without a record
 * (its process died mid-post): the attempt is lost, as with any other run.
 */
async function adoptEarlyAttempt(deps: SignAndPostDeps, input: SignAndPostInput, claim: AttemptClaim, url: string): Promise<AttemptOutcome | undefined> {
  const spanMs = earlyAttemptSpanMs(input.timeoutMs);
  let pauseMs = 10;
  for (let polls = 0; polls < 1_000; polls++) {
    let holder;
    try {
      holder = await withinDeadline(attemptClaimHolder(deps.pool, input.attemptId), 'reading the attempt claim');
    } catch (err) {
      // This run holds no claim: it posted nothing, which is what its failure says.
      throw databaseUnavailable(err, claim);
    }
    if (!holder?.run?.startsWith(EARLY_ATTEMPT_RUN_PREFIX)) return undefined;
    if (holder.recorded) {
      const succeeded = holder.succeeded ?? false;
      // Whether the record cleared a failing mark is not stored: a success tells the supervisor anyway (resetting
      // a count of zero changes nothing), as a lost worker's success does.
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
      };
    }
    if (holder.age_ms > spanMs) return undefined;
    await sleep(Math.min(pauseMs, spanMs - holder.age_ms + 1));
    pauseMs = Math.min(pauseMs * 2, 500);
  }
  return undefined;
}

/**
 * Check, post and record in one activity, so a successful delivery costs one activity and two queries.
 * Temporal never retries it: a failure after posting must not post again, so it returns a typed outcome
 * instead of throwing, and leaves a record it could not write to the workflow (recordAttempt retries that).
 */
export function createSignAndPost(deps: SignAndPostDeps) {
  return async function signAndPost(input: SignAndPostInput): Promise<AttemptOutcome> {
    // A local try: this execution claims the attempt under a name of its own. The same try may run again (its
    // workflow task lost with a worker, or timed out), and only the history knows which runs posted nothing.
    const claim: AttemptClaim | undefined =
      input.claimTry === undefined
        ? undefined
        : { attemptId: input.attemptId, run: randomUUID(), try: input.claimTry, notPostedRuns: input.notPostedRuns ?? [] };
    if (claim) {
      // This process's dispatcher may have made this attempt already, beside the start: its outcome is this try's.
      const early = await deps.early?.take(input.attemptId);
      if (early?.outcome) return early.outcome;
      if (early?.notPostedRun) claim.notPostedRuns = [...claim.notPostedRuns, early.notPostedRun];
    }
    const context = await loadContext(deps, input, claim);
    if (claim && context && context !== 'secretUnavailable' && !context.fresh) {
      const adopted = await adoptEarlyAttempt(deps, input, claim, context.endpoint.url);
      if (adopted) return adopted;
      // Another run of this attempt claimed it, and its outcome is not in the history: it may have posted.
      throw ApplicationFailure.create({ type: FAILURE.attemptLost, message: `attempt ${input.attemptId} ran before on a lost worker`, nonRetryable: true });
    }
    if (context === 'secretUnavailable') {
      log.error('endpoint secret cannot be opened: its delivery ends skipped', { endpointId: input.endpointId });
    }
    const reason = skipReason(context);
    if (reason) {
      // Nothing posted and no record: the claim goes back, so a re-run of this try skips too.
      if (claim) await withinDeadline(releaseClaim(deps.pool, claim), 'releasing the claim').catch(() => undefined);
      return skip(deps, input, reason, claim);
    }
    return postAndRecord(deps, input, context as DeliveryContext & { body: string }, (message, meta) => log.warn(message, meta));
  };
}

/**
 * Attempt 1 made by the outbox dispatcher beside its workflow's start (activities/early-attempts.ts): the same
 * claim, read, post and record as the workflow's try, under a run named EARLY_ATTEMPT_RUN_PREFIX. Whatever keeps
 * it from posting (a claim already held, our database, an endpoint to skip) is left to the workflow's try,
 * which meets it again and knows what to do.
 */
export function createEarlyAttempt(deps: SignAndPostDeps, warn: (message: string) => void) {
  return async function earlyAttempt(input: SignAndPostInput): Promise<EarlyAttemptResult> {
    const claim: AttemptClaim = { attemptId: input.attemptId, run: EARLY_ATTEMPT_RUN_PREFIX + randomUUID(), try: 0, notPostedRuns: [] };
    let context: Awaited<ReturnType<typeof loadContext>>;
    try {
      context = await loadContext(deps, input, claim);
    } catch {
      return { notPostedRun: claim.run };
    }
    if (context && context !== 'secretUnavailable' && !context.fresh) return {};
    if (skipReason(context)) {
      await withinDeadline(releaseClaim(deps.pool, claim), 'releasing the claim').catch(() => undefined);
      return { notPostedRun: claim.run };
    }
    const outcome = await postAndRecord(deps, input, context as DeliveryContext & { body: string }, (message) => warn(message));
    return { outcome: { ...outcome, early: true } };
  };
}
