import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishEvent } from '../../src/domain/events';
import type { DeliverEventResult } from '../../src/core/delivery-contract';
import { deliveryResult } from '../helpers/delivery';
import { buildReceiver, type Receiver } from '../../src/receiver/example/server';
import { FIXTURES, testConfig } from '../helpers/env';
import { createAccountWithKey } from '../helpers/fixtures';
import { apiFixture, type ApiFixture } from '../helpers/api';
import { startTestWorker, type TestWorker } from '../helpers/temporal';
import { waitFor } from '../helpers/wait';

/**
 * An HTTPS front for the example receiver (which runs plain HTTP behind it) that forwards every delivery and,
 * for the first one, drops the connection after the receiver answered: the event is stored but the service
 * never hears the 2xx, so it retries, exactly the case a merchant must deduplicate.
 */
async function startLossyFront(upstream: string): Promise<{ url: string; forwarded: number; close(): Promise<void> }> {
  const target = new URL(upstream);
  const state = { forwarded: 0 };
  const tls = path.join(FIXTURES, 'tls');
  const server = https.createServer(
    { cert: readFileSync(path.join(tls, 'server.pem')), key: readFileSync(path.join(tls, 'server-key.pem')) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const n = ++state.forwarded;
        const forward = http.request(
          { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: req.headers },
          (answer) => {
            const body: Buffer[] = [];
            answer.on('data', (c: Buffer) => body.push(c));
            answer.on('end', () => {
              if (n === 1) return void req.socket.destroy();
              res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json' }).end(Buffer.concat(body));
            });
          },
        );
        forward.end(Buffer.concat(chunks));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}/webhooks`,
    get forwarded() {
      return state.forwarded;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('the example receiver, fed by the real engine', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '100ms,100ms,100ms,100ms,100ms' });
  let api: ApiFixture;
  let tw: TestWorker;
  let receiver: Receiver;
  let front: Awaited<ReturnType<typeof startLossyFront>>;
  const credited: string[] = [];

  beforeAll(async () => {
    api = await apiFixture({ config: config });
    tw = await startTestWorker(config);
  });
  afterAll(async () => {
    await front?.close();
    await receiver?.close();
    await tw?.stop();
    await api?.close();
  });

  it('verifies with the registered secret, and credits a retried cod.settled once', async () => {
    const merchant = await createAccountWithKey(api.pool, { mode: 'live' });
    // The URL is registered before the receiver exists (its secret comes from registration): reserve a port.
    const upstreamPort = await new Promise<number>((resolve) => {
      const probe = http.createServer().listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    front = await startLossyFront(`http://127.0.0.1:${upstreamPort}/webhooks`);
    const registered = await api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: merchant.headers,
      payload: { url: front.url, events: ['cod.settled'] },
    });
    expect(registered.statusCode).toBe(200);
    const secret: string = registered.json().secret;
    expect(secret).toMatch(/^whsec_/);
    receiver = await buildReceiver({
      pool: api.pool,
      secrets: secret,
      onEvent: async (event) => {
        if (event.type === 'cod.settled') credited.push(event.id);
      },
    });
    await receiver.listen(upstreamPort);

    const published = await publishEvent(
      { pool: tw.pool },
      {
        accountId: merchant.accountId,
        livemode: true,
        type: 'cod.settled',
        data: {
          parcel: { id: 'p_e2e_1', parcel_number: 'PN-E2E-1' },
          cod_settlement: {
            id: 'cs_e2e_1',
            amount: 1450,
            currency: 'KES',
            settled_at: 1795300000,
          },
        },
      },
    );
    const result = (await deliveryResult(tw.client, published.event.id)) as DeliverEventResult;
    expect(result.endpoints[0]).toMatchObject({ outcome: 'delivered', attempts: 2 });
    expect(front.forwarded).toBe(2);

    const { rows: attempts } = await api.pool.query(
      'SELECT attempt, succeeded, error FROM delivery_attempts WHERE event_id = $1 ORDER BY attempt',
      [published.event.id],
    );
    expect(attempts).toEqual([
      { attempt: 1, succeeded: false, error: 'connection_reset' },
      { attempt: 2, succeeded: true, error: null },
    ]);
    const stored = await waitFor(
      async () => {
        const { rows } = await api.pool.query(
          'SELECT event_id, processed_at FROM received_webhook_events WHERE event_id = $1',
          [published.event.id],
        );
        return rows.length === 1 && rows[0].processed_at ? rows : undefined;
      },
      { what: 'the receiver to store and process the event' },
    );
    expect(stored).toHaveLength(1);
    await waitFor(() => receiver.processor.drain().then(() => true), { what: 'processing to settle' });
    expect(credited.filter((id) => id === published.event.id)).toHaveLength(1);
  });
});
