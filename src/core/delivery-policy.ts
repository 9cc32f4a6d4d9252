/**
 * Every delivery policy constant in one place. Pure values only: workflow code imports this file.
 * The ladder itself (delays, timeout, failing threshold) is configuration (infra/config.ts) and travels
 * in each workflow's input, so changing it never alters a running workflow.
 */
/**
 * Whether a delivery workflow runs its short steps (its parcel lane's check and release) as local activities,
 * inside the workflow task that decided them, given how many ladders it holds; workflows started before every
 * attempt became a regular activity (workflows/deliver-event.ts ATTEMPTS_AS_ACTIVITIES) ran their attempts by the
 * same rule. Local only for one ladder: local activities of one workflow that run side by side resolve one
 * activation each while live but all in one activation on replay, so ladders of different endpoints could issue
 * their next commands in another order on replay than they did live (a nondeterminism error). One ladder has
 * nothing to interleave with.
 */
export function localAttempts(ladders: number): boolean {
  return ladders === 1;
}

/** The characters of a receiver's answer kept with each attempt: the first ones, as Postgres counts them. */
export const RESPONSE_BODY_CHARS = 500;

/** A UTF-8 character is at most 4 bytes: this many bytes always hold the first RESPONSE_BODY_CHARS characters. */
export const RESPONSE_BODY_MAX_BYTES = RESPONSE_BODY_CHARS * 4;

/**
 * Margin between the HTTP timeout and the activity's start-to-close timeout: the activity also reads the
 * endpoint and writes the attempt record, and must not be timed out by Temporal while undici is still
 * within its own limit.
 */
export const SIGN_AND_POST_MARGIN_MS = 5_000;

/**
 * The workflow task timeout of a one-ladder event (set where the workflow is started): its local steps run
 * inside the workflow task, and a one-ladder workflow started before every attempt became a regular activity
 * made its attempts there too. Past 80% of the timeout the SDK heartbeats the task (three more history events),
 * so it must outlast a post. It is also how long a worker that dies mid-task takes to be noticed: the same as a
 * regular attempt's start-to-close timeout (timeout + margin).
 */
export function localAttemptTaskTimeoutMs(timeoutMs: number): number {
  return timeoutMs + SIGN_AND_POST_MARGIN_MS;
}

/**
 * Each database step of signAndPost (the read before posting, the record after) gives up after this long.
 * A connection that hangs instead of failing (partition, failover) would otherwise run the activity into its
 * start-to-close timeout, and the workflow would record a failed attempt for an outage of ours, possibly
 * after posting. Two of these and the HTTP timeout fit within SIGN_AND_POST_MARGIN_MS.
 */
export const ATTEMPT_DB_DEADLINE_MS = 2_000;

/**
 * The dispatcher's early first attempt (attempt/early.ts) writes a record it could not write inline again and
 * again before the start: each write gives up after EARLY_RECORD_DEADLINE_MS, the next follows after a pause that
 * doubles from EARLY_RECORD_RETRY_INITIAL_MS up to EARLY_RECORD_RETRY_MAX_MS, until the dispatcher's lease on the
 * delivery is about to lapse (dispatchLeaseMs less EARLY_RECORD_LEASE_MARGIN_MS). Past it the answer is given up
 * and the start is not made: the dispatcher that claims the delivery next records the attempt lost
 * (attempt/settle.ts).
 */
export const EARLY_RECORD_DEADLINE_MS = 1_000;
export const EARLY_RECORD_RETRY_INITIAL_MS = 50;
export const EARLY_RECORD_RETRY_MAX_MS = 1_000;
export const EARLY_RECORD_LEASE_MARGIN_MS = 5_000;

/**
 * How long a worker shutting down lets its early tries' unrecorded answers keep trying before it exits. Past it
 * the answer dies with the process, and the dispatcher that claims the delivery next records the attempt lost.
 */
export const EARLY_RECORD_DRAIN_MS = 5_000;

/**
 * An early try has surely left its first steps this long after its claim: its read, its post and its inline
 * record each end within their deadlines.
 */
export function earlyAttemptSpanMs(timeoutMs: number): number {
  return timeoutMs + 2 * ATTEMPT_DB_DEADLINE_MS;
}

/** The least an outbox claim keeps other dispatchers off a row: well above one start, even a slow one. */
export const DISPATCH_LEASE_MIN_MS = 30_000;

/**
 * How long the outbox's claim of a row keeps other dispatchers off it (domain/outbox.ts): longer than its early
 * tries' span with room for their records, so the delivery has one owner at a time. A dispatcher that finds
 * attempt 1 claimed got the row because the lease lapsed or was given back: the earlier owner's try has ended.
 */
export function dispatchLeaseMs(timeoutMs: number): number {
  return Math.max(DISPATCH_LEASE_MIN_MS, earlyAttemptSpanMs(timeoutMs) + 2 * EARLY_RECORD_LEASE_MARGIN_MS);
}

