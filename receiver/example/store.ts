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

export async function ensureEventsTable(pool: Pool): Promise<void> {
  try {
    await pool.query(EVENTS_TABLE_DDL);
  } catch (err) {
    // Two receivers starting together can both pass IF NOT EXISTS; the loser's duplicate error means "exists".
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42P07') throw err;
  }
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
