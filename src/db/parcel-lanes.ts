import type { ParcelLaneCheck, ParcelLaneInput } from '../core/delivery-contract';
import { preparedStatement, type Pool } from './pool';

/**
 * Parcel lanes: the automatic deliveries to one endpoint of one parcel's events (account, mode, parcel id), in
 * sequence order (events.sequence, index events_parcel_lane_idx). An ordered delivery's predecessor is the lane's
 * delivery with the greatest sequence below its own; its successor, the one with the least above. Both are fixed
 * once the event is stored: a parcel's numbers are taken in commit order, and an event's deliveries are made
 * with it.
 */

// The lane's delivery before $1's, while it is still running and $1's still has to wait for it: $1 pending,
// its endpoint still ordered, registered and enabled. No row: the delivery may go.
const CHECK_LANE = preparedStatement(
  'parcel_lane_check',
  `WITH verdict AS (
         SELECT p.event_id AS wait_for, p.sequence AS wait_for_sequence
           FROM deliveries own
           JOIN webhook_endpoints we ON we.id = own.endpoint_id
          CROSS JOIN LATERAL (
                SELECT e.id AS event_id, e.sequence, d.status
                  FROM events e
                  JOIN deliveries d ON d.event_id = e.id AND d.endpoint_id = own.endpoint_id AND d.trigger = 'automatic'
                 WHERE e.account_id = $2 AND e.livemode = $3 AND e.parcel_id = $4 AND e.sequence < $5
                 ORDER BY e.sequence DESC
                 LIMIT 1) p
          WHERE own.id = $1 AND own.status = 'pending'
            AND we.ordering = 'parcel' AND we.deleted_at IS NULL AND we.disabled_at IS NULL
            AND p.status = 'pending'
       ), marked AS (
         UPDATE deliveries SET waiting_for = (SELECT wait_for FROM verdict)
          WHERE id = $1 AND waiting_for IS DISTINCT FROM (SELECT wait_for FROM verdict)
       )
       SELECT wait_for, wait_for_sequence FROM verdict`,
);

/**
 * One round trip: whether the delivery must still wait, and for which event, written on the delivery
 * (waiting_for, shown on the developers page) when that changed. A delivery's status only ever leaves
 * 'pending', so a "go" stays true: checking, then posting, never posts before the predecessor has ended.
 */
export async function checkLane(pool: Pool, input: ParcelLaneInput): Promise<ParcelLaneCheck> {
  const { rows } = await pool.query<{ wait_for: string; wait_for_sequence: number }>({
    ...CHECK_LANE,
    values: [input.deliveryId, input.accountId, input.livemode, input.parcelId, input.sequence],
  });
  const row = rows[0];
  return { waitFor: row ? { eventId: row.wait_for, sequence: row.wait_for_sequence } : null };
}

const SUCCESSOR = preparedStatement(
  'parcel_lane_successor',
  `SELECT e.id, d.status = 'pending' AND $1 = ANY (e.ordered_endpoint_ids) AS waits
     FROM events e
     JOIN deliveries d ON d.event_id = e.id AND d.endpoint_id = $1 AND d.trigger = 'automatic'
    WHERE e.account_id = $2 AND e.livemode = $3 AND e.parcel_id = $4 AND e.sequence > $5
    ORDER BY e.sequence
    LIMIT 1`,
);

/** The lane's next event after this one, when its delivery is ordered and still running (it may be waiting). */
export async function waitingSuccessor(pool: Pool, input: ParcelLaneInput): Promise<string | null> {
  const { rows } = await pool.query<{ id: string; waits: boolean }>({
    ...SUCCESSOR,
    values: [input.endpointId, input.accountId, input.livemode, input.parcelId, input.sequence],
  });
  return rows[0]?.waits ? rows[0].id : null;
}
