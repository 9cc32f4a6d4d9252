import { ATTEMPT_DB_DEADLINE_MS } from '../core/delivery-policy';

/** A query past the attempt's deadline: the database not answering, which infra/outages.ts counts as an outage. */
class DatabaseDeadlineError extends Error {
  readonly code = 'ETIMEDOUT';
}

/**
 * Rejects when `work` has not settled within `ms`. A hung query is left to fail on its own (its pg client is
 * released then); the attempt does not wait for it. Without it a connection that hangs instead of failing
 * (partition, failover) would run the try into its timeout, and the workflow would call the attempt lost.
 */
export async function withinDeadline<T>(work: Promise<T>, what: string, ms = ATTEMPT_DB_DEADLINE_MS): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DatabaseDeadlineError(`${what}: no answer from the database within ${ms} ms`)),
      ms,
    );
  });
  work.catch(() => undefined); // a late failure after the deadline has nobody left to tell
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
