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
 * recordAttempt activity (retried by Temporal), and the early try's retries.
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
 * until `stopped()` (the worker is leaving). A try in another process waits for it (adopt.ts) rather than
 * calling an answered request lost, and relies on this loop's bounds (EARLY_RECORD_SILENCE_MS).
 */
export async function recordUntilAnswered(pool: Pool, record: AttemptRecord, stopped: () => boolean): Promise<boolean> {
  let pauseMs = EARLY_RECORD_RETRY_INITIAL_MS;
  while (!stopped()) {
    try {
      await withinDeadline(recordAttempt(pool, record), 'recording the early attempt', EARLY_RECORD_DEADLINE_MS);
      return true;
    } catch {
      await sleep(pauseMs);
      pauseMs = Math.min(pauseMs * 2, EARLY_RECORD_RETRY_MAX_MS);
    }
  }
  return false;
}
