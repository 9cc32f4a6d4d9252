/**
 * The workflow-facing delivery contract: every message that crosses between the workflows, their activities
 * and the code that starts or signals them, defined once. Workflow code imports this file, so it holds types,
 * pure functions and Temporal definitions only. Every value here lands in workflow history: a field renamed or
 * removed must still read the histories already written (test/fixtures/histories replay them).
 */
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { defineSignal, type SignalDefinition } from '@temporalio/workflow';

// ---- Workflow ids and types ----------------------------------------------------------------------------------

export const WORKFLOW_ID = {
  deliverEvent: (eventId: string) => `event:${eventId}`,
  /** A delivery a merchant asked for (resend, recover, test): one workflow per delivery. */
  delivery: (deliveryId: string) => `delivery:${deliveryId}`,
  supervisor: (endpointId: string) => `endpoint-supervisor:${endpointId}`,
};

/** What started a delivery (table deliveries; the deliveries log's `trigger`). */
export const DELIVERY_TRIGGERS = ['automatic', 'resend', 'recover', 'test'] as const;
export type DeliveryTrigger = (typeof DELIVERY_TRIGGERS)[number];

/** Everything a delivery needs, fixed at publish time: a later config change never alters a running ladder. */
export interface DeliverEventInput {
  eventId: string;
  eventType: string;
  accountId: string;
  livemode: boolean;
  // The body stays in the events table, read by each attempt: a copy here would be history weight for nothing.
  endpointIds: string[];
  /** Endpoint id -> its delivery's id (dly_...), one per endpoint of this workflow. */
  deliveryIds: Record<string, string>;
  /**
   * What asked for this delivery. Absent: 'automatic', a publish's fan-out (workflow `event:<evt_id>`). Resend,
   * recover and test deliveries run one endpoint per workflow (`delivery:<dly_id>`); all are started alike
   * (domain/delivery-start.ts).
   */
  trigger?: DeliveryTrigger;
  retryDelaysMs: number[];
  timeoutMs: number;
  failingThreshold: number;
  /**
   * Endpoint id -> the id of its attempt 1, when an earlier hand-off's early try claimed it and the outbox leaves it
   * to the workflow (no room for an early try now): the workflow's try makes attempt 1 under that id, and meeting
   * the claim takes its record or records it lost, posting nothing again. Workflows of an earlier release carry it
   * for every attempt 1 the early try might make. A ladder without one draws attempt 1's id from uuid4() like every
   * later attempt.
   */
  firstAttemptIds?: Record<string, string>;
  /**
   * Endpoint id -> how its attempt 1 ended, when the dispatcher made it early and its record was written before
   * the start (attempt/early.ts handOff): the ladder takes it as attempt 1 and tries nothing, so a first
   * success costs the workflow one task and no activity, however many endpoints it has. An endpoint absent here:
   * its ladder makes attempt 1 (the outbox made none).
   */
  firstAttemptOutcomes?: Record<string, FirstAttemptOutcome>;
  /**
   * Endpoint id -> the place its attempt 1 holds in the endpoint's rate-limit queue (or its Retry-After), when the
   * dispatcher's early attempt found it throttled (attempt/early.ts handOff). The delivery then waits for that
   * place in the outbox (domain/outbox.ts) and the next hand-off makes attempt 1 with `reservedSecond`; a start
   * that still carries a place (one past the max age, or no room for an early attempt) is delayed until it at most
   * (domain/delivery-start.ts), and the workflow's first task makes attempt 1 with it. Only for a one-endpoint
   * delivery: a fan-out's start is never delayed for one of its endpoints. Absent: attempt 1 takes its place when
   * the workflow tries it.
   */
  firstAttemptThrottles?: Record<string, FirstAttemptThrottle>;
  /**
   * Set for an automatic delivery of an event about a parcel when endpoints of its snapshot asked for order per
   * parcel: their ladders wait for the parcel's event before this one (workflows/parcel-order.ts). Absent: every
   * ladder starts at once.
   */
  parcelOrder?: ParcelOrder;
  /**
   * DELIVERY_MAX_AGE, fixed at hand-off like the ladder: a ladder not answered 2xx by `ageFromMs + maxAgeMs` is
   * given up, its delivery failed with the reason `expired`; no wait (retry timer, rate limit, Retry-After, order
   * per parcel) runs past that time. Absent (a workflow handed off before the rule): no age limit.
   */
  maxAgeMs?: number;
  /**
   * Unix ms the age is counted from: the event's publish for its automatic deliveries, the delivery's own making
   * for one a merchant asked for (a resend of an old event is asked for now).
   */
  ageFromMs?: number;
  /**
   * An ordered ladder waiting for its parcel's earlier event re-reads its lane at most this many times in one run
   * (default PARCEL_LANE_RECHECKS_PER_RUN); past it the workflow continues as new, so a long wait keeps its
   * history bounded.
   */
  parcelRechecksPerRun?: number;
  /** Ladders of this event that ended in an earlier run of the workflow (continued as new): part of its result. */
  endedLadders?: LadderResult[];
  /** Endpoint id -> how long its ladder has been waiting for its turn, carried into a run continued as new. */
  parcelWaits?: Record<string, ParcelWaitState>;
}

