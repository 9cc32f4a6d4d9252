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

/**
 * How an attempt runs. `activity`: a regular activity, scheduled through the server's task queue (11 history
 * events for a one-endpoint success). `local`: a local activity inside the workflow task that decided it (one
 * marker event, no second trip through matching; core/delivery-policy.ts LOCAL_ATTEMPT says what it keeps).
 */
export type AttemptKind = 'activity' | 'local';

/** Everything a delivery needs, fixed at publish time: a later config change never alters a running ladder. */
export interface DeliverEventInput {
  eventId: string;
  eventType: string;
  accountId: string;
  livemode: boolean;
  // The body stays in the events table, read by each attempt: a copy here would be history weight for nothing.
  // Histories started before this change carry a `body` field, which is ignored.
  endpointIds: string[];
  /**
   * Endpoint id -> its delivery's id (dly_...), one per endpoint of this workflow. Absent in histories started
   * before deliveries existed: their attempts find the event's automatic delivery by event and endpoint.
   */
  deliveryIds?: Record<string, string>;
  /**
   * What asked for this delivery. Absent: 'automatic', a publish's fan-out (workflow `event:<evt_id>`). Resend,
   * recover and test deliveries run one endpoint per workflow (`delivery:<dly_id>`); all are started alike
   * (domain/delivery-start.ts).
   */
  trigger?: DeliveryTrigger;
  retryDelaysMs: number[];
  timeoutMs: number;
  failingThreshold: number;
  /** Absent in histories started before local attempts existed: those keep running regular activities. */
  attemptKind?: AttemptKind;
  /**
   * Endpoint id -> the id of its attempt 1, fixed at hand-off from the delivery's id (domain/outbox.ts), so the
   * dispatcher may post that attempt beside the start (activities/early-attempts.ts) and every dispatcher and
   * worker names it alike. Set for one-endpoint local deliveries; absent elsewhere and in older histories,
   * whose attempt 1 takes its id from the workflow's uuid4() like every later attempt.
   */
  firstAttemptIds?: Record<string, string>;
}

export type LadderResult =
  | { endpointId: string; outcome: 'delivered'; attempts: number }
  | { endpointId: string; outcome: 'abandoned'; attempts: number }
  | { endpointId: string; outcome: 'skipped'; attempts: number; reason: string };

export interface DeliverEventResult {
  eventId: string;
  endpoints: LadderResult[];
}

export interface SupervisorSnapshot {
  abandoned: number;
  failing: boolean;
  episodeStartEventId: string | null;
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
  /** The delivery this attempt belongs to; absent in attempts of histories started before deliveries existed. */
  deliveryId?: string;
  /** No attempt follows this one: a failure ends the delivery as failed. Absent in older histories. */
  finalAttempt?: boolean;
}

export interface SignAndPostInput extends AttemptIdentity {
  /** The record's id, made in the workflow so an attempt lost with its worker keeps it. */
  attemptId: string;
  // No body: the activity reads the bytes stored at publish time (domain/deliveries.ts), so the body is not
  // copied into workflow history on every attempt. Inputs scheduled before this change still carry a `body`
  // field; it is the same bytes and is ignored.
  timeoutMs: number;
  /**
   * Set for a local attempt: the how-many-th try of this attempt it is (a try not posted because our database
   * was down is tried again as the next). Every execution of a try claims the attempt under a name of its own
   * (db/migrations/*_attempt-claims-per-run.sql); one that finds it claimed by another posts nothing
   * (FAILURE.attemptLost).
   */
  claimTry?: number;
  /**
   * The executions of this attempt's earlier tries that reported, in this workflow's history, that they posted
   * nothing (the run named in their DatabaseUnavailable failure): their claims do not stop this try. Any other
   * claim may be an execution whose outcome was lost with its workflow task, and may have posted.
   */
  notPostedRuns?: string[];
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
}

/** The stored attempt (table delivery_attempts): its identity and its result. */
export interface AttemptRecord extends AttemptIdentity, AttemptResult {
  id: string;
}

