import { preparedStatement, type Pool } from './pool';

/**
 * Table attempt_claims: which execution of a local attempt may post it. One row per attempt id, held by one run
 * (one execution of one try, or the dispatcher's early first attempt), written in the same statement that reads
 * the endpoint before posting, and kept after the attempt's record (retention deletes it with its attempt).
 *
 * Why it exists: a local attempt runs inside a workflow task, so a worker that dies mid-post leaves no trace in
 * history and the next worker runs the same try again, with the same attempt id. The claim tells that re-run the
 * post may already have gone out, so the attempt is recorded lost (a timeout) instead of posted twice.
 *
 * Who may take a held claim: only a run the workflow saw report that it posted nothing (the run named in its
 * not-posted failure, passed in the next try's `notPostedRuns`). Whether a try posted is a property of the
 * execution that ran it, not of its number: a re-run after a lost workflow task does not know what the lost run
 * did, so it never takes the claim. The upsert decides, not a read of the row: the primary key serialises every
 * claim of an attempt, and on a conflict the upsert waits for any claim in flight and judges the row's latest
 * version, which a read in the statement's snapshot might not see. Because the row outlives the record, a run
 * that comes after the record finds it. A row without a run can be taken by no run (NULL equals no name): at
 * worst its attempt is recorded lost, never posted twice. `try` says which try of the attempt holds it.
 */

/** One execution of a local attempt's try, claiming the attempt before it posts. */
export interface AttemptClaim {
  attemptId: string;
  /** This execution's own name, unique to it. */
  run: string;
  try: number;
  /** Runs of this attempt known (from the workflow's history) to have posted nothing: their claim may be taken. */
  notPostedRuns: string[];
}

/** What a delivery attempt reads before posting; the secrets as stored (sealed when encryption is on). */
export interface EndpointForDeliveryRow {
  id: string;
  url: string;
  account_id: string;
  livemode: boolean;
  status: 'enabled' | 'failing';
  disabled: boolean;
  deleted: boolean;
  account_suspended: boolean;
  /** Pinned certificate of a listen session's endpoint; null for every other. */
  local_certificate: string | null;
  /** Status of the delivery this attempt belongs to: 'skipped' when it was stopped from outside (disabled). */
  delivery_status: string | null;
  /** The API version the delivery renders its event in: its own, else the endpoint's (core/versions). */
  api_version: string;
  secret: string;
  /** Only while within its rotation grace. */
  previous_secret: string | null;
  /** Custom headers as stored: '{}' or sealed like the secret. */
  headers: string;
  /** The event's stored body; null when the event is unknown (or none was asked for). */
  event_body: string | null;
  /** The publish's W3C traceparent, which the POST continues; null when none was stored. */
  event_trace_parent: string | null;
  /** False when a claim was asked for and another run holds the attempt (or it is recorded): it must not post. */
  fresh: boolean;
  /** The endpoint's limit (deliveries per clock second); null when it has none. */
  rate_limit: number | null;
  /** Set when the attempt may not post yet (rate limit or Retry-After): when to ask again, Unix ms. */
  throttled_until_ms: number | null;
  /** The second (Unix seconds) of the throttled attempt's place in the queue; null when it holds none. */
  reserved_second: number | null;
  /** The second (Unix seconds) whose token this attempt may post on now; null when it needs none. */
  granted_second: number | null;
  /** How long its owner has had it paused (ms, Postgres's clock); null when it is not paused. */
  paused_for_ms: number | null;
}

/** Asked by an attempt that must take a token before posting (every attempt; not a read of the endpoint alone). */
export interface RateTokenRequest {
  /** false: a token of the current second or nothing, no reservation (the dispatcher's early attempt). */
  reserve: boolean;
  /** The second of this attempt's place in the queue, from when it was last throttled. */
  reservedSecond?: number;
  /** How far into a second its tokens are handed out (core/delivery-policy.ts RATE_LIMIT_USABLE_MS). */
  usableMs: number;
}