/** An ordered ladder's wait for its turn, as a run continued as new takes it over. */
export interface ParcelWaitState {
  /** Unix ms the wait began (the re-check interval grows with it). */
  sinceMs: number;
  /** The interval of the next re-check. */
  recheckMs: number;
}

export type LadderResult =
  | { endpointId: string; outcome: 'delivered'; attempts: number }
  | { endpointId: string; outcome: 'abandoned'; attempts: number }
  | { endpointId: string; outcome: 'skipped'; attempts: number; reason: string }
  // not answered 2xx within DELIVERY_MAX_AGE: given up without posting again
  | { endpointId: string; outcome: 'expired'; attempts: number }
  // answered 410 Gone: the endpoint was disabled, the delivery failed, nothing more is posted
  | { endpointId: string; outcome: 'gone'; attempts: number };

export interface DeliverEventResult {
  eventId: string;
  endpoints: LadderResult[];
}

/** The endpoint's health as the supervisor last heard it from the database: its result, and carried across runs. */
export interface SupervisorSnapshot {
  abandoned: number;
  failing: boolean;
}

export interface SupervisorInput {
  endpointId: string;
  failingThreshold: number;
  state?: SupervisorSnapshot;
  /** Signals received but not yet handled when the previous run continued as new. */
  inbox?: SupervisorMessage[];
  /** Events whose abandonment was recorded lately, so a repeated signal costs no activity (bounded). */
  recentAbandonments?: string[];
  /** How long without a signal before the supervisor ends (default SUPERVISOR_IDLE_TIMEOUT); tests shorten it. */
  idleTimeoutMs?: number;
}

/** Signatures of the workflows, so callers start and signal them by name without importing workflow code. */
export type DeliverEventWorkflow = (input: DeliverEventInput) => Promise<DeliverEventResult>;
export type EndpointSupervisorWorkflow = (input: SupervisorInput) => Promise<SupervisorSnapshot>;

// ---- One attempt ---------------------------------------------------------------------------------------------

/** Why an attempt failed without an HTTP answer (or with a redirect); null in the record when we got a status. */
export const DELIVERY_ERRORS = [
  'timeout',
  'connection_refused',
  'connection_reset',
  'dns',
  'tls',
  'redirect',
  'ssrf_blocked',
  'invalid_url',
  'network',
  // the activity failed for a reason of ours (not a timeout) and the workflow recorded the attempt
  'internal_error',
] as const;
export type DeliveryError = (typeof DELIVERY_ERRORS)[number];