/** What recording an attempt found: idempotent on (delivery, attempt), so the first writer's outcome. */
export interface RecordResult {
  succeeded: boolean;
  /** A success cleared the endpoint's failing mark or abandoned streak: its supervisor must hear of it. */
  recovered: boolean;
}

export type SkipReason =
  | 'endpoint_missing'
  | 'endpoint_deleted'
  | 'endpoint_disabled'
  // its delivery was ended from outside while the ladder waited (its endpoint disabled)
  | 'delivery_stopped'
  | 'account_suspended'
  | 'event_missing'
  // the endpoint's signing secret cannot be opened (WEBHOOK_SECRET_ENCRYPTION_KEY changed or lost): posting
  // unsigned or badly signed is never an option, and retrying will not fix it
  | 'secret_unavailable';

export type AttemptOutcome =
  | { kind: 'skipped'; reason: SkipReason }
  | (Pick<AttemptResult, 'statusCode' | 'error' | 'durationMs'> &
      RecordResult & {
        kind: 'attempted';
        url: string;
        /** false: the inline write failed after posting; `record` must then be written by recordAttempt. */
        recorded: boolean;
        record?: AttemptRecord;
        /** Posted by the outbox dispatcher beside the workflow's start; the workflow's attempt adopted it. */
        early?: true;
      });

/**
 * Attempt n of one endpoint's ladder: pure, so the workflow and the dispatcher's early attempt
 * (activities/early-attempts.ts) build attempt 1 alike, down to its record.
 */
