import { lockAccountBudget } from './account-budgets';
import { withTransaction, type Db, type Pool } from './pool';

/**
 * Operational webhook endpoints: rows of webhook_endpoints owned by the reserved account `acct_operational`
 * (migration operational-webhooks), live mode, ids owe_..., so the one delivery engine delivers to them as to any
 * endpoint. Their events are published by `publish_operational_event`, in SQL, in the transaction of the change.
 */

export const OPERATIONAL_ACCOUNT_ID = 'acct_operational';

export interface OperationalEndpointRow {
  id: string;
  url: string;
  events: string[];
  created_at: Date;
}

const COLUMNS = 'id, url, events, created_at';

/** Stores one unless `limit` live ones exist already (counted under the account's budget lock); undefined then. */
export async function insertOperationalEndpoint(
  pool: Pool,
  row: { id: string; url: string; events: string[]; sealedSecret: string; apiVersion: string },
  limit: number,
): Promise<OperationalEndpointRow | undefined> {
  return withTransaction(pool, async (tx) => {
    await lockAccountBudget(tx, 'webhook_endpoints', OPERATIONAL_ACCOUNT_ID, true);
    const { rows } = await tx.query<OperationalEndpointRow>(
      `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, secret, api_version)
       SELECT $1, $2, true, $3, $4, $5, $6
        WHERE (SELECT count(*) FROM webhook_endpoints WHERE account_id = $2 AND deleted_at IS NULL) < $7
       RETURNING ${COLUMNS}`,
      [row.id, OPERATIONAL_ACCOUNT_ID, row.url, row.events, row.sealedSecret, row.apiVersion, limit],
    );
    return rows[0];
  });
}

/** Oldest first: there are few. */
export async function listOperationalEndpoints(pool: Pool): Promise<OperationalEndpointRow[]> {
  const { rows } = await pool.query<OperationalEndpointRow>(
    `SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = $1 AND deleted_at IS NULL ORDER BY created_at, id`,
    [OPERATIONAL_ACCOUNT_ID],
  );
  return rows;
}

/** Soft delete, as a merchant endpoint's: its pending ladders read it and stop. */
export async function deleteOperationalEndpoint(pool: Pool, id: string): Promise<boolean> {
  const { rowCount } = await pool.query(
    `UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1 AND account_id = $2 AND deleted_at IS NULL`,
    [id, OPERATIONAL_ACCOUNT_ID],
  );
  return rowCount === 1;
}

/**
 * Publishes an operational event about a merchant endpoint in the caller's transaction (pass the transaction's
 * client, so the event commits with the change it reports). Returns its id, or null when no operational endpoint
 * takes the kind (nothing stored) or the endpoint is operational itself.
 */
export async function insertOperationalEvent(
  db: Db,
  kind: string,
  endpointId: string,
  delivery: { eventId: string; eventType: string; attempts: number; reason: string } | null,
): Promise<string | null> {
  const { rows } = await db.query<{ id: string | null }>('SELECT publish_operational_event($1, $2, $3::jsonb) AS id', [
    kind,
    endpointId,
    delivery === null
      ? null
      : JSON.stringify({
          event_id: delivery.eventId,
          event_type: delivery.eventType,
          attempts: delivery.attempts,
          reason: delivery.reason,
        }),
  ]);
  return rows[0]?.id ?? null;
}