/** Which attempt of which delivery: shared by the attempt's input and its record. */
export interface AttemptIdentity {
  endpointId: string;
  eventId: string;
  eventType: string;
  accountId: string;
  livemode: boolean;
  attempt: number;
  /** The delivery this attempt belongs to. */
  deliveryId: string;
  /** No attempt follows this one: a failure ends the delivery as failed. */
  finalAttempt: boolean;
}

export interface SignAndPostInput extends AttemptIdentity {
  /** The record's id, made in the workflow so an attempt lost with its worker keeps it. */
  attemptId: string;
  // No body: the attempt reads the bytes stored at publish time (attempt/context.ts), so the body is not copied
  // into workflow history on every attempt.
  timeoutMs: number;
  /**
   * The how-many-th try of this attempt it is (a try not posted is tried again as the next), local or regular.
   * Every execution of a try claims the attempt under a name of its own (db/attempt-claims.ts); one that finds it
   * claimed by another posts nothing (attempt/try.ts says what it does instead). Absent: a try that claims
   * nothing (histories written before every try claimed).
   */
  claimTry?: number;
  /**
   * The executions of this attempt's earlier tries that reported, in this workflow's history, that they posted
   * nothing (the run named in their DatabaseUnavailable failure): their claims do not stop this try. Any other
   * claim may be an execution whose outcome was lost with its workflow task, and may have posted.
   */
  notPostedRuns?: string[];
  /**
   * The second (Unix seconds) of this attempt's place in its endpoint's rate-limit queue, from when it was last
   * throttled: once that second has come, the attempt posts in the first second with a token left, however late
   * it asks, and never goes to the back of the queue.
   */
  reservedSecond?: number;
}

/** What one POST ended with (infra/http-client.ts); every value fits in history (RESPONSE_BODY_CHARS). */
export interface AttemptResult {
  statusCode: number | null;
  /** First RESPONSE_BODY_CHARS characters of the answer; null when there was no answer. */
  responseBody: string | null;
  /** null when the endpoint answered with a status that is not a redirect (the status tells the rest). */
  error: DeliveryError | null;
  durationMs: number;
  succeeded: boolean;
  /**
   * A 429 or 503 answer's Retry-After, as a delay from the answer in ms (capped at RETRY_AFTER_MAX_MS): the
   * endpoint is posted to by nobody before then, and this delivery's next attempt waits at least as long.
   */
  retryAfterMs?: number;
}

/** The stored attempt (table delivery_attempts): its identity and its result. */
export interface AttemptRecord extends AttemptIdentity, AttemptResult {
  id: string;
  /**
   * The record travels through workflow history (an outcome whose inline write failed), so its answer was left
   * out: a receiver's answer often echoes the posted body, and histories hold no personal value. Stored without
   * a response body.
   */
  responseBodyWithheld?: true;
}

/** A record as it may enter workflow history: the receiver's answer left out, and saying so. */
export function recordForHistory(record: AttemptRecord): AttemptRecord {
  return { ...record, responseBody: null, responseBodyWithheld: true };
}

/**
 * A delivery given up at its max age (DeliverEventInput.maxAgeMs): stored in the deliveries log under the id drawn
 * for the attempt that was not made, with the reason `expired` and no answer.
 */
export interface ExpiryRecord extends AttemptIdentity {
  id: string;
  /** The place in the endpoint's rate-limit queue the delivery held (Unix seconds): given back with the record. */
  reservedSecond?: number;
}

/** Why a delivery ended without every attempt being made, besides a skip: the deliveries log's `reason`. */
export const EXPIRED_REASON = 'expired';

/** What recording an attempt found: idempotent on (delivery, attempt), so the first writer's outcome. */
export interface RecordResult {
  succeeded: boolean;
  /** A success cleared the endpoint's failing mark or abandoned streak: its supervisor must hear of it. */
  recovered: boolean;
  /**
   * The answer was 410 Gone: the endpoint was disabled with it (disabled_reason `gone`), this delivery ended
   * failed and its ladder stops; its other deliveries ended skipped.
   */
  gone?: true;
}

