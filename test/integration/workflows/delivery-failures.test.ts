import net from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { freePort } from '../../../temporal-tools/ports';
import { startReceiver, type Receiver } from '../../helpers/receiver';
import { useDeliveryHarness } from '../../helpers/harness';

/** Each failure kind, on a two-attempt ladder: what is recorded, and that nothing is followed or retried beyond it. */
describe('delivery: failure kinds', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '10ms', DELIVERY_TIMEOUT: '500ms' });
  const h = useDeliveryHarness(config);
  let untrusted: Receiver;
  let accountId: string;

  async function deliverTo(url: string) {
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url });
    const published = await publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
    const result = await deliveryResult(h.tw.client, published.event.id);
    return { endpoint, result, attempts: await attemptsOf(h.tw.pool, endpoint.id) };
  }

  beforeAll(async () => {
    untrusted = await startReceiver({ untrusted: true });
  });
  beforeEach(async () => {
    accountId = await createAccount(h.tw.pool);
  });
  afterAll(async () => {
    await untrusted?.close();
  });

  it('records a non-2xx status with its body and no error', async () => {
    h.receiver.script('/status', { status: 422, body: 'unprocessable' });
    const { result, attempts } = await deliverTo(`${h.receiver.url}/status`);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'abandoned', attempts: 2 }] });
    expect(attempts.map((a) => [a.attempt, a.status_code, a.error, a.response_body, a.succeeded])).toEqual([
      [1, 422, null, 'unprocessable', false],
      [2, 422, null, 'unprocessable', false],
    ]);
  });

  it('fails an answer that comes after the timeout', async () => {
    h.receiver.script('/slow', { status: 200, delayMs: 2_000 });
    const { attempts } = await deliverTo(`${h.receiver.url}/slow`);
    expect(attempts.map((a) => [a.status_code, a.error, a.succeeded])).toEqual([
      [null, 'timeout', false],
      [null, 'timeout', false],
    ]);
    for (const a of attempts) expect(a.duration_ms).toBeGreaterThanOrEqual(450);
    for (const a of attempts) expect(a.duration_ms).toBeLessThan(2_000);
  });

  it('fails a closed port as connection_refused', async () => {
    const port = await freePort();
    const { attempts } = await deliverTo(`https://127.0.0.1:${port}/nobody`);
    expect(attempts.map((a) => [a.status_code, a.error])).toEqual([
      [null, 'connection_refused'],
      [null, 'connection_refused'],
    ]);
  });

  it('fails a connection closed without an answer as connection_reset', async () => {
    const server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const { attempts } = await deliverTo(`https://127.0.0.1:${port}/reset`);
      expect(attempts.map((a) => a.error)).toEqual(['connection_reset', 'connection_reset']);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('never follows a redirect', async () => {
    h.receiver.script('/moved', { status: 301, redirectTo: `${h.receiver.url}/target`, body: 'moved' });
    const { attempts } = await deliverTo(`${h.receiver.url}/moved`);
    expect(attempts.map((a) => [a.status_code, a.error, a.succeeded])).toEqual([
      [301, 'redirect', false],
      [301, 'redirect', false],
    ]);
    expect(h.receiver.at('/target')).toHaveLength(0);
  });

  it('fails a certificate nobody trusts as tls', async () => {
    const { attempts } = await deliverTo(`${untrusted.url}/tls`);
    expect(attempts.map((a) => [a.status_code, a.error])).toEqual([
      [null, 'tls'],
      [null, 'tls'],
    ]);
    expect(untrusted.at('/tls')).toHaveLength(0);
  });

  it('keeps the first 500 characters of a 1 MB answer', async () => {
    const big = `${'é'.repeat(300)}${'x'.repeat(1024 * 1024)}`;
    h.receiver.script('/big', { status: 200, body: big });
    const { result, attempts } = await deliverTo(`${h.receiver.url}/big`);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'delivered', attempts: 1 }] });
    expect(attempts[0]?.response_body).toBe(big.slice(0, 500));
    expect([...(attempts[0]?.response_body ?? '')]).toHaveLength(500);
  });

  it('records a binary answer: NUL bytes, which Postgres text refuses, do not wedge the ladder', async () => {
    // A gzip or image error page: without care the record can never be written and recordAttempt retries forever.
    h.receiver.script('/binary', { status: 500, body: Buffer.from([0x1f, 0x8b, 0x08, 0x00, 0x00, 0x41, 0x00]) });
    const { result, attempts } = await deliverTo(`${h.receiver.url}/binary`);
    expect(result).toMatchObject({ endpoints: [{ outcome: 'abandoned', attempts: 2 }] });
    expect(attempts).toHaveLength(2);
    expect(attempts[0]).toMatchObject({ status_code: 500, succeeded: false });
    expect(attempts[0]?.response_body).not.toContain('\u0000');
    expect(attempts[0]?.response_body).toHaveLength(7);
  });

  it('blocks private targets at delivery when they are not allowed', async () => {
    const strict = { ...config, webhook: { ...config.webhook, allowPrivateTargets: false } };
    const { createHttpAgent, postWebhook } = await import('../../../src/infra/http-client');
    const agent = createHttpAgent(strict);
    try {
      for (const url of [`${h.receiver.url}/ssrf`, `https://localhost:${h.receiver.port}/ssrf`]) {
        const result = await postWebhook(agent, {
          url,
          body: '{}',
          headers: {},
          timeoutMs: 1_000,
          allowPrivate: false,
        });
        expect(result).toMatchObject({ succeeded: false, error: 'ssrf_blocked', statusCode: null });
      }
      expect(h.receiver.at('/ssrf')).toHaveLength(0);
    } finally {
      await agent.close();
    }
  });
});