/**
 * Our database down before posting: the same attempt is retried (nothing was sent) after 1 s, doubling,
 * at most a minute apart. It never counts as a failed attempt.
 */
export const DB_UNAVAILABLE_INITIAL_BACKOFF_MS = 1_000;
export const DB_UNAVAILABLE_MAX_BACKOFF_MS = 60_000;

/** recordAttempt is retried until Postgres answers: the record must not be lost, and it is idempotent. */
export const RECORD_ATTEMPT_RETRY = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '30s',
} as const;
export const RECORD_ATTEMPT_TIMEOUT = '15s';

/** Supervisor bookkeeping activities: short, idempotent, retried until the database answers. */
export const SUPERVISOR_ACTIVITY_TIMEOUT = '30s';
export const SUPERVISOR_ACTIVITY_RETRY = {
  initialInterval: '1s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
} as const;

/**
 * Emailing the merchant of an endpoint marked failing: an SMTP outage is retried for about an hour, then given up
 * (the notification row stays, with email_sent_at null) so one bad mail server cannot block the supervisor's
 * other signals forever.
 */
export const FAILING_NOTICE_EMAIL_TIMEOUT = '1m';

export const FAILING_NOTICE_EMAIL_RETRY = {
  initialInterval: '5s',
  backoffCoefficient: 2,
  maximumInterval: '10m',
  maximumAttempts: 10,
} as const;

/** Signalling the supervisor goes through an activity (a workflow cannot signal-with-start). */
export const NOTIFY_SUPERVISOR_TIMEOUT = '30s';

/** The supervisor continues as new after this many signals, to bound its history. */
export const SUPERVISOR_SIGNALS_PER_RUN = 500;

/**
 * ...or once its history is this long, whichever comes first, even with signals still queued (they travel into
 * the next run). Far below Temporal's 51,200-event limit, and around where it suggests continuing as new.
 */
export const SUPERVISOR_MAX_HISTORY_EVENTS = 2_000;

/**
 * A supervisor with no signal for this long completes (its endpoint's health lives in the database, so nothing is
 * lost); the next signal-with-start starts a new one.
 */
export const SUPERVISOR_IDLE_TIMEOUT = '7d';

/** Abandoned events a supervisor remembers (and carries into its next run) to drop repeated signals cheaply. */
export const SUPERVISOR_RECENT_ABANDONMENTS = 1_000;

/**
 * Retention (EVENT_RETENTION): a Schedule runs purgeExpiredEvents this often; each run calls its activity at most
 * RETENTION_MAX_BATCHES_PER_RUN times, and each call deletes batches of RETENTION_BATCH_SIZE events (and as many
 * notifications), one short transaction each, back to back while there is work, for up to
 * RETENTION_ACTIVITY_BUDGET_MS (well inside the activity's timeout). A run can so delete for the whole hour:
 * retention keeps up with far more than the engine publishes, and no publish waits long on any one batch.
 */
export const RETENTION_SCHEDULE_INTERVAL = '1h';
export const RETENTION_BATCH_SIZE = 500;
export const RETENTION_MAX_BATCHES_PER_RUN = 40;
export const RETENTION_ACTIVITY_TIMEOUT = '2m';
export const RETENTION_ACTIVITY_BUDGET_MS = 90_000;
export const RETENTION_ACTIVITY_RETRY = {
  initialInterval: '5s',
  backoffCoefficient: 2,
  maximumInterval: '1m',
  maximumAttempts: 5,
} as const;

/** Sent on every post; the URL tells an endpoint's operator who is calling. */
export const USER_AGENT = 'ParcelWebhooks/1.0 (+https://github.com/parcel-webhooks/parcel-webhooks)';

/**
 * Order per parcel (workflows/parcel-order.ts): a waiting ladder reads its lane again after this long if no
 * signal woke it, doubling from PARCEL_LANE_RECHECK_INITIAL_MS to PARCEL_LANE_RECHECK_MAX_MS, and every
 * PARCEL_LANE_LONG_WAIT_RECHECK_MS once it has waited PARCEL_LANE_LONG_WAIT_MS: a parcel's events queued behind a
 * failing head may wait for its whole ladder several times over, and each re-read costs history events (6 with
 * local steps, 11 with regular ones), so a day's wait stays under about 5,000 of them (Temporal's limit is
 * 50,000). An endpoint removed releases its waiters at their next re-read.
 */
export const PARCEL_LANE_RECHECK_INITIAL_MS = 1_000;
export const PARCEL_LANE_RECHECK_MAX_MS = 30_000;
export const PARCEL_LANE_LONG_WAIT_MS = 3_600_000;
export const PARCEL_LANE_LONG_WAIT_RECHECK_MS = 300_000;
/**
 * An ordered ladder re-reads its lane at most this many times in one run of its workflow (each re-read costs 6 to
 * 11 history events); past it, once the workflow's other ladders have ended or wait too, it continues as new with
 * the waits' state, so a wait of days keeps each run's history near a thousand events.
 */
