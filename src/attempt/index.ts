/**
 * The delivery attempt, end to end: one POST of one event to one endpoint under one attempt id (dlv_...), the
 * id its record is stored under and the receiver sees in Service-Delivery. Every actor that moves an attempt
 * goes through this folder; the SQL it runs lives in db/attempt-claims.ts and db/delivery-attempts.ts.
 *
 * One pipeline (run.ts runAttempt), whoever triggers it: claim (in the read's round trip), read the endpoint,
 * secrets and stored body (context.ts), skip or sign and post (post.ts), record (record.ts). Each attempt has
 * one owner from claim to record:
 * - attempt 1 of every endpoint the outbox can post to at once is the outbox's (early.ts): its dispatcher claims,
 *   posts and records it, and only then starts the workflow, whose input carries the outcome;
 * - every other attempt is the workflow's (try.ts, the signAndPost activity, regular or local), under an id the
 *   workflow draws, so the outbox never meets it.
 *
 * States of an attempt (a local try's loss is the workflow task's; a regular one's Temporal reports as a timeout):
 *
 *   state     | stored as                   | moved by                                     | to
 *   ----------+-----------------------------+----------------------------------------------+---------------------
 *   unclaimed | no claim row, no record     | its owner, claiming in its read              | claimed
 *   claimed   | claim row (run R)           | R: posted, record written                    | recorded
 *             |                             | R: skipped (gives its claim back)            | unclaimed, skipped
 *             |                             | R: posted, record not written: the workflow's | recorded
 *             |                             |   recordAttempt activity, or the dispatcher  |
 *             |                             |   writing again within its lease             |
 *             |                             | the owner's next run, finding R lost         | recorded (timeout)
 *   recorded  | delivery_attempts row       | nobody: the first writer wins                | (final)
 *
 * "The owner's next run": a local try re-run after its workflow task was lost with a worker, or the outbox's next
 * hand-off of a delivery whose dispatcher died or gave it back (settle.ts). The run that posted nothing says so
 * (the workflow's history names it; the dispatcher remembers it), and only such a run's claim may be taken over.
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
export { createEarlyAttempts, type EarlyAttempts, type EarlyAttemptResult } from './early';
export { recordExpiry } from './expire';
export { recordAttempt } from './record';
export { runAttempt, type AttemptRun } from './run';
export { workflowTry, type TryDeps } from './try';
