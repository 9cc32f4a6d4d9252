import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERNAL_TOKEN_FAILURES_PER_MINUTE } from '../../../src/infra/credential-failures';
import { buildServer, startApi, type RunningApi } from '../../../src/api/server';
import { randomBase62 } from '../../../src/core/ids';
import { createPool, type Pool } from '../../../src/db/pool';
import { parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount, createApiKey } from '../../helpers/fixtures';

/**
 * Guessing credentials on a real port: bad API keys are refused per client address before any database read
 * once the client used up its budget, and wrong internal tokens are limited per client address likewise.
 */

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A request from a chosen loopback address (127.0.0.0/8 all reach this machine), so tests can be two clients. */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; from?: string } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      {
        method: options.method ?? 'GET',
        headers: options.headers,
        localAddress: options.from ?? '127.0.0.1',
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString() }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('no answer within 10 s')));
    req.on('error', reject);
    req.end(options.body);
  });
}

describe('bad API keys from one client', () => {
  let pool: Pool;
  let url: string;
  let close: () => Promise<void>;
  /** Lookups of a presented key: every statement that reads api_keys. */
  let lookups = 0;

  beforeAll(async () => {
    const config = testConfig({ API_RATE_LIMIT_PER_MINUTE: '5', HOST: '127.0.0.1' });
    pool = createPool(config.databaseUrl);
    const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    pool.query = ((...args: unknown[]) => {
      const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
      if (text?.includes('FROM api_keys')) lookups += 1;
      return query(...args);
    }) as Pool['query'];
    const app = await buildServer({ config, pool }, { logger: false });
    url = await app.listen({ port: 0, host: '127.0.0.1' });
    close = () => app.close();
  });
  afterAll(async () => {
    await close?.();
    await pool?.end();
  });

  it('are limited before the key lookup: past the budget, no database read at all', async () => {
    const guess = () => ({ authorization: `Bearer svc_test_${randomBase62(32)}` });
    const before = lookups;
    const statuses: number[] = [];
    let limited: Answer | undefined;
    for (let i = 0; i < 12; i += 1) {
      const answer = await send(`${url}/v1/towns`, { headers: guess() });
      statuses.push(answer.status);
      if (answer.status === 429) limited = answer;
    }
    expect(statuses).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
    expect(lookups - before).toBe(5);
    expect(JSON.parse(limited?.body as string).error.code).toBe('rate_limited');
    expect(Number(limited?.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited?.headers['retry-after'])).toBeLessThanOrEqual(60);
    // Unknown URLs look keys up too: not for this client now.
    expect((await send(`${url}/nowhere`, { headers: guess() })).status).toBe(429);
    expect(lookups - before).toBe(5);

    // Another client address has its own budget, and a good key works there.
    const accountId = await createAccount(pool, { status: 'active' });
    const { key } = await createApiKey(pool, { accountId, mode: 'test' });
    expect(
      (await send(`${url}/v1/towns`, { headers: { authorization: `Bearer ${key}` }, from: '127.0.0.2' })).status,
    ).toBe(200);
    expect((await send(`${url}/v1/towns`, { headers: guess(), from: '127.0.0.2' })).status).toBe(401);
  });
});

describe('wrong internal tokens from one client', () => {
  const token = 'internal-token-for-limit-tests-4f1c9a0e';
  let api: RunningApi;
  let pool: Pool;
  beforeAll(async () => {
    const config = testConfig({ INTERNAL_API_TOKEN: token, HOST: '127.0.0.1', PORT: '0', INTERNAL_PORT: '0' });
    api = await startApi(config);
    pool = createPool(config.databaseUrl);
  });
  afterAll(async () => {
    await api?.close();
    await pool?.end();
  });

  const publish = async (bearer: string, from = '127.0.0.1') => {
    const accountId = await createAccount(pool);
    const body = JSON.stringify({
      id: `evt_${randomBase62(24)}`,
      account_id: accountId,
      livemode: false,
      type: 'parcel.delivered',
      data: { parcel: parcel() },
    });
    const headers = { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' };
    return send(`${api.internalUrl}/internal/v1/events`, { method: 'POST', headers, body, from });
  };

  it(`are refused after ${INTERNAL_TOKEN_FAILURES_PER_MINUTE} a minute with 429 and Retry-After, the right token included`, async () => {
    const statuses: number[] = [];
    for (let i = 0; i < INTERNAL_TOKEN_FAILURES_PER_MINUTE; i += 1)
      statuses.push((await publish(`wrong-${randomBase62(32)}`)).status);
    expect(statuses).toEqual(Array(INTERNAL_TOKEN_FAILURES_PER_MINUTE).fill(401));
    const limited = await publish(`wrong-${randomBase62(32)}`);
    expect(limited.status).toBe(429);
    expect(JSON.parse(limited.body).error.code).toBe('rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    // A guess that happens to be right gets no answer about it either.
    expect((await publish(token)).status).toBe(429);
    // Another client, the parcel system on its own address, is not held back.
    expect((await publish(token, '127.0.0.2')).status).toBe(201);
  });
});
