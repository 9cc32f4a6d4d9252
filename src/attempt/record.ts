import { setTimeout as sleep } from 'node:timers/promises';
import type { AttemptRecord, RecordResult, SignAndPostInput, SkipReason } from '../core/delivery-contract';
import {
  EARLY_RECORD_DEADLINE_MS,
  EARLY_RECORD_RETRY_INITIAL_MS,
  EARLY_RECORD_RETRY_MAX_MS,
  GONE_STATUS,
} from '../core/delivery-policy';
import { markDeliverySkipped } from '../db/deliveries';
import { recordGoneAttempt } from '../domain/endpoint-lifecycle';
import { insertAttempt } from '../db/delivery-attempts';
import type { Pool } from '../db/pool';
import { withinDeadline } from './deadline';

/**
 * Records an attempt and its delivery's progress, idempotent on (delivery, attempt) so the first writer wins; a
 * success also clears the endpoint's abandoned streak and failing mark (`recovered` then says the supervisor
 * must hear of it). Every writer of an attempt's record comes through here: the try inline, the workflow's
 * recordAttempt activity (retried by Temporal), the early try's retries and the outbox settling a lost one.
 */
export async function recordAttempt(pool: Pool, record: AttemptRecord): Promise<RecordResult> {
  if (record.statusCode !== GONE_STATUS) return insertAttempt(pool, record);
  // 410 Gone: this delivery's last attempt, and the endpoint disabled with its record.
  return recordGoneAttempt(pool, record, (tx) => insertAttempt(tx, { ...record, finalAttempt: true }));
}

/** The attempt posted nothing (endpoint removed or disabled, account suspended): its delivery ends skipped. */
export async function recordSkipped(pool: Pool, input: SignAndPostInput, reason: SkipReason): Promise<void> {
  await withinDeadline(markDeliverySkipped(pool, input, reason), 'recording the skipped delivery');
}

/** The record written right after the answer, within the attempt's database deadline. */
export async function recordInline(pool: Pool, record: AttemptRecord): Promise<RecordResult> {
  return withinDeadline(recordAttempt(pool, record), 'recording the attempt');
}

/**
 * The early try's record after its inline write failed: written again and again until Postgres answers, or
 * until `stopped()` (the dispatcher's lease on the delivery is about to lapse, or the worker is leaving). What
 * the record found, or undefined when it was given up.
 */
export async function recordUntilAnswered(
  pool: Pool,
  record: AttemptRecord,
  stopped: () => boolean,
): Promise<RecordResult | undefined> {
  let pauseMs = EARLY_RECORD_RETRY_INITIAL_MS;
  while (!stopped()) {
    try {
      return await withinDeadline(recordAttempt(pool, record), 'recording the early attempt', EARLY_RECORD_DEADLINE_MS);
    } catch {
      await sleep(pauseMs);
      pauseMs = Math.min(pauseMs * 2, EARLY_RECORD_RETRY_MAX_MS);
    }
  }
  return undefined;
}