export type SkipReason =
  | 'endpoint_missing'
  | 'endpoint_deleted'
  | 'endpoint_disabled'
  // its delivery was ended from outside while the ladder waited (its endpoint disabled)
  | 'delivery_stopped'
  | 'account_suspended'
  | 'event_missing'
  // the endpoint's signing secret cannot be opened (no key of WEBHOOK_SECRET_ENCRYPTION_KEYS opens it): posting
  // unsigned or badly signed is never an option, and retrying will not fix it
  | 'secret_unavailable';

/**
 * Nothing was posted and nothing claimed: the endpoint's rate limit (or a Retry-After it answered) holds this
 * attempt back. It is not an attempt: the workflow waits `waitMs` on a durable timer, then tries the same
 * attempt again carrying `reservedSecond`, its place in the endpoint's queue.
 */
export interface Throttled {
  kind: 'throttled';
  /** When to try again, Unix ms on the database's clock (for the timer's summary). */
  untilMs: number;
  waitMs: number;
  reservedSecond: number | null;
  /** The endpoint's limit per second; null when only its Retry-After holds the attempt back. */
  rateLimit: number | null;
  /** A local try that had claimed the attempt before finding its token too late: it posted nothing. */
  notPostedRun?: string;
  /**
   * Held, not throttled: the endpoint is paused by its owner, since then (Unix ms). The wait is a re-check
   * (core/delivery-policy.ts heldRecheckMs), no place is held, and it is no more an attempt than a throttle is.
   */
  pausedSinceMs?: number;
}

export type AttemptOutcome =
  | { kind: 'skipped'; reason: SkipReason }
  | Throttled
  | (Pick<AttemptResult, 'statusCode' | 'error' | 'durationMs' | 'retryAfterMs'> &
      RecordResult & {
        kind: 'attempted';
        /** The endpoint's origin only (core/telemetry-url.ts): outcomes are Temporal history, read by ops. */
        url: string;
        /** false: the inline write failed after posting; `record` must then be written by recordAttempt. */
        recorded: boolean;
        /** Without the answer's body (recordForHistory): it is history. */
        record?: AttemptRecord;
        /** Posted by the outbox dispatcher before the workflow's start (attempt/early.ts). */
        early?: true;
      });

/** Where a throttled attempt 1 waits before the workflow starts: a Throttled outcome's place, no attempt made. */
export type FirstAttemptThrottle = Pick<Throttled, 'untilMs' | 'reservedSecond' | 'rateLimit'>;

/** What a throttled attempt waits for and until when (UTC, to the second): the words the Temporal UI shows. */
export function throttleWait(throttle: Pick<Throttled, 'untilMs' | 'rateLimit' | 'pausedSinceMs'>): string {
  if (throttle.pausedSinceMs !== undefined) return heldWait(throttle.pausedSinceMs, throttle.untilMs);
  const why = throttle.rateLimit === null ? 'its Retry-After' : `its rate limit (${throttle.rateLimit}/s)`;
  return `waits for ${why} until ${new Date(throttle.untilMs).toISOString().slice(11, 19)}`;
}

/** A held attempt's wait, as the Temporal UI shows it: its endpoint paused since when, checked again when (UTC). */
export function heldWait(pausedSinceMs: number, untilMs: number): string {
  const at = (ms: number) => new Date(ms).toISOString().slice(11, 19);
  return `waits while its endpoint is paused (since ${at(pausedSinceMs)}), checks again at ${at(untilMs)}`;
}

/** Attempt 1 decided and on record before the workflow started: a recorded answer, or a recorded skip. */
export type FirstAttemptOutcome = Exclude<AttemptOutcome, Throttled>;

/**
 * Attempt n of one endpoint's ladder: pure, so the workflow and the dispatcher's early attempt (attempt/early.ts)
 * build attempt 1 alike, down to its record.
 */
