import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DOCS_CONTENT_SECURITY_POLICY } from '../../../src/api/plugins/docs';
import { startApi, type RunningApi } from '../../../src/api/server';
import { randomBase62 } from '../../../src/core/ids';
import { createPool, type Pool } from '../../../src/db/pool';
import { testConfig } from '../../helpers/env';
import { parcel } from '../../helpers/delivery';
import type { Observed } from '../../helpers/fuzz-checks';
import { createAccount } from '../../helpers/fixtures';
import { parseResponse } from '../../helpers/raw-http';

/**
 * Spellings of the internal routes a router or a proxy might take for them: percent-encoded letters, double
 * slashes, dot segments, other case. Sent as bytes, since fetch would resolve the dot segments itself.
 */
const INTERNAL_SPELLINGS = [
  '/%69nternal/v1/events',
  '/%69%6E%74%65%72%6E%61%6C/v1/events',
  '/internal/v1/%65vents',
  '/internal%2Fv1%2Fevents',
  '//internal/v1/events',
  '/internal//v1/events',
  '/v1/../internal/v1/events',
  '/./internal/v1/events',
  '/%2e%2e/internal/v1/events',
  '/Internal/v1/events',
  '/INTERNAL/V1/EVENTS',
  '/internal/v1/events/',
  '/internal/v1/events;',
  '/%69nternal/v1/dashboard/sessions',
];

/** Spellings of public routes, none of which the internal port may answer. */
const PUBLIC_SPELLINGS = [
  '/healthz',
  '/%68ealthz',
  '//healthz',
  '/v1/../healthz',
  '/v1/%74owns',
  '/docs',
  '/%64ocs',
  '/docs/static/index.html',
  '/openapi.json',
];

/** One complete request as bytes, the answer read until the server closes (Connection: close), within 10 s. */
function rawExchange(port: number, bytes: Buffer): Promise<Observed> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect({ host: '127.0.0.1', port }, () => socket.write(bytes));
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error('no complete answer within 10 s'));
    }, 10_000);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve(parseResponse(Buffer.concat(chunks)));
    });
  });
}

function rawPost(port: number, path: string, token: string, body: unknown) {
  const json = JSON.stringify(body);
  const head =
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${token}\r\n` +
    `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\nConnection: close\r\n\r\n`;
  return rawExchange(port, Buffer.from(head + json));
}

function rawGet(port: number, path: string) {
  return rawExchange(port, Buffer.from(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`));
}

const portOf = (url: string) => Number(new URL(url).port);

/** INTERNAL_PORT: the internal routes on a port of their own, the public port without them. */
describe('internal routes on INTERNAL_PORT', () => {
  const token = 'internal-token-for-port-tests-0123456789';
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

  const signInLink = (base: string, accountId: string) =>
    fetch(`${base}/internal/v1/dashboard/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ account_id: accountId }),
    });

  it('serves the internal routes on the internal port only', async () => {
    expect(api.internalUrl).not.toBe(api.url);
    const accountId = await createAccount(pool);
    const created = await signInLink(api.internalUrl, accountId);
    expect(created.status).toBe(201);
    // Built on the public address (PUBLIC_URL, else the listening one), never on the internal port browsers cannot reach.
    const { url } = (await created.json()) as { url: string };
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/dashboard\/sign-in\/[A-Za-z0-9]{43}$/);
    expect(url.startsWith(api.internalUrl)).toBe(false);
    const wrong = await fetch(`${api.internalUrl}/internal/v1/events`, {
      method: 'POST',
      headers: { authorization: 'Bearer nope' },
    });
    expect(wrong.status).toBe(401);

    for (const url of ['/internal/v1/dashboard/sessions', '/internal/v1/events']) {
      const refused = await fetch(`${api.url}${url}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ account_id: accountId }),
      });
      expect(refused.status, url).toBe(404);
      expect(((await refused.json()) as { error: { code: string } }).error.code, url).toBe('route_not_found');
    }
  });

  it('answers nothing else on the internal port, and everything else on the public one', async () => {
    for (const url of ['/healthz', '/v1/towns', '/dashboard/sign-in', '/docs']) {
      expect((await fetch(`${api.internalUrl}${url}`)).status, url).toBe(404);
    }
    expect((await fetch(`${api.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${api.url}/dashboard/sign-in`)).status).toBe(200);
  });

  it('answers 404 to every other spelling of an internal route on the public port, and stores nothing', async () => {
    const accountId = await createAccount(pool);
    const events = (id: string) =>
      pool.query('SELECT count(*)::int AS n FROM events WHERE id = $1', [id]).then((r) => r.rows[0].n as number);
    for (const path of INTERNAL_SPELLINGS) {
      const id = `evt_${randomBase62(24)}`;
      const body = path.includes('sessions')
        ? { account_id: accountId }
        : { id, account_id: accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } };
      const answer = await rawPost(portOf(api.url), path, token, body);
      expect(answer.statusCode, path).toBe(404);
      expect(JSON.parse(answer.body).error.code, path).toBe('route_not_found');
      expect(await events(id), path).toBe(0);
    }
    const links = await pool.query('SELECT count(*)::int AS n FROM dashboard_sign_in_links WHERE account_id = $1', [
      accountId,
    ]);
    expect(links.rows[0].n).toBe(0);
    // The same body on the internal port is stored: the refusals above are the gate's, not the body's.
    const id = `evt_${randomBase62(24)}`;
    const stored = await rawPost(portOf(api.internalUrl), '/internal/v1/events', token, {
      id,
      account_id: accountId,
      livemode: false,
      type: 'parcel.delivered',
      data: { parcel: parcel() },
    });
    expect(stored.statusCode, stored.body).toBe(201);
    expect(await events(id)).toBe(1);
  });

  it('answers 404 to every spelling of a public route on the internal port', async () => {
    for (const path of PUBLIC_SPELLINGS) {
      const answer = await rawGet(portOf(api.internalUrl), path);
      expect(answer.statusCode, path).toBe(404);
      expect(answer.body, path).not.toContain('ok');
    }
    // The public port's router takes /%68ealthz for /healthz: the gate decides on the route, so both agree.
    expect((await rawGet(portOf(api.url), '/%68ealthz')).statusCode).toBe(200);
  });

  it('sends the docs headers on whatever spelling reaches the docs routes', async () => {
    for (const path of ['/docs', '/%64ocs', '/docs/static/index.html', '/%64ocs/static/index.html']) {
      const answer = await rawGet(portOf(api.url), path);
      expect(answer.statusCode, path).toBeLessThan(400);
      expect(answer.headers['content-security-policy'], path).toBe(DOCS_CONTENT_SECURITY_POLICY);
    }
  });

  it('closes both ports', async () => {
    const config = testConfig({ INTERNAL_API_TOKEN: token, HOST: '127.0.0.1', PORT: '0', INTERNAL_PORT: '0' });
    const other = await startApi(config);
    await other.close();
    await expect(fetch(`${other.internalUrl}/internal/v1/events`, { method: 'POST' })).rejects.toThrow();
    await expect(fetch(`${other.url}/healthz`)).rejects.toThrow();
  });
});
