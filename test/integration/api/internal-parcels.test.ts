import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids';
import { insertAttempt } from '../../../src/db/delivery-attempts';
import { publishEvent } from '../../../src/domain/events';
import { apiFixture, type ApiFixture } from '../../helpers/api';
import { createEndpoint, parcel } from '../../helpers/delivery';
import { createAccount } from '../../helpers/fixtures';
import { waitFor } from '../../helpers/wait';

const TOKEN = 'internal-token-for-erasure-tests-0123456789';

describe('POST /internal/v1/parcels/:parcel_id/erase', () => {
  let f: ApiFixture;
  let off: ApiFixture;
  const auth = { authorization: `Bearer ${TOKEN}` };
  const erase = (parcelId: string, payload: unknown, headers: Record<string, string> = auth, app = f.app) =>
    app.inject({
      method: 'POST',
      url: `/internal/v1/parcels/${encodeURIComponent(parcelId)}/erase`,
      headers,
      payload: payload as object,
    });

  beforeAll(async () => {
    f = await apiFixture({ env: { INTERNAL_API_TOKEN: TOKEN } });
    off = await apiFixture({ pool: f.pool });
  });
  afterAll(async () => {
    await off?.close();
    await f?.close();
  });

  it('does not exist without INTERNAL_API_TOKEN, refuses a wrong token and a bad body', async () => {
    expect((await erase('p', { account_id: 'acct_x' }, auth, off.app)).statusCode).toBe(404);
    const wrong = await erase('p', { account_id: 'acct_x' }, { authorization: `Bearer ${TOKEN}x` });
    expect(wrong.statusCode).toBe(401);
    expect(wrong.json().error.code).toBe('invalid_internal_token');
    expect((await erase('p', {})).statusCode).toBe(400);
    expect((await erase('p', { account_id: 'acct_x', extra: 1 })).statusCode).toBe(400);
    const missing = await erase('p', { account_id: 'acct_nobody' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().error.code).toBe('resource_missing');
  });

  it("erases the values from the stored answers of the parcel's attempts, raw, JSON-escaped and cut off", async () => {
    const accountId = await createAccount(f.pool);
    const endpoint = await createEndpoint(f.pool, { accountId, url: 'https://receiver.example/hook' });
    const personal = { recipient_name: 'Amina "Wanjirü" Otieno', description: 'Two shirts\nfor Amina' };
    const parcelId = `p-${newId('event').slice(4)}`;
    const published = await publishEvent(
      { pool: f.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel({ id: parcelId, ...personal }) } },
    );
    const { rows } = await f.pool.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = $1', [
      published.event.id,
    ]);
    const answers = [
      `{"got":${JSON.stringify(personal.recipient_name)},"d":${JSON.stringify(personal.description)}}`,
      `name: ${personal.recipient_name}; note: ${personal.description}`,
      `${'x'.repeat(470)}{"name":"Amina \\"Wanj`,
      'nothing personal',
    ];
    for (const [i, answer] of answers.entries())
      await f.pool.query(
        `INSERT INTO delivery_attempts (id, endpoint_id, event_id, event_type, account_id, livemode, attempt,
                                        status_code, response_body, duration_ms, succeeded, delivery_id)
         VALUES ($1, $2, $3, 'parcel.created', $4, false, $5, 500, $6, 5, false, $7)`,
        [newId('attempt'), endpoint.id, published.event.id, accountId, i + 1, answer, rows[0]!.id],
      );

    const erased = await erase(parcelId, { account_id: accountId });
    expect(erased.statusCode).toBe(200);
    expect(erased.json()).toEqual({ object: 'parcel_erasure', parcel_id: parcelId, events_erased: 1 });
    const stored = await f.pool.query<{ response_body: string }>(
      'SELECT response_body FROM delivery_attempts WHERE event_id = $1 ORDER BY attempt',
      [published.event.id],
    );
    expect(stored.rows.map((r) => r.response_body)).toEqual([
      '{"got":"[erased]","d":"[erased]"}',
      'name: [erased]; note: [erased]',
      `${'x'.repeat(470)}{"name":"[erased]`,
      'nothing personal',
    ]);
    // Another account's erasure of the same parcel id finds nothing of its own.
    expect((await erase(parcelId, { account_id: await createAccount(f.pool) })).statusCode).toBe(404);
  });

  it('stores an answer recorded while or after the erasure commits without its body', async () => {
    const accountId = await createAccount(f.pool);
    const endpoint = await createEndpoint(f.pool, { accountId, url: 'https://receiver.example/hook' });
    const parcelId = `p-${newId('event').slice(4)}`;
    const published = await publishEvent(
      { pool: f.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel({ id: parcelId }) } },
    );
    const deliveryId = (
      await f.pool.query<{ id: string }>('SELECT id FROM deliveries WHERE event_id = $1', [published.event.id])
    ).rows[0]!.id;
    const record = (attempt: number) => ({
      id: newId('attempt'),
      endpointId: endpoint.id,
      eventId: published.event.id,
      eventType: 'parcel.created',
      accountId,
      livemode: false,
      attempt,
      deliveryId,
      finalAttempt: false,
      statusCode: 500,
      // what a receiver answers from its own copy, or from the body posted before the erasure
      responseBody: `no thanks, ${String(parcel().recipient_name)}`,
      error: null,
      durationMs: 5,
      succeeded: false,
    });
    // An erasure still committing: the record waits for it, then reads its mark.
    const tx = await f.pool.connect();
    try {
      await tx.query('BEGIN');
      await tx.query('SELECT 1 FROM events WHERE id = $1 FOR UPDATE', [published.event.id]);
      await tx.query('UPDATE events SET erased_at = now() WHERE id = $1', [published.event.id]);
      const recording = insertAttempt(f.pool, record(1));
      await waitFor(
        async () =>
          (
            await f.pool.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%INSERT INTO delivery_attempts%'`,
            )
          ).rows[0]!.n > 0,
        { what: 'the record waiting for the erasure' },
      );
      await tx.query('COMMIT');
      await recording;
    } finally {
      tx.release();
    }
    await insertAttempt(f.pool, record(2));
    const stored = await f.pool.query<{ response_body: string | null; status_code: number }>(
      'SELECT response_body, status_code FROM delivery_attempts WHERE event_id = $1 ORDER BY attempt',
      [published.event.id],
    );
    expect(stored.rows).toEqual([
      { response_body: null, status_code: 500 },
      { response_body: null, status_code: 500 },
    ]);
  });
});
