import type { DeliveryTrigger } from '../core/delivery-contract';
import type { Pool } from './pool';

/**
 * Table deliveries: one ladder of attempts of one event to one endpoint, with what started it. Automatic
 * deliveries are made with their event (db/events.ts), progress is written with each attempt
 * (db/delivery-attempts.ts); this module holds the rest.
 */

/**
 * A fresh delivery id made in SQL, for rows made by set-based statements: dly_ + a uuid's 32 hex digits (as
 * attempt ids are dlv_ + 32 hex digits), random like newId's.
 */
export const SQL_NEW_DELIVERY_ID = `'dly_' || replace(gen_random_uuid()::text, '-', '')`;

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed' | 'skipped';

export interface DeliveryRow {
  id: string;
  event_id: string;
  endpoint_id: string;
  account_id: string;
  livemode: boolean;
  trigger: DeliveryTrigger;
  status: DeliveryStatus;
  reason: string | null;
  attempts: number;
  last_status_code: number | null;
  last_attempt_at: Date | null;
  created_at: Date;
}

/** Which delivery: its id, or (for attempts of older histories) the event's automatic delivery to the endpoint. */
export interface DeliveryRef {
  deliveryId?: string;
  eventId: string;
  endpointId: string;
}

/** The attempt checked the endpoint and posted nothing: the delivery ends with the reason, unless it already ended. */
export async function markDeliverySkipped(pool: Pool, ref: DeliveryRef, reason: string): Promise<void> {
  await pool.query(
    `UPDATE deliveries SET status = 'skipped', reason = $4
      WHERE id = COALESCE($1::text,
                          (SELECT id FROM deliveries WHERE event_id = $2 AND endpoint_id = $3 AND trigger = 'automatic'))
        AND status = 'pending'`,
    [ref.deliveryId ?? null, ref.eventId, ref.endpointId, reason],
  );
}

/** Every delivery of an event, oldest first (the order they were made in). */
export async function listEventDeliveries(pool: Pool, eventId: string): Promise<DeliveryRow[]> {
  const { rows } = await pool.query<DeliveryRow>(
    'SELECT * FROM deliveries WHERE event_id = $1 ORDER BY created_at, id',
    [eventId],
  );
  return rows;
}
