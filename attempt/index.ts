/**
 * The delivery attempt, end to end: one POST of one event to one endpoint under one attempt id (dlv_...), the
 * id its record is stored under and the receiver sees in Service-Delivery. Every actor that moves an attempt
 * goes through this folder; the SQL it runs lives in db/attempt-claims.ts and db/delivery-attempts.ts.
 *
 * One pipeline (run.ts runAttempt), whoever triggers it: claim (in the read's round trip), read the endpoint,
 * secrets and stored body (context.ts), skip or sign and post (post.ts), record (record.ts). Two triggers:
 * - the workflow's try (try.ts, the signAndPost activity), regular or local (inside the workflow task);
 * - the dispatcher's early try (early.ts): attempt 1 of every endpoint of a delivery (but those kept in order per
 *   parcel), posted before the start, which then carries each outcome on record, and the workflow tries nothing
 *   for those; for a one-endpoint delivery whose endpoint's rate limit holds it back, the place it took, and the
 *   start waits for it. A fan-out's start waits a short bound at most: an attempt 1 still posting is adopted by the
 *   workflow's try.
 *
 * States of an attempt (every try claims, local or regular; a regular one's loss Temporal reports as a timeout):
 *
 *   state        | stored as                            | moved by                         | to
 *   -------------+--------------------------------------+----------------------------------+------------------------
 *   unclaimed    | no claim row, no record              | a try or the early try, claiming | claimed
 *   claimed      | claim row (run R), no record         | R skipping (gives its claim back)| unclaimed, delivery skipped
 *                |                                      | R posting, record written        | recorded (the answer)
 *                |                                      | R posting, record not written    | answered
 *                |                                      | a try of a run the history saw   | claimed (by that try)
 *                |                                      |   report "not posted" by R       |
 *                |                                      | a try finding R lost (below)     | recorded (timeout)
 *   answered     | claim row (run R), the answer in R's | workflow: recordAttempt activity | recorded (the answer)
 *                | memory only                          |   (retried by Temporal)          |
 *                |                                      | early try: its writer, retrying  | recorded (the answer)
 *                |                                      |   until Postgres answers         |
 *   recorded     | delivery_attempts row; claim kept    | nobody: the first writer wins    | (final)
 *
 * How a workflow's try decides when it finds the attempt claimed by another run R:
 * - R is an early try of this process: the try takes its outcome in memory (take()), no query; an answer not
 *   yet recorded goes to the workflow's recordAttempt activity, while the early writer keeps trying too.
 * - R is an early try elsewhere (another process, or this one before a restart): adopt.ts. The try waits for R's
 *   record and adopts it; it calls R dead, and the attempt lost, only past R's span and after a window of
 *   Postgres answering with no record longer than one retry of R's writer. It never writes a timeout over an
 *   answer R still holds while both reach Postgres.
 * - R is any other run (a re-run of a try whose workflow task was lost with its worker): R may have posted, so
 *   the attempt is recorded lost (timeout), as a regular activity lost with its worker is.
 * The claim is why no attempt id is ever posted twice: only the run that holds it posts.
 */
export { EARLY_ATTEMPT_RUN_PREFIX, type AttemptClaim, type AttemptTrigger } from './claim';
export {
  loadDeliveryContext,
  loadEndpointForDelivery,
  type DeliveryContext,
  type EndpointForDelivery,
} from './context';
export type { AttemptDeps, AttemptLog } from './deps';
export { createEarlyAttempts, type EarlyAttempts, type EarlyAttemptResult, type EarlyAttemptSource } from './early';
export { recordExpiry } from './expire';
export { recordAttempt } from './record';
export { runAttempt, type AttemptRun } from './run';
export { workflowTry, type TryDeps } from './try';