// The claim ($3 attempt id, $6 run, $4 try, $7 runs whose claim may be taken) rides in the endpoint's read, and so
// does the rate token ($8 reserve, $9 reserved second, $10 usable ms): asked only of an endpoint that has a limit
// or a Retry-After pending, so the others pay nothing for it. A throttled attempt claims nothing, and neither does
// one to a paused endpoint (held: no token, no claim).
const LOAD_ATTEMPT_CONTEXT = preparedStatement(
  'endpoints_load_attempt_context',
  `WITH relaxed AS (
       SELECT set_config('synchronous_commit', 'off', true) WHERE $3::text IS NOT NULL
     ), token AS (
       SELECT t.wait_until_ms, t.reserved_second, t.granted_second
         FROM webhook_endpoints e,
              LATERAL take_rate_token(e.id, e.rate_limit, e.not_before, $9::bigint, $8::boolean, $10::integer) t
        WHERE e.id = $1 AND $8::boolean IS NOT NULL AND (e.rate_limit IS NOT NULL OR e.not_before > now())
          AND e.disabled_at IS NULL AND e.deleted_at IS NULL AND e.paused_at IS NULL
          -- no token for an attempt another run holds (it must not post)
          AND NOT EXISTS (SELECT 1 FROM attempt_claims c WHERE c.attempt_id = $3::text AND NOT COALESCE(c.run = ANY ($7::text[]), false))
     ), claimed AS (
       INSERT INTO attempt_claims (attempt_id, run, try) SELECT $3::text, $6::text, $4::integer
        WHERE $3::text IS NOT NULL AND NOT EXISTS (SELECT 1 FROM token WHERE wait_until_ms IS NOT NULL)
          -- a paused endpoint's attempt is held: it claims nothing, as a throttled one
          AND NOT EXISTS (SELECT 1 FROM webhook_endpoints p WHERE p.id = $1 AND p.paused_at IS NOT NULL)
       ON CONFLICT (attempt_id) DO UPDATE SET run = EXCLUDED.run, try = EXCLUDED.try, claimed_at = now()
        WHERE attempt_claims.run = ANY ($7::text[])
       RETURNING 1
     )
     SELECT e.id, e.url, e.account_id, e.livemode, e.status,
            e.disabled_at IS NOT NULL AS disabled,
            e.deleted_at IS NOT NULL AS deleted,
            a.status = 'suspended' AS account_suspended,
            e.secret, e.headers,
            CASE WHEN e.previous_secret_expires_at > now() THEN e.previous_secret END AS previous_secret,
            ev.body AS event_body,
            ev.trace_parent AS event_trace_parent,
            $3::text IS NULL
              OR (EXISTS (SELECT 1 FROM claimed) AND NOT EXISTS (SELECT 1 FROM delivery_attempts WHERE id = $3::text)) AS fresh,
            e.local_certificate, e.rate_limit,
            (SELECT wait_until_ms FROM token) AS throttled_until_ms,
            (SELECT reserved_second FROM token) AS reserved_second,
            (SELECT granted_second FROM token) AS granted_second,
            d.status AS delivery_status,
            (extract(epoch FROM now() - e.paused_at) * 1000)::float8 AS paused_for_ms,
            COALESCE(d.api_version, e.api_version) AS api_version
       FROM webhook_endpoints e JOIN accounts a ON a.id = e.account_id LEFT JOIN relaxed ON true
            -- the event and the delivery, each read once: absent rows read as nulls
            LEFT JOIN events ev ON ev.id = $2::text
            LEFT JOIN deliveries d
              ON d.id = COALESCE($5::text, (SELECT id FROM deliveries
                                             WHERE event_id = $2::text AND endpoint_id = $1 AND trigger = 'automatic'))
      WHERE e.id = $1`,
);