export function attemptInput(input: DeliverEventInput, endpointId: string, attempt: number, attemptId: string): SignAndPostInput {
  return {
    attemptId,
    endpointId,
    eventId: input.eventId,
    eventType: input.eventType,
    accountId: input.accountId,
    livemode: input.livemode,
    attempt,
    deliveryId: input.deliveryIds?.[endpointId],
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
  /** signAndPost could not read the endpoint before posting: nothing was sent. */
  databaseUnavailable: 'DatabaseUnavailable',
  /**
   * Thrown by workers before typed skips (an unopenable secret now ends its delivery skipped with reason
   * `secret_unavailable`); kept so histories that hold it replay unchanged.
   */
  secretUnavailable: 'SecretUnavailable',
  /**
   * A local attempt's try ran before on a worker that died before its workflow task completed: the post may
   * have gone out, so it is recorded as lost (a timeout), exactly as a regular activity's lost attempt is.
   */
  attemptLost: 'AttemptLost',
  /** A failed email: the failing mark and the notification row are stored by then. */
  notificationEmailFailed: 'NotificationEmailFailed',
} as const;

/** Failures before anything was posted: the workflow retries the same attempt, never counted as failed. */
export const NOT_POSTED_FAILURES: readonly string[] = [FAILURE.databaseUnavailable, FAILURE.secretUnavailable];

/**
 * The run name an early attempt claims under (activities/early-attempts.ts): a try of the workflow that finds
 * the attempt claimed by such a run waits for its record instead of calling it lost at once.
 */
export const EARLY_ATTEMPT_RUN_PREFIX = 'early:';

/** The details a local try's not-posted failure carries: which execution of the try it was (its claim's run). */
export interface NotPostedDetails {
  run: string;
}

/** The run named by a not-posted failure's details; undefined for failures written before runs were named. */
export function notPostedRun(details: readonly unknown[] | undefined | null): string | undefined {
  const first = details?.[0] as Partial<NotPostedDetails> | undefined;
  return typeof first?.run === 'string' ? first.run : undefined;
}

// ---- The endpoint supervisor's messages ----------------------------------------------------------------------

/** A delivery to the endpoint used all its attempts. */
export interface AbandonedPayload {
  eventId: string;
  attemptCount: number;
  /** The threshold the event was published with; absent in signals sent before it was carried. */
  failingThreshold?: number;
}

/** A delivery succeeded after abandonments: the streak and the failing mark are already reset in the database. */
export interface DeliverySucceededPayload {
  eventId: string;
}

export const abandonedSignal = defineSignal<[AbandonedPayload]>('abandoned');
export const deliverySucceededSignal = defineSignal<[DeliverySucceededPayload]>('deliverySucceeded');

/** A signal as the supervisor queues it (and carries across continue-as-new): its payload tagged with its name. */
export type SupervisorMessage =
  | ({ kind: 'abandoned' } & AbandonedPayload)
  | ({ kind: 'deliverySucceeded' } & DeliverySucceededPayload);

export type SupervisorPayload = AbandonedPayload | DeliverySucceededPayload;

/** The one translation between a queued message and the signal that carries it, both ways. */
export function signalOf(message: SupervisorMessage): { signal: SignalDefinition<[SupervisorPayload]>; payload: SupervisorPayload } {
  const { kind, ...payload } = message;
  const signal = kind === 'abandoned' ? abandonedSignal : deliverySucceededSignal;
  return { signal: signal as SignalDefinition<[SupervisorPayload]>, payload };
}

export function messageOf(kind: 'abandoned', payload: AbandonedPayload): SupervisorMessage;
export function messageOf(kind: 'deliverySucceeded', payload: DeliverySucceededPayload): SupervisorMessage;
export function messageOf(kind: SupervisorMessage['kind'], payload: SupervisorPayload): SupervisorMessage {
  return { kind, ...payload } as SupervisorMessage;
}

export interface NotifySupervisorInput {
  endpointId: string;
  failingThreshold: number;
  /** For the supervisor's summary line; absent when no attempt reached the endpoint's row. */
  url?: string;
  /** Without the threshold: notifySupervisor adds the input's, so every abandonment carries its event's. */
  signal: SupervisorMessage;
}

export interface MarkFailingInput {
  endpointId: string;
  streak: number;
  /** First abandoned event of this episode: with the endpoint it names the notification, so retries add none. */
  episodeStartEventId: string;
}

export interface MarkFailingResult {
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
  /** ISO time of the last event looked at. */
  insertedAt: string;
  id: string;
}

export interface RetentionResult {
  events: number;
  notifications: number;
  /** Developers page sign-in links and sessions (absent in results recorded before they were kept in bounds). */
  signIns?: number;
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
  notifySupervisor(input: NotifySupervisorInput): Promise<void>;
  recordAbandonment(input: RecordAbandonmentInput): Promise<RecordAbandonmentResult>;
  /** Emails a failing notice once, and only while the endpoint is still failing in its episode. */
  emailFailingNotice(notificationId: string): Promise<MarkFailingResult>;
  /** Supervisors that handled a signal before endpoint health moved into the database still call these two. */
  recordAbandonedStreak(endpointId: string, streak: number): Promise<void>;
  markEndpointFailing(input: MarkFailingInput): Promise<MarkFailingResult>;
  probeDatabase(): Promise<string>;
  /** One bounded batch of retention (EVENT_RETENTION), after the cursor of the previous batch of this run. */
  deleteExpiredBatch(after?: RetentionCursor): Promise<RetentionResult>;
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

/** Name -> type, for the operator API. */
export const SEARCH_ATTRIBUTE_DEFINITIONS: Record<string, SearchAttributeType> = Object.fromEntries(
  Object.values(SEARCH_ATTRIBUTES).map((key) => [key.name, key.type]),
);

/** The CLI's and server config's spelling of a search attribute type: KEYWORD_LIST -> KeywordList. */
export function searchAttributeTypeName(type: string): string {
  return type.toLowerCase().replace(/(?:^|_)([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** Name -> type as `temporal server start-dev --search-attribute` and the full server's setup spell it. */
export const SEARCH_ATTRIBUTE_TYPE_NAMES: Record<string, 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList'> =
  Object.fromEntries(
    Object.entries(SEARCH_ATTRIBUTE_DEFINITIONS).map(([name, type]) => [name, searchAttributeTypeName(type)]),
  ) as Record<string, 'Text' | 'Keyword' | 'Int' | 'Double' | 'Bool' | 'Datetime' | 'KeywordList'>;