export function attemptInput(
  input: DeliverEventInput,
  endpointId: string,
  attempt: number,
  attemptId: string,
): SignAndPostInput {
  const deliveryId = input.deliveryIds[endpointId];
  // Hand-off stores a delivery per endpoint of the snapshot before starting the workflow: a bug of ours otherwise.
  if (deliveryId === undefined) throw new Error(`event ${input.eventId} has no delivery for endpoint ${endpointId}`);
  return {
    attemptId,
    endpointId,
    eventId: input.eventId,
    eventType: input.eventType,
    accountId: input.accountId,
    livemode: input.livemode,
    attempt,
    deliveryId,
    finalAttempt: attempt === input.retryDelaysMs.length + 1,
    timeoutMs: input.timeoutMs,
  };
}

/** Pure, so both the activity and the workflow (for an attempt lost with its worker) build records alike. */
export function attemptRecord(input: SignAndPostInput, result: AttemptResult): AttemptRecord {
  return {
    id: input.attemptId,
    endpointId: input.endpointId,
    eventId: input.eventId,
    eventType: input.eventType,
    accountId: input.accountId,
    livemode: input.livemode,
    attempt: input.attempt,
    deliveryId: input.deliveryId,
    finalAttempt: input.finalAttempt,
    ...result,
  };
}

// ---- Failure types -------------------------------------------------------------------------------------------

/** ApplicationFailure types the activities throw, read by the workflows. */
export const FAILURE = {
  /** The attempt could not read or write our database before posting: nothing was sent. */
  databaseUnavailable: 'DatabaseUnavailable',
  /**
   * Not posted: the dispatcher's early try held the attempt and its outcome was not known yet. Thrown while the
   * workflow's try could meet an early try on the same attempt; histories written then hold it, and the workflow
   * still reads it as not posted.
   */
  earlyAttemptUndecided: 'EarlyAttemptUndecided',
  /**
   * A local attempt's try ran before on a worker that died before its workflow task completed (or an early try
   * that held it never recorded): the post may have gone out, so it is recorded as lost (a timeout), exactly as a
   * regular activity's lost attempt is.
   */
  attemptLost: 'AttemptLost',
  /**
   * The attempt's read or write failed with an error that is not our database being unreachable (a bug of ours):
   * nothing was sent, and the attempt is recorded failed (`internal_error`) instead of waiting on the database.
   */
  attemptReadFailed: 'AttemptReadFailed',
  /** A failed email: the failing mark and the notification row are stored by then. */
  notificationEmailFailed: 'NotificationEmailFailed',
} as const;

/** Failures before anything was posted: the workflow retries the same attempt, never counted as failed. */
export const NOT_POSTED_FAILURES: readonly string[] = [FAILURE.databaseUnavailable, FAILURE.earlyAttemptUndecided];

/** The details a try's not-posted failure carries: which execution of the try it was (its claim's run). */
export interface NotPostedDetails {
  run: string;
}

/** The run named by a not-posted failure's details (a try that claimed nothing names none). */
export function notPostedRun(details: readonly unknown[] | undefined | null): string | undefined {
  const first = details?.[0] as Partial<NotPostedDetails> | undefined;
  return typeof first?.run === 'string' ? first.run : undefined;
}

// ---- Order per parcel ----------------------------------------------------------------------------------------

/** An event's place in its parcel's lane, and which ladders of its workflow keep that order. */
export interface ParcelOrder {
  /** data.parcel.id. */
  parcelId: string;
  /** The event's `sequence` (1, 2, 3 ... per account, mode and parcel). */
  sequence: number;
  /** Endpoints of the snapshot whose ordering was 'parcel' when the event was published. */
  endpointIds: string[];
}

/**
 * One ordered ladder's lane: the automatic deliveries to one endpoint of one parcel's events (account, mode,
 * parcel id), in sequence order.
 */
export interface ParcelLaneInput {
  endpointId: string;
  /** This ladder's delivery (dly_...). */
  deliveryId: string;
  eventId: string;
  accountId: string;
  livemode: boolean;
  parcelId: string;
  sequence: number;
}

