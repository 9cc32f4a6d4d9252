import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { CLI_TEST_TIMEOUT_MS, runCli } from '../../helpers/cli';

/** REDELIVERY_MAX_PENDING: an account's pending redeliveries are bounded; no worker runs, so they stay pending. */
describe('redeliveries pending per account', () => {
  let f: ApiFixture;
  beforeAll(async () => {
    f = await apiFixture({ env: { REDELIVERY_MAX_PENDING: '3' } });
  });
  afterAll(async () => {
    await f?.close();
  });

  async function merchant() {
    const key = await f.key({ status: 'active' });
    const post = (url: string, payload: object = {}) =>
      f.app.inject({ method: 'POST', url, headers: bearer(key.key), payload });
    const created = await post('/v1/webhooks', { url: 'https://93.184.215.14/pending' });
    expect(created.statusCode, created.body).toBe(200);
    return { post, accountId: key.account_id, endpointId: created.json<{ id: string }>().id };
  }

  const expectRefused = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => {
    expect(res.statusCode, res.body).toBe(429);
    expect(JSON.parse(res.body).error.code).toBe('too_many_pending_deliveries');
    expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
  };

  it(
    'past the limit, test, resend and recover answer 429 too_many_pending_deliveries; another account is not held',
    async () => {
      const { post, accountId, endpointId } = await merchant();
      const events: string[] = [];
      for (let i = 0; i < 3; i += 1) {
        const sent = await post(`/v1/webhooks/${endpointId}/test`);
        expect(sent.statusCode, sent.body).toBe(202);
        events.push(sent.json<{ id: string }>().id);
      }
      expectRefused(await post(`/v1/webhooks/${endpointId}/test`));
      expectRefused(await post(`/v1/events/${events[0]}/resend`));
      expectRefused(await post(`/v1/webhooks/${endpointId}/recover`, { since: Math.floor(Date.now() / 1000) - 3600 }));

      // The CLI calls the same domain function: the same refusal.
      const cli = await runCli(['webhooks', 'test', endpointId, '--account', accountId, '--mode', 'test', '--json'], {
        REDELIVERY_MAX_PENDING: '3',
      });
      expect(cli.json?.error?.code, cli.stdout + cli.stderr).toBe('too_many_pending_deliveries');
      expect(cli.code).toBe(1);

      const other = await merchant();
      expect((await other.post(`/v1/webhooks/${other.endpointId}/test`)).statusCode).toBe(202);
    },
    CLI_TEST_TIMEOUT_MS,
  );

  it('a resend to every endpoint counts as that many', async () => {
    const { post, endpointId } = await merchant();
    const second = await post('/v1/webhooks', { url: 'https://93.184.215.14/pending-2' });
    expect(second.statusCode, second.body).toBe(200);
    const secondId = second.json<{ id: string }>().id;
    const sent = await post(`/v1/webhooks/${endpointId}/test`);
    expect(sent.statusCode, sent.body).toBe(202);
    const eventId = sent.json<{ id: string }>().id;
    // The event now reached both endpoints: two pending.
    const toSecond = await post(`/v1/events/${eventId}/resend`, { endpoint_id: secondId });
    expect(toSecond.statusCode, toSecond.body).toBeLessThan(300);
    // A resend to both would make four, past three; one to a single endpoint makes three, within it.
    expectRefused(await post(`/v1/events/${eventId}/resend`));
    const toOne = await post(`/v1/events/${eventId}/resend`, { endpoint_id: endpointId });
    expect(toOne.statusCode, toOne.body).toBeLessThan(300);
  });
});
