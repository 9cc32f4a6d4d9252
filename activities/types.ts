/**
 * What activities and workflows exchange. Workflows import this file, so it holds types and pure functions only.
 * Every value lands in workflow history, so none carries more than RESPONSE_BODY_CHARS of a response.
 */
import type { AttemptRecord } from '../db/attempt-records';

export type { AttemptRecord };

/** Which attempt of which delivery: the fields an attempt's record shares with its input. */
type AttemptIdentity = Pick<AttemptRecord, 'endpointId' | 'eventId' | 'eventType' | 'accountId' | 'livemode' | 'attempt'>;

export interface SignAndPostInput extends AttemptIdentity {
  /** The record's id, made in the workflow so an attempt lost with its worker keeps it. */
  attemptId: string;
  // No body: the activity reads the bytes stored at publish time (db/endpoints.ts loadAttemptContext), so the
  // body is not copied into workflow history on every attempt. Inputs scheduled before this change still carry
  // a `body` field; it is the same bytes and is ignored.
  timeoutMs: number;
}

export type SkipReason = 'endpoint_missing' | 'endpoint_deleted' | 'account_suspended' | 'event_missing';

export type AttemptOutcome =
  | { kind: 'skipped'; reason: SkipReason }
  | {
      kind: 'attempted';
      succeeded: boolean;
      statusCode: number | null;
      error: string | null;
      durationMs: number;
      url: string;
      /** false: the inline write failed after posting; `record` must then be written by recordAttempt. */
      recorded: boolean;
      recovered: boolean;
      record?: AttemptRecord;
    };

export type SupervisorSignal =
  | { kind: 'abandoned'; eventId: string; attemptCount: number; failingThreshold?: number }
  | { kind: 'deliverySucceeded'; eventId: string };

export interface NotifySupervisorInput {
  endpointId: string;
  failingThreshold: number;
  /** For the supervisor's summary line; absent when no attempt reached the endpoint's row. */
  url?: string;
  signal: SupervisorSignal;
}

export interface MarkFailingInput {
  endpointId: string;
  streak: number;
  /** First abandoned event of this episode: with the endpoint it names the notification, so retries add none. */
  episodeStartEventId: string;
}

/** What an attempt ended with; the rest of its record comes from the attempt's input. */
export type AttemptResult = Pick<AttemptRecord, 'statusCode' | 'responseBody' | 'error' | 'durationMs' | 'succeeded'>;

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
    ...result,
  };
}