/**
 * The endpoint, the event's stored body and the delivery's status in one round trip, claiming the attempt in the
 * same statement when a claim is given (a local attempt then pays one row write, not one more query), and taking
 * the endpoint's rate token when `token` is given (take_rate_token, in the endpoint-rate-limits migration). Not
 * scoped by account: the caller holds an endpoint id from the event's fan-out snapshot.
 *
 * The claim's commit does not wait for the WAL flush, which would come before every post (docs/performance.md
 * says what it saves): a claim is lost only if Postgres itself crashes before its WAL writer flushes it while
 * the worker also dies mid-post, and that costs one repeated POST with the same Service-Delivery id, never a lost
 * delivery.
 * set_config(..., true) lasts for this statement's own transaction only.
 */
export async function loadAttemptContext(
  pool: Pool,
  endpointId: string,
  eventId: string | null,
  options: { claim?: AttemptClaim; deliveryId?: string; token?: RateTokenRequest } = {},
): Promise<EndpointForDeliveryRow | undefined> {
  const { rows } = await pool.query<EndpointForDeliveryRow>({
    ...LOAD_ATTEMPT_CONTEXT,
    values: [
      endpointId,
      eventId,
      options.claim?.attemptId ?? null,
      options.claim?.try ?? null,
      options.deliveryId ?? null,
      options.claim?.run ?? null,
      options.claim?.notPostedRuns ?? [],
      options.token?.reserve ?? null,
      options.token?.reservedSecond ?? null,
      options.token?.usableMs ?? null,
    ],
  });
  return rows[0];
}

/**
 * A run that skipped (posted nothing, and its attempt gets no record) gives its claim back, so a re-run of its
 * try after a lost workflow task skips again instead of being recorded lost. Only its own: another run's claim
 * may stand for a post.
 */
export async function releaseAttemptClaim(pool: Pool, claim: Pick<AttemptClaim, 'attemptId' | 'run'>): Promise<void> {
  await pool.query('DELETE FROM attempt_claims WHERE attempt_id = $1 AND run = $2', [claim.attemptId, claim.run]);
}

/**
 * Claims each of `attemptIds` for `run` where nobody holds it yet: the outbox's mark on an attempt 1 it leaves to
 * the workflow (attempt/early.ts), so that a later hand-off of the same delivery posts nothing under that id.
 * Returns the claims it found already held, with their runs.
 */
export async function claimAttemptsFor(
  pool: Pool,
  attemptIds: string[],
  run: string,
): Promise<Array<{ attempt_id: string; run: string }>> {
  if (attemptIds.length === 0) return [];
  // `held` reads the claims as they stood before this statement's insert: those are the ones it leaves alone.
  const { rows } = await pool.query<{ attempt_id: string; run: string }>(
    `WITH held AS (SELECT attempt_id, run FROM attempt_claims WHERE attempt_id = ANY($1::text[])),
          claimed AS (INSERT INTO attempt_claims (attempt_id, run, try)
                      SELECT id, $2::text, 0 FROM unnest($1::text[]) AS id ON CONFLICT (attempt_id) DO NOTHING)
     SELECT attempt_id, run FROM held`,
    [attemptIds, run],
  );
  return rows;
}

/** Who holds an attempt's claim, since when, and the attempt's record when it has one. */
export interface AttemptClaimHolderRow {
  run: string | null;
  age_ms: number;
  recorded: boolean;
  status_code: number | null;
  error: string | null;
  duration_ms: number | null;
  succeeded: boolean | null;
}

const FIND_ATTEMPT_CLAIM = preparedStatement(
  'attempt_claims_find_holder',
  `SELECT c.run, (extract(epoch FROM now() - c.claimed_at) * 1000)::float8 AS age_ms,
          a.id IS NOT NULL AS recorded, a.status_code, a.error, a.duration_ms, a.succeeded
     FROM attempt_claims c LEFT JOIN delivery_attempts a ON a.id = c.attempt_id
    WHERE c.attempt_id = $1`,
);

/** Read in a statement of its own, so it sees every claim and record committed before it began. */
export async function findAttemptClaim(pool: Pool, attemptId: string): Promise<AttemptClaimHolderRow | undefined> {
  const { rows } = await pool.query<AttemptClaimHolderRow>({ ...FIND_ATTEMPT_CLAIM, values: [attemptId] });
  return rows[0];
}
