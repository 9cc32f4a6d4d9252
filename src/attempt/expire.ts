import type { ExpiryRecord } from '../core/delivery-contract';
import { insertExpiry } from '../db/delivery-attempts';
import type { Pool } from '../db/pool';

/**
 * The give-up at a delivery's max age (DELIVERY_MAX_AGE): nothing is posted; the delivery ends failed with the
 * reason `expired` and the deliveries log shows it under the id of the attempt not made. The workflow decides when
 * (its waits end at the max age); its recordExpiry activity writes this, retried until Postgres answers.
 */
export async function recordExpiry(pool: Pool, record: ExpiryRecord): Promise<void> {
  await insertExpiry(pool, record);
}
