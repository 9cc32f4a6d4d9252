import { ApplicationFailure } from '@temporalio/common';
import { FAILURE, type NotPostedDetails } from '../core/delivery-contract';

/**
 * The typed failures a workflow's try ends with when it posted nothing or must not post. Each is non-retryable:
 * the workflow's ladder is the only retry, and it decides from the type (core/delivery-contract.ts FAILURE).
 */

function notPosted(type: string, message: string, run: string | undefined): ApplicationFailure {
  const details: NotPostedDetails[] | undefined = run ? [{ run }] : undefined;
  return ApplicationFailure.create({ type, message, nonRetryable: true, details });
}

/**
 * Nothing was posted because our database did not answer: the workflow tries this same attempt again (it never
 * counts as failed). A local try's failure names its run, so the workflow's next try may take over its claim.
 */
export function databaseUnavailable(err: unknown, run: string | undefined): ApplicationFailure {
  return notPosted(FAILURE.databaseUnavailable, (err as Error).message, run);
}

/**
 * Reading or writing the attempt's rows failed for a reason other than our database being unreachable: a bug
 * of ours, not an outage. The workflow records the attempt failed (`internal_error`) and its ladder goes on, so
 * neither this endpoint nor the event's others wait on a retry loop that cannot succeed.
 */
export function attemptReadFailed(err: unknown): ApplicationFailure {
  const name = err instanceof Error ? err.name : typeof err;
  return ApplicationFailure.create({
    type: FAILURE.attemptReadFailed,
    message: `the attempt's database read failed with ${name}, not an outage`,
    nonRetryable: true,
  });
}

/** Another run of this attempt claimed it and its outcome is nowhere: it may have posted. */
export function attemptLost(attemptId: string): ApplicationFailure {
  const message = `attempt ${attemptId} ran before on a lost worker`;
  return ApplicationFailure.create({ type: FAILURE.attemptLost, message, nonRetryable: true });
}
