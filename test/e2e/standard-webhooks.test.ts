import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { publishEvent } from '../../src/domain/events';
import { apiFixture, type ApiFixture } from '../helpers/api';
import { parcel } from '../helpers/delivery';
import { testConfig } from '../helpers/env';
import { createAccountWithKey } from '../helpers/fixtures';
import { startReceiver, type ReceivedRequest, type Receiver } from '../helpers/receiver';
import { startTestWorker, type TestWorker } from '../helpers/temporal';
import { waitFor } from '../helpers/wait';

/**
 * Real deliveries (the API registering, the worker posting over HTTPS on loopback through the real Temporal dev
 * server) verified by the `standardwebhooks` npm package as published, with the secret the API handed out.
 */
describe('Standard Webhooks headers on real deliveries', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '100ms,100ms' });
  let api: ApiFixture;
  let tw: TestWorker;
  let receiver: Receiver;

  beforeAll(async () => {
    api = await apiFixture({ config });
    tw = await startTestWorker(config);
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await tw?.stop();
    await api?.close();
  });

  const header = (request: ReceivedRequest, name: string) => request.headers[name] as string;

  async function register(path: string) {
    const merchant = await createAccountWithKey(api.pool);
    const created = await api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: merchant.headers,
      payload: { url: `${receiver.url}${path}`, events: ['parcel.created'] },
    });
    expect(created.statusCode).toBe(200);
    return { merchant, endpoint: created.json<{ id: string; secret: string }>() };
  }

  const publish = (accountId: string) =>
    publishEvent(
      { pool: api.pool },
      { accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
    );

  it('every attempt carries webhook-id (the event id), the signature t as webhook-timestamp, and a verifiable signature', async () => {
    const { merchant, endpoint } = await register('/std-retry');
    receiver.script('/std-retry', (index) => ({ status: index === 0 ? 500 : 200 }));
    const published = await publish(merchant.accountId);
    const [first, second] = await waitFor(() => receiver.at('/std-retry').length >= 2 && receiver.at('/std-retry'), {
      what: 'the failed attempt and its retry',
    });
    for (const request of [first!, second!]) {
      expect(header(request, 'webhook-id')).toBe(published.event.id);
      const t = /^t=(\d+),/.exec(header(request, 'service-signature'))?.[1];
      expect(header(request, 'webhook-timestamp')).toBe(t);
      expect(header(request, 'webhook-signature')).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
      const verified = new Webhook(endpoint.secret).verify(
        request.rawBody.toString('utf8'),
        request.headers as Record<string, string>,
      );
      expect(verified).toMatchObject({ id: published.event.id, type: 'parcel.created' });
      expect(() =>
        new Webhook(`whsec_${'A'.repeat(32)}`).verify(
          request.rawBody.toString('utf8'),
          request.headers as Record<string, string>,
        ),
      ).toThrow();
    }
    expect(header(first!, 'service-delivery')).not.toBe(header(second!, 'service-delivery'));
  });

  it('during a rotation grace, both the new and the previous secret verify the same delivery', async () => {
    const { merchant, endpoint } = await register('/std-rotation');
    const rotated = await api.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${endpoint.id}/secret/rotate`,
      headers: merchant.headers,
      payload: { expires_in_seconds: 3600 },
    });
    expect(rotated.statusCode).toBe(200);
    const newSecret = rotated.json<{ secret: string }>().secret;
    expect(newSecret).not.toBe(endpoint.secret);
    const published = await publish(merchant.accountId);
    const [request] = await waitFor(() => receiver.at('/std-rotation').length >= 1 && receiver.at('/std-rotation'), {
      what: 'the delivery',
    });
    const signatures = header(request!, 'webhook-signature').split(' ');
    expect(signatures).toHaveLength(2);
    for (const secret of [newSecret, endpoint.secret]) {
      const verified = new Webhook(secret).verify(
        request!.rawBody.toString('utf8'),
        request!.headers as Record<string, string>,
      );
      expect(verified).toMatchObject({ id: published.event.id });
    }
  });

  it("sends the endpoint's custom headers on every POST, beside the service's own", async () => {
    const merchant = await createAccountWithKey(api.pool);
    const created = await api.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: merchant.headers,
      payload: {
        url: `${receiver.url}/custom-headers`,
        events: ['parcel.created'],
        headers: { 'X-Route': 'eu-1', Authorization: 'Bearer gw-1' },
      },
    });
    expect(created.statusCode).toBe(200);
    receiver.script('/custom-headers', (index) => ({ status: index === 0 ? 500 : 200 }));
    await publish(merchant.accountId);
    const requests = await waitFor(() => receiver.at('/custom-headers').length >= 2 && receiver.at('/custom-headers'), {
      what: 'two attempts',
    });
    for (const request of requests) {
      expect(request.headers['x-route']).toBe('eu-1');
      expect(request.headers.authorization).toBe('Bearer gw-1');
      expect(request.headers['webhook-id']).toBeDefined();
    }
  });
});