/** The delivery that must end before this one is posted; null when the ladder may go. */
export interface ParcelLaneCheck {
  waitFor: { eventId: string; sequence: number } | null;
}

/** Sent to `event:<successor>` when a ladder of an ordered lane ends: its delivery to the endpoint is over. */
export interface PredecessorDonePayload {
  eventId: string;
  endpointId: string;
}

export const predecessorDoneSignal = defineSignal<[PredecessorDonePayload]>('predecessorDone');

// ---- The endpoint supervisor's messages ----------------------------------------------------------------------

/** A delivery to the endpoint used all its attempts. */
export interface AbandonedPayload {
  eventId: string;
  attemptCount: number;
  /**
   * The threshold the event was published with: a running supervisor's start arguments are those of the event
   * that started it, possibly under an older configuration.
   */
  failingThreshold: number;
}

/** A delivery succeeded after abandonments: the streak and the failing mark are already reset in the database. */
export interface DeliverySucceededPayload {
  eventId: string;
}

export const abandonedSignal = defineSignal<[AbandonedPayload]>('abandoned');
export const deliverySucceededSignal = defineSignal<[DeliverySucceededPayload]>('deliverySucceeded');

/** A signal as the supervisor queues it (and carries across continue-as-new): its payload tagged with its name. */
export type SupervisorMessage =
  ({ kind: 'abandoned' } & AbandonedPayload) | ({ kind: 'deliverySucceeded' } & DeliverySucceededPayload);

export type SupervisorPayload = AbandonedPayload | DeliverySucceededPayload;

/** What a delivery reports to its endpoint's supervisor: a message, an abandonment without its threshold. */
export type SupervisorReport =
  | ({ kind: 'abandoned' } & Omit<AbandonedPayload, 'failingThreshold'>)
  | ({ kind: 'deliverySucceeded' } & DeliverySucceededPayload);

/** The one translation between a queued message and the signal that carries it, both ways. */
export function signalOf(message: SupervisorMessage): {
  signal: SignalDefinition<[SupervisorPayload]>;
  payload: SupervisorPayload;
} {
  const { kind, ...payload } = message;
  const signal = kind === 'abandoned' ? abandonedSignal : deliverySucceededSignal;
  return { signal, payload };
}

export function messageOf(kind: 'abandoned', payload: AbandonedPayload): SupervisorMessage;
export function messageOf(kind: 'deliverySucceeded', payload: DeliverySucceededPayload): SupervisorMessage;
export function messageOf(kind: SupervisorMessage['kind'], payload: SupervisorPayload): SupervisorMessage {
  return { kind, ...payload } as SupervisorMessage;
}

export interface NotifySupervisorInput {
  endpointId: string;
  failingThreshold: number;
  /** The endpoint's origin, for the supervisor's summary line; absent when no attempt reached the endpoint's row. */
  url?: string;
  /** notifySupervisor adds the input's threshold, so every abandonment carries its event's. */
  signal: SupervisorReport;
}

export interface FailingNoticeResult {
  notificationId: string | null;
  emailed: boolean;
}

/** One abandoned delivery, reported to the database, which owns the endpoint's health. */
export interface RecordAbandonmentInput {
  endpointId: string;
  eventId: string;
  /** The threshold the abandoned event was published with. */
  failingThreshold: number;
}

export interface RecordAbandonmentResult {
  /** The endpoint is removed (or unknown): nothing was counted, and there is nothing left to supervise. */
  endpointGone: boolean;
  /** false for a repeated report of the same abandonment, or one a later success had already overtaken. */
  counted: boolean;
  streak: number;
  failing: boolean;
  /** Set when this abandonment marked the endpoint failing: the notice to email (emailFailingNotice). */
  notificationId: string | null;
}

// ---- Retention -----------------------------------------------------------------------------------------------

/** Where a retention run has got to in the expired events, oldest first (events kept for a running delivery stay behind it). */
export interface RetentionCursor {
  /** ISO time of the last event looked at (its `created`). */
  insertedAt: string;
  id: string;
}

