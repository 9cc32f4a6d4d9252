import type { Pool, PoolClient } from 'pg';
import type { ParcelEvent } from '../types';

/**
 * The merchant's own table, in the merchant's database: the example creates it itself rather than through the
 * engine's migrations, because a merchant running this has none of our schema.
 */
export const EVENTS_TABLE_DDL = `
CREATE TABLE IF NOT EXISTS received_webhook_events (
  event_id     text PRIMARY KEY,
  type         text NOT NULL,
  body         text NOT NULL,
  delivery_id  text,
  received_at  timestamptz NOT NULL DEFAULT now(),
  processed_at timestamptz
)`;

/** The last parcel state applied, per parcel: an event with a sequence not above it is stale. */
export const PARCEL_SEQUENCES_TABLE_DDL = `
CREATE TABLE IF NOT EXISTS applied_parcel_sequences (
  parcel_id  text PRIMARY KEY,
  sequence   integer NOT NULL
)`;

export async function ensureEventsTable(pool: Pool): Promise<void> {
  for (const ddl of [EVENTS_TABLE_DDL, PARCEL_SEQUENCES_TABLE_DDL]) {
    try {
      await pool.query(ddl);
    } catch (err) {
      // Two receivers starting together can both pass IF NOT EXISTS; the loser's duplicate error means "exists".
      const code = (err as { code?: string }).code;
      if (code !== '23505' && code !== '42P07') throw err;
    }
  }
}

/**
 * In the processing transaction: records the event's sequence as its parcel's latest state and returns true,
 * or returns false when a state as new or newer was already applied (a stale event, to drop). The parcel's row
 * stays locked until the transaction ends, so two events of one parcel are never applied side by side. An event
 * without a parcel sequence is never stale. One table per endpoint's mode: parcel ids are the service's own.
 */
export async function applyParcelSequence(client: PoolClient, event: ParcelEvent): Promise<boolean> {
  // In the newest version every kind names its parcel in data.parcel, a settlement included. A body in another
  // shape (an endpoint pinned to an older version) is never taken for stale.
  const parcelId: unknown = (event.data as Partial<ParcelEvent['data']>).parcel?.id;
  if (typeof event.sequence !== 'number' || typeof parcelId !== 'string') return true;
  const result = await client.query(
    `INSERT INTO applied_parcel_sequences (parcel_id, sequence) VALUES ($1, $2)
     ON CONFLICT (parcel_id) DO UPDATE SET sequence = EXCLUDED.sequence
      WHERE applied_parcel_sequences.sequence < EXCLUDED.sequence`,
    [parcelId, event.sequence],
  );
  return result.rowCount === 1;
}

/**
 * Stores the event once per id (the same event arrives again on every retry). Returns false for a
 * duplicate, which the caller still answers with 2xx: the service must stop retrying either way.
 * The body is kept as the verified text, not jsonb: jsonb refuses some valid JSON (a \u0000 escape, a lone
 * surrogate, deep nesting), and a refusal here would be answered 503 on every retry of a genuine event.
 */
export async function storeEvent(
  pool: Pool,
  event: ParcelEvent,
  bodyText: string,
  deliveryId: string | undefined,
): Promise<boolean> {
  const result = await pool.query(
    `INSERT INTO received_webhook_events (event_id, type, body, delivery_id)
     VALUES ($1, $2, $3, $4)
     ON CONFLICT (event_id) DO NOTHING`,
    [event.id, event.type, bodyText, deliveryId ?? null],
  );
  return result.rowCount === 1;
}

/**
 * Locks the event's row if it still awaits processing. The lock, the merchant's own writes and processed_at all
 * share one transaction, so a crash or a concurrent duplicate can never apply the same event twice.
 */
export async function lockUnprocessed(client: PoolClient, eventId: string): Promise<ParcelEvent | undefined> {
  const result = await client.query<{ body: string }>(
    'SELECT body FROM received_webhook_events WHERE event_id = $1 AND processed_at IS NULL FOR UPDATE',
    [eventId],
  );
  const body = result.rows[0]?.body;
  // Parsed and checked by constructEvent before it was stored.
  return body === undefined ? undefined : (JSON.parse(body) as ParcelEvent);
}

export async function markProcessed(client: PoolClient, eventId: string): Promise<void> {
  await client.query('UPDATE received_webhook_events SET processed_at = now() WHERE event_id = $1', [eventId]);
}

/** Events stored but never processed (the process stopped between replying and finishing the work). */
export async function unprocessedEventIds(pool: Pool, limit = 1000): Promise<string[]> {
  const result = await pool.query<{ event_id: string }>(
    'SELECT event_id FROM received_webhook_events WHERE processed_at IS NULL ORDER BY received_at LIMIT $1',
    [limit],
  );
  return result.rows.map((row) => row.event_id);
}
