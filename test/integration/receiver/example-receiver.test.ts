import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signatureHeader } from '../../../src/core/signing';
import type { CodSettledEvent, ParcelEvent, ParcelStageEvent } from '../../../src/receiver/index';
import { receiverConfigFromEnv } from '../../../src/receiver/example/main';
import { buildReceiver, type Receiver } from '../../../src/receiver/example/server';
import { FIXTURES } from '../../helpers/env';
import { waitFor } from '../../helpers/wait';
import { testDatabaseUrl } from '../../helpers/database';

// The example receiver over real HTTP(S) and the run's Postgres, signed by the engine's own signer.
const NOW = 1_767_225_600;
const SECRET = 'whsec_exampleReceiverTest';
const clock = { now: () => NOW };

interface Row {
  event_id: string;
  type: string;
  /** The verified body text, as received. */
  body: string;
  delivery_id: string | null;
  processed_at: Date | null;
}

function codSettled(id = `evt_${randomBytes(8).toString('hex')}`): CodSettledEvent {
  // A field the kit does not declare (the service may add one) is kept as sent.
  const settlement = { id: 'cod_1', amount: 1500, currency: 'KES', settled_at: NOW - 3, note: 'Wambūi — Nairobi ✓' };
  return {
    id,
    object: 'event',
    type: 'cod.settled',
    created: NOW - 3,
    data: { parcel: { id: 'p_1', parcel_number: 'PCL-1' }, cod_settlement: settlement },
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve: () => void = () => undefined;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe('example receiver', () => {
  let pool: pg.Pool;
  let receiver: Receiver;
  let url: string;
  const handled: string[] = [];
  const settled: Array<{ eventId: string; outcome: string }> = [];
  // Each test decides when the slow work may finish; by default at once.
  let gate: Promise<void> = Promise.resolve();
  let failNext = false;

  async function rows(eventId: string): Promise<Row[]> {
    return (await pool.query<Row>('SELECT * FROM received_webhook_events WHERE event_id = $1', [eventId])).rows;
  }

  /** The reply can reach us before the server has queued the work, so wait on the hook, bounded. */
  function outcomesOf(eventId: string, count: number): Promise<string[]> {
    return waitFor(
      () => {
        const outcomes = settled.filter((s) => s.eventId === eventId).map((s) => s.outcome);
        return outcomes.length >= count && outcomes;
      },
      { timeoutMs: 10_000, what: `${count} processing outcome(s) for ${eventId}` },
    );
  }

  function post(
    body: string,
    header: string | undefined,
    extra: Record<string, string> = {},
    target = url,
  ): Promise<Response> {
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'service-event': 'cod.settled',
      ...extra,
    };
    if (header !== undefined) headers['service-signature'] = header;
    return fetch(target, { method: 'POST', headers, body });
  }

  beforeAll(async () => {
    pool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 5 });
    // The file's database is dropped after the last test: a connection closing then is not this test's failure.
    pool.on('error', () => undefined);
    receiver = await buildReceiver({
      pool,
      secrets: SECRET,
      verify: clock,
      onProcessed: (eventId, outcome) => settled.push({ eventId, outcome }),
      onEvent: async (event) => {
        handled.push(event.id);
        await gate;
        if (failNext) {
          failNext = false;
          throw new Error('wallet service down');
        }
      },
    });
    url = await receiver.listen(0);
  });
  afterAll(async () => {
    await receiver?.close();
    await pool?.end();
  });

  it('stores a valid event, replies 200 before the slow work, then marks it processed', async () => {
    const release = deferred();
    gate = release.promise;
    const event = codSettled();
    const body = JSON.stringify(event);
    const res = await post(body, signatureHeader(body, [SECRET], NOW), { 'service-delivery': 'dlv_first' });

    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ received: true, duplicate: false });
    // The reply is in hand while the slow work is still held back: it cannot have delayed the 2xx.
    const [stored] = await rows(event.id);
    expect(stored).toMatchObject({ type: 'cod.settled', body, delivery_id: 'dlv_first', processed_at: null });

    release.resolve();
    expect(await outcomesOf(event.id, 1)).toEqual(['processed']);
    expect((await rows(event.id))[0]?.processed_at).toBeInstanceOf(Date);
    expect(handled.filter((id) => id === event.id)).toHaveLength(1);
  });

  it('answers 2xx to a retried event but stores and processes it once', async () => {
    gate = Promise.resolve();
    const event = codSettled();
    const body = JSON.stringify(event);
    const first = await post(body, signatureHeader(body, [SECRET], NOW), { 'service-delivery': 'dlv_a1' });
    // A retry carries a fresh t and a new delivery id but the same event id and bytes.
    const retry = await post(body, signatureHeader(body, [SECRET], NOW + 60), { 'service-delivery': 'dlv_a2' });

    expect([first.status, retry.status]).toEqual([200, 200]);
    expect(await retry.json()).toEqual({ received: true, duplicate: true });
    expect((await outcomesOf(event.id, 2)).sort()).toEqual(['already_processed', 'processed']);
    const stored = await rows(event.id);
    expect(stored).toHaveLength(1);
    expect(stored[0]?.delivery_id).toBe('dlv_a1');
    expect(stored[0]?.processed_at).toBeInstanceOf(Date);
    expect(handled.filter((id) => id === event.id)).toHaveLength(1);
  });

  it('applies an event once even when two copies are processed at the same time', async () => {
    const release = deferred();
    gate = release.promise;
    const event = codSettled();
    const body = JSON.stringify(event);
    expect((await post(body, signatureHeader(body, [SECRET], NOW))).status).toBe(200);
    // The queued copy holds the row lock inside the handler; a second copy must wait for it, then see it done.
    await waitFor(() => handled.includes(event.id), { timeoutMs: 10_000, what: 'handler started' });
    const second = receiver.processor.process(event.id);
    release.resolve();
    expect(await second).toBe('already_processed');
    expect(await outcomesOf(event.id, 1)).toEqual(['processed']);
    expect(handled.filter((id) => id === event.id)).toHaveLength(1);
  });

  it.each([
    ['signature_mismatch', (body: string) => signatureHeader(body, ['whsec_wrong'], NOW)],
    ['signature_mismatch', (body: string) => signatureHeader(JSON.stringify(JSON.parse(body), null, 2), [SECRET], NOW)],
    ['timestamp_outside_tolerance', (body: string) => signatureHeader(body, [SECRET], NOW - 301)],
    ['missing_signature', () => `t=${NOW}`],
    ['missing_timestamp', () => undefined],
    ['malformed_header', () => 'garbage'],
  ])('rejects %s with 400 and stores nothing', async (reason, makeHeader) => {
    const event = codSettled();
    const body = JSON.stringify(event);
    const res = await post(body, makeHeader(body));
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe(reason);
    expect(await rows(event.id)).toHaveLength(0);
  });

  it('drops a stale parcel state: an event whose sequence is not above the last one applied for its parcel', async () => {
    gate = Promise.resolve();
    const parcelId = `p_${randomBytes(6).toString('hex')}`;
    const parcel = (status: string) => ({
      id: parcelId,
      parcel_number: 'PCL-1',
      tracking_number: 'TRK-1',
      status: status.toUpperCase(),
      payment_status: 'PAID',
      total_fee: 250,
      currency: 'KES',
      description: 'Books',
      package_size: 'SMALL',
      recipient_name: 'Amina',
      pickup_run_id: 'run_1',
    });
    const parcelEvent = (sequence: number, status: string): ParcelEvent => ({
      id: `evt_${randomBytes(8).toString('hex')}`,
      object: 'event',
      type: `parcel.${status}` as ParcelStageEvent['type'],
      created: NOW - 3,
      data: { parcel: parcel(status) },
      sequence,
    });
    const deliver = async (event: ParcelEvent) => {
      const body = JSON.stringify(event);
      expect((await post(body, signatureHeader(body, [SECRET], NOW))).status).toBe(200);
      return (await outcomesOf(event.id, 1))[0];
    };
    // in_transit (2) arrives before created (1): created is stale and must not set the status back.
    const inTransit = parcelEvent(2, 'in_transit');
    const created = parcelEvent(1, 'created');
    const delivered = parcelEvent(3, 'delivered');
    const sameAsLast = parcelEvent(3, 'delivered');
    expect(await deliver(inTransit)).toBe('processed');
    expect(await deliver(created)).toBe('stale');
    expect(await deliver(delivered)).toBe('processed');
    expect(await deliver(sameAsLast)).toBe('stale');
    expect(handled.filter((id) => [inTransit.id, created.id, delivered.id, sameAsLast.id].includes(id))).toEqual([
      inTransit.id,
      delivered.id,
    ]);
    // Stored and marked processed all the same: a stale event is answered, never retried.
    expect((await rows(created.id))[0]?.processed_at).toBeInstanceOf(Date);
    // An event without a parcel sequence is never stale.
    expect(await deliver(codSettled())).toBe('processed');
  });

  it('answers other bad input with a 4xx, never a 500', async () => {
    const notEvent = '{"hello":"world"}';
    const signedNotEvent = await post(notEvent, signatureHeader(notEvent, [SECRET], NOW));
    expect([signedNotEvent.status, ((await signedNotEvent.json()) as { error: { code: string } }).error.code]).toEqual([
      400,
      'invalid_payload',
    ]);

    const empty = await post('', signatureHeader('', [SECRET], NOW));
    expect(empty.status).toBe(400);

    const wrongType = await fetch(url, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x' });
    expect(wrongType.status).toBe(415);
    expect(await wrongType.json()).toMatchObject({ error: { code: 'unsupported_media_type' } });
  });

  it('stores and processes a genuine event whose JSON Postgres jsonb would refuse (\\u0000, a lone surrogate)', async () => {
    // A merchant-written description can hold either; a 503 here would be repeated on every retry.
    const event = codSettled();
    const body = JSON.stringify(event).replace('"note":"', '"note":"nul \\u0000 and lone \\ud800 ');
    const res = await post(body, signatureHeader(body, [SECRET], NOW));
    expect(res.status).toBe(200);
    expect(await outcomesOf(event.id, 1)).toEqual(['processed']);
    expect((await rows(event.id))[0]?.body).toBe(body);
  });

  it('accepts both secrets during a rotation', async () => {
    const rotating = await buildReceiver({ pool, secrets: ['whsec_new', SECRET], verify: clock });
    try {
      const target = await rotating.listen(0);
      const event = codSettled();
      const body = JSON.stringify(event);
      const headers = { 'content-type': 'application/json; charset=utf-8' };
      const res = await post(body, signatureHeader(body, [SECRET, 'whsec_new'], NOW), headers, target);
      expect(res.status).toBe(200);
      expect(await rows(event.id)).toHaveLength(1);
    } finally {
      await rotating.close();
    }
  });

  it('leaves an event whose processing failed for processPending(), and a retry is still one row', async () => {
    gate = Promise.resolve();
    failNext = true;
    const event = codSettled();
    const body = JSON.stringify(event);
    expect((await post(body, signatureHeader(body, [SECRET], NOW))).status).toBe(200);
    expect(await outcomesOf(event.id, 1)).toEqual(['failed']);
    expect((await rows(event.id))[0]?.processed_at).toBeNull();

    expect(await receiver.processor.process(event.id)).toBe('processed');
    expect(await receiver.processor.process(event.id)).toBe('already_processed');
    expect(await rows(event.id)).toHaveLength(1);
  });

  it('replies 503 (so the service retries) when the event cannot be stored', async () => {
    const brokenPool = new pg.Pool({ connectionString: testDatabaseUrl(), max: 1 });
    brokenPool.on('error', () => undefined);
    const broken = await buildReceiver({ pool: brokenPool, secrets: SECRET, verify: clock });
    try {
      const target = await broken.listen(0);
      await brokenPool.end();
      const body = JSON.stringify(codSettled());
      const res = await post(body, signatureHeader(body, [SECRET], NOW), {}, target);
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual({
        error: { code: 'storage_unavailable', message: 'event not stored; retry later' },
      });
    } finally {
      await broken.close();
    }
  });

  it('serves https with a certificate, as the engine requires', async () => {
    const tls = path.join(FIXTURES, 'tls');
    const secure = await buildReceiver({
      pool,
      secrets: SECRET,
      verify: clock,
      https: { cert: readFileSync(path.join(tls, 'server.pem')), key: readFileSync(path.join(tls, 'server-key.pem')) },
    });
    const agent = new Agent({ connect: { ca: readFileSync(path.join(tls, 'ca.pem')) } });
    try {
      const target = await secure.listen(0);
      expect(target).toMatch(/^https:\/\/127\.0\.0\.1:\d+\/webhooks$/);
      const event = codSettled();
      const body = JSON.stringify(event);
      const res = await undiciFetch(target.replace('127.0.0.1', 'localhost'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'service-signature': signatureHeader(body, [SECRET], NOW) },
        body,
        dispatcher: agent,
      });
      expect(res.status).toBe(200);
      await waitFor(async () => (await rows(event.id))[0]?.processed_at, { timeoutMs: 10_000, what: 'processed_at' });
    } finally {
      await agent.close();
      await secure.close();
    }
  });

  it('reads its configuration from the environment, refusing half a TLS setup', () => {
    const base = { RECEIVER_DATABASE_URL: 'postgres://x/y', WEBHOOK_SECRETS: 'whsec_old, whsec_new' };
    expect(receiverConfigFromEnv(base)).toEqual({
      port: 4000,
      host: '0.0.0.0',
      databaseUrl: 'postgres://x/y',
      secrets: ['whsec_old', 'whsec_new'],
    });
    expect(
      receiverConfigFromEnv({ ...base, WEBHOOK_SECRETS: undefined, WEBHOOK_SECRET: 'whsec_1', RECEIVER_PORT: '0' }),
    ).toMatchObject({ port: 0, secrets: ['whsec_1'] });
    expect(() => receiverConfigFromEnv({ ...base, RECEIVER_TLS_CERT: 'cert.pem' })).toThrow(/RECEIVER_TLS_KEY/);
    expect(() => receiverConfigFromEnv({ RECEIVER_DATABASE_URL: 'postgres://x/y' })).toThrow(/WEBHOOK_SECRET/);
    expect(() => receiverConfigFromEnv({ WEBHOOK_SECRET: 'whsec_1' })).toThrow(/RECEIVER_DATABASE_URL/);
    expect(() => receiverConfigFromEnv({ ...base, RECEIVER_PORT: 'http' })).toThrow(/RECEIVER_PORT/);
  });
});