export interface RetentionResult {
  events: number;
  notifications: number;
  /** Developers page sign-in links and sessions. */
  signIns: number;
  /** Expired events kept because a delivery of theirs is still running. */
  kept: number;
  /** A batch was full: there may be more to delete now. */
  more: boolean;
  after?: RetentionCursor;
}

// ---- Activities ----------------------------------------------------------------------------------------------

/** What the workflows call; activities/index.ts implements it (createActivities). */
export interface DeliveryActivities {
  signAndPost(input: SignAndPostInput): Promise<AttemptOutcome>;
  recordAttempt(record: AttemptRecord): Promise<RecordResult>;
  /** Gives a delivery up at its max age: its delivery failed with the reason `expired`, a row in the log. Idempotent. */
  recordExpiry(record: ExpiryRecord): Promise<void>;
  notifySupervisor(input: NotifySupervisorInput): Promise<void>;
  recordAbandonment(input: RecordAbandonmentInput): Promise<RecordAbandonmentResult>;
  /** Emails a failing notice once, and only while the endpoint is still failing in its episode. */
  emailFailingNotice(notificationId: string): Promise<FailingNoticeResult>;
  probeDatabase(): Promise<string>;
  /** One bounded batch of retention (EVENT_RETENTION), after the cursor of the previous batch of this run. */
  deleteExpiredBatch(after?: RetentionCursor): Promise<RetentionResult>;
  /** Whether an ordered ladder must wait, and for which event; records the wait on the delivery for the page. */
  checkParcelLane(input: ParcelLaneInput): Promise<ParcelLaneCheck>;
  /** Signals the lane's next ordered delivery, if its workflow runs, that this one has ended (best effort). */
  releaseParcelSuccessor(input: ParcelLaneInput): Promise<void>;
}

// ---- Search attributes ---------------------------------------------------------------------------------------

/** Custom search attributes, so operators can find event workflows by account, mode, endpoint, event id and kind. */
export const SEARCH_ATTRIBUTES = {
  accountId: defineSearchAttributeKey('ParcelAccountId', SearchAttributeType.KEYWORD),
  livemode: defineSearchAttributeKey('ParcelLivemode', SearchAttributeType.BOOL),
  eventId: defineSearchAttributeKey('ParcelEventId', SearchAttributeType.KEYWORD),
  eventType: defineSearchAttributeKey('ParcelEventType', SearchAttributeType.KEYWORD),
  endpointIds: defineSearchAttributeKey('ParcelEndpointIds', SearchAttributeType.KEYWORD_LIST),
};

/** Name -> the SDK's type (KEYWORD_LIST): what the operator API registers, as IndexedValueType INDEXED_VALUE_TYPE_<type>. */
export const SEARCH_ATTRIBUTE_SDK_TYPES: Record<string, SearchAttributeType> = Object.fromEntries(
  Object.values(SEARCH_ATTRIBUTES).map((key) => [key.name, key.type]),
);

/** A search attribute type as the Temporal CLI, the full server's setup and docker-compose.yml spell it. */
export type CliSearchAttributeType = 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList';

/** The CLI's spelling of an SDK search attribute type: KEYWORD_LIST -> KeywordList. */
export function cliSearchAttributeType(type: SearchAttributeType): CliSearchAttributeType {
  return type
    .toLowerCase()
    .replace(/(?:^|_)([a-z])/g, (_, letter: string) => letter.toUpperCase()) as CliSearchAttributeType;
}

/** Name -> type in the CLI's spelling (KeywordList): `temporal server start-dev --search-attribute`, the full server. */
export const SEARCH_ATTRIBUTE_CLI_TYPES: Record<string, CliSearchAttributeType> = Object.fromEntries(
  Object.entries(SEARCH_ATTRIBUTE_SDK_TYPES).map(([name, type]) => [name, cliSearchAttributeType(type)]),
);