export const PARCEL_LANE_RECHECKS_PER_RUN = 100;
/** Reading the lane is retried until Postgres answers: an outage delays an ordered ladder, never skips its wait. */
export const PARCEL_LANE_CHECK = {
  startToCloseTimeout: '15s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s' },
} as const;
/** Waking the successor is best effort: past these retries its own re-read finds the lane clear. */
export const PARCEL_LANE_RELEASE = {
  startToCloseTimeout: '15s',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '30s', maximumAttempts: 5 },
} as const;

/**
 * Retry-After (on a 429 or 503 answer) is honoured up to this far ahead: an endpoint asking for more is posted to
 * again after 6 hours all the same, so a typo on its side cannot park its deliveries for days.
 */
export const RETRY_AFTER_MAX_MS = 6 * 3_600_000;

/**
 * A rate-limited endpoint's tokens of the current second are handed out only this far into the second; past it,
 * the attempt reserves a token of the next one. A limit is judged by arrivals per clock second, so a post must
 * reach the receiver within the second its token counts in.
 */
export const RATE_LIMIT_USABLE_MS = 500;

/**
 * ...and an attempt holding a token posts only until this far into the token's second (its read may have been
 * slow to come back); later it posts nothing, gives its claim back and asks again. The rest of the second is left
 * for the request to travel.
 */
export const RATE_LIMIT_POST_BY_MS = 700;

/** A throttled attempt's timer is set this long past the second it waits for, so it never wakes just before it. */
export const THROTTLE_WAKE_MARGIN_MS = 5;

/**
 * A try whose reserved second begins within this long waits for it in the try itself (attempt/try.ts), and the
 * workflow's timer for a reserved place wakes half of it early, so the ask reaches the database early in its
 * second however late the timer fires (the dev server's wake-ups measured 0.6-0.7 s late, past
 * RATE_LIMIT_USABLE_MS).
 */
export const THROTTLE_HOLD_MS = 1_000;

/**
 * A try waits in itself for a reserved second at most this far ahead, and at most THROTTLE_HOLDS times (always
 * within its own time, attempt/try.ts): a due place put off a few seconds by a backlog's crowd costs a held slot,
 * not one more workflow task per put-off.
 */
export const THROTTLE_HOLD_MAX_MS = 5_000;
export const THROTTLE_HOLDS = 5;

/**
 * How long a throttled attempt waits, from `nowMs`, before it is tried again: until `untilMs`, a reserved place
 * waking half a hold early (the try then waits for its second itself), and never less than a millisecond. The
 * workflow's throttle timer and a throttled start's delay are both this wait.
 */
export function throttleWaitMs(throttle: { untilMs: number; reservedSecond: number | null }, nowMs: number): number {
  const early = throttle.reservedSecond === null ? 0 : THROTTLE_HOLD_MS / 2;
  return Math.max(1, Math.ceil(throttle.untilMs - nowMs - early) + THROTTLE_WAKE_MARGIN_MS);
}

/**
 * A delivery not answered 2xx within DELIVERY_MAX_AGE (3 days by default, about as long as Stripe retries) is given
 * up with the reason `expired`. The time it is given up at, Unix ms; undefined when its input carries no max age.
 */
export function deliveryExpiresAtMs(input: { maxAgeMs?: number; ageFromMs?: number }): number | undefined {
  return input.maxAgeMs === undefined || input.ageFromMs === undefined ? undefined : input.ageFromMs + input.maxAgeMs;
}

/**
 * How long an attempt held by its paused endpoint waits before it checks again (the endpoint's page and
 * `POST /v1/webhooks/:id/resume` say when it resumes; nothing wakes the ladder). A quarter of how long the
 * endpoint has been paused, between 1 s and 5 minutes, so a short pause costs seconds and a long one a re-check
 * every few minutes; up to a fifth more at random (`random` in [0, 1)), so the ladders held together come back
 * spread over that fifth rather than all in one second. A workflow with several ladders held at once multiplies
 * it by their number (heldRecheckFactor): its history grows by one timer and one activity per re-check of each
 * held ladder, so as many held ladders cost it what one does.
 */
export const HELD_RECHECK_MIN_MS = 1_000;
export const HELD_RECHECK_MAX_MS = 300_000;
export function heldRecheckMs(pausedForMs: number, random: number): number {
  const base = Math.min(HELD_RECHECK_MAX_MS, Math.max(HELD_RECHECK_MIN_MS, pausedForMs / 4));
  return Math.round(base * (1 + random / 5));
}

/**
 * The held re-check of a workflow with `ladders` ladders held at once is that many times longer: each held ladder
 * adds about ten history events per re-check, so a workflow held for a whole 3-day max age adds about 9,000
 * whatever their number, far below Temporal's 51,200-event limit.
 */
export function heldRecheckFactor(ladders: number): number {
  return Math.max(1, ladders);
}

/** `410 Gone`: the receiver says the endpoint is no more. It is disabled at once (domain/endpoint-lifecycle.ts). */
export const GONE_STATUS = 410;
