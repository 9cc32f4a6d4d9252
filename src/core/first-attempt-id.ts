import { createHash } from 'node:crypto';
import { attemptIdFromUuid } from './ids';

/**
 * The id of the attempt 1 the outbox makes of a delivery (attempt/early.ts), the same from every dispatcher that
 * ever hands it off: derived from the delivery's id, so a delivery handed off again names the attempt an earlier
 * dispatcher may have claimed (dlv_ + 32 hex digits, like the ids workflows draw). Not for workflow code.
 */
export function firstAttemptId(deliveryId: string): string {
  return attemptIdFromUuid(createHash('sha256').update(`first-attempt:${deliveryId}`).digest('hex').slice(0, 32));
}
