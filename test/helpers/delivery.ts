import type { DeliveryAttemptRow } from '../../src/db/delivery-attempts';
import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import type { DeliverEventInput, SignAndPostInput } from '../../src/core/delivery-contract';
import { newId } from '../../src/core/ids';
import type { Pool } from '../../src/db/pool';
import { publishEvent } from '../../src/domain/events';
import { waitFor } from './wait';

/** Delivery test helpers: endpoints written straight into the table, attempts read back. */

export async function createEndpoint(
  pool: Pool,
  input: { accountId: string; url: string; livemode?: boolean; events?: string[]; secret?: string },
): Promise<{ id: string; secret: string }> {
  const id = newId('endpoint');
  const secret = input.secret ?? `whsec_${newId('endpoint').slice(3)}`;
  await pool.query(
    `INSERT INTO webhook_endpoints (id, account_id, livemode, url, events, secret) VALUES ($1, $2, $3, $4, $5, $6)`,
    [id, input.accountId, input.livemode ?? false, input.url, input.events ?? [], secret],
  );
  return { id, secret };
}

/**
 * A test-mode parcel.delivered event published to one new endpoint of `accountId` (which answers nowhere), and
 * the input of its first attempt, for tests that run an attempt's statements without a workflow.
 */
export async function publishedToOneEndpoint(
  pool: Pool,
  accountId: string,
): Promise<{ endpointId: string; eventId: string; input: SignAndPostInput }> {
  const endpoint = await createEndpoint(pool, { accountId, url: 'https://merchant.example/hooks' });
  const published = await publishEvent(
    { pool },
    { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
  );
  const { rows } = await pool.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = $1', [
    published.event.id,
  ]);
  const input: SignAndPostInput = {
    attemptId: newId('attempt'),
    endpointId: endpoint.id,
    eventId: published.event.id,
    eventType: 'parcel.delivered',
    accountId,
    livemode: false,
    attempt: 1,
    deliveryId: rows[0]!.id,
    finalAttempt: false,
    timeoutMs: 1_000,
  };
  return { endpointId: endpoint.id, eventId: published.event.id, input };
}

/** The deliveries log's row, as the API reads it. */
export type AttemptRow = Omit<DeliveryAttemptRow, 'livemode' | 'created_at'>;

export async function attemptsOf(pool: Pool, endpointId: string, eventId?: string): Promise<AttemptRow[]> {
  const { rows } = await pool.query<AttemptRow>(
    `SELECT * FROM delivery_attempts WHERE endpoint_id = $1 AND ($2::text IS NULL OR event_id = $2)
      ORDER BY event_id, attempt`,
    [endpointId, eventId ?? null],
  );
  return rows;
}

/** Waits for the event's workflow to finish and returns its result. */
export async function deliveryResult(client: Client, eventId: string, timeoutMs = 30_000): Promise<unknown> {
  const handle = client.workflow.getHandle(`event:${eventId}`);
  return waitFor(
    async () => {
      const description = await handle.describe();
      return description.status.name === 'COMPLETED' ? handle.result() : undefined;
    },
    { timeoutMs, what: `workflow event:${eventId} to complete` },
  );
}

/**
 * An event published as the parcel system publishes it: POST /internal/v1/events on a running API with the internal
 * token, and any extra request headers (a `traceparent`). The answer is the caller's to check.
 */
export function publishOverHttp(
  apiUrl: string,
  token: string,
  event: { account_id: string; livemode: boolean; type: string; data: unknown },
  headers: Record<string, string> = {},
): Promise<Response> {
  return fetch(`${apiUrl}/internal/v1/events`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(event),
  });
}

export function parcel(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: '5f0c2a8e-4b7d-4c1e-9a3f-2d6b8e1f7c40',
    parcel_number: 'PCL-104233',
    tracking_number: 'TRK8842301KE',
    status: 'DELIVERED',
    payment_status: 'PAID',
    total_fee: 350,
    currency: 'KES',
    description: 'Two cotton shirts',
    package_size: 'S',
    recipient_name: 'Amina Wanjiru',
    pickup_run_id: '9a1d3c52-7e0b-4f6a-8c2d-5b4e3f1a0d97',
    ...overrides,
  };
}

/** The deliverEvent input a workflow was started with, from its history's first event. */
export function startInput(events: temporal.api.history.v1.IHistoryEvent[]): DeliverEventInput {
  const payload = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0]?.data;
  return JSON.parse(Buffer.from(payload ?? []).toString()) as DeliverEventInput;
}
