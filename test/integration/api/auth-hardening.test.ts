import net from 'node:net';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loggerOptions } from '../../../src/api/server';
import { revokeApiKeyAsOperator } from '../../../src/domain/api-keys';
import { createPool } from '../../../src/db/pool';
import { testConfig } from '../../helpers/env';
import { apiFixture, basic, bearer, type ApiFixture } from '../../helpers/api';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

function echoRoute(app: FastifyInstance): void {
  app.post('/test/echo', { config: { scope: 'webhooks:manage' } }, async (request) => {
    // What a careless handler might do: it must still not put a key in the logs.
    request.log.info({ headers: request.headers, authorization: request.headers.authorization }, 'echo');
    return { received: request.body };
  });
}

describe('hardening: body limits, content types, rate limits, logs, OpenAPI', () => {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  let f: ApiFixture;
  beforeAll(async () => {
    const base = loggerOptions(testConfig()) as Record<string, unknown>;
    f = await apiFixture({ extend: echoRoute, logger: { ...base, level: 'trace', stream: sink } as never });
  });
  afterAll(async () => {
    await f?.close();
  });

  const post = (headers: Record<string, string>, payload: string) =>
    f.app.inject({ method: 'POST', url: '/test/echo', headers, payload });

  it('413 body_too_large, 415 unsupported_media_type, 400 invalid_json, in the error shape', async () => {
    const key = (await f.key()).key;
    const json = { ...bearer(key), 'content-type': 'application/json' };
    const big = await post(json, JSON.stringify({ blob: 'x'.repeat(70 * 1024) }));
    expect(big.statusCode).toBe(413);
    expect(big.json().error).toMatchObject({ code: 'body_too_large', type: 'invalid_request_error' });
    for (const type of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/xml',
    ]) {
      const res = await post({ ...bearer(key), 'content-type': type }, 'a=1');
      expect({ type, status: res.statusCode, code: res.json().error?.code }).toEqual({
        type,
        status: 415,
        code: 'unsupported_media_type',
      });
    }
    const broken = await post(json, '{"a": ');
    expect(broken.statusCode).toBe(400);
    expect(broken.json().error.code).toBe('invalid_json');
    const short = await f.app.inject({
      method: 'POST',
      url: '/test/echo',
      headers: { ...json, 'content-length': '5' },
      payload: '{"a":1,"b":2}',
    });
    expect(short.json().error).toMatchObject({
      code: 'invalid_request',
      message: expect.stringMatching(/Content-Length/),
    });
    expect((await post(json, '{"a":1}')).json()).toEqual({ received: { a: 1 }, livemode: undefined });
  });

  it('authentication answers before the body is read: a huge body without a key is 401, not 413', async () => {
    const res = await post({ 'content-type': 'application/json' }, JSON.stringify({ blob: 'x'.repeat(70 * 1024) }));
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('missing_api_key');
  });

  it('never logs a key: not on success, not on failed auth, not in a URL, not when a handler logs headers', async () => {
    lines.length = 0;
    const good = await f.key();
    const revoked = await f.key();
    await revokeApiKeyAsOperator(f.pool, revoked.id, CLI_ACTOR);
    const keys = [good.key, revoked.key, `svc_test_${'q'.repeat(32)}`, `${good.key.slice(0, -3)}`];
    for (const key of keys) {
      for (const headers of [bearer(key), basic(key), basic(key, 'pw')]) {
        await post({ ...headers, 'content-type': 'application/json' }, '{}');
        await f.app.inject({ url: `/v1/towns?api_key=${key}`, headers });
      }
    }
    const log = lines.join('');
    expect(lines.length).toBeGreaterThan(20);
    expect(log).toContain('[redacted]');
    for (const key of keys) {
      expect(log).not.toContain(key);
      expect(log).not.toContain(key.slice(9));
      expect(log).not.toContain(Buffer.from(`${key}:`).toString('base64'));
    }
    expect(log).toMatch(/"reqId":"req_/);
  });

  it("requests Node's HTTP parser refuses still get the error shape", async () => {
    await f.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = f.app.server.address() as net.AddressInfo;
    const send = (text: string) =>
      new Promise<string>((resolve, reject) => {
        let answer = '';
        const socket = net.connect(port, '127.0.0.1', () => socket.write(text));
        socket.on('data', (chunk) => (answer += chunk.toString()));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
    const cases = [
      {
        text: `GET /v1/towns HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
        status: 431,
        code: 'headers_too_large',
      },
      { text: 'GET /v1/towns HTTP/1.1\r\nHost: x\r\nBad Header: 1\r\n\r\n', status: 400, code: 'invalid_request' },
    ];
    for (const { text, status, code } of cases) {
      const answer = await send(text);
      expect(answer.split('\r\n')[0]).toBe(
        `HTTP/1.1 ${status} ${status === 431 ? 'Request Header Fields Too Large' : 'Bad Request'}`,
      );
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: { code, type: 'invalid_request_error' },
      });
    }
  });

  it('every response carries a Request-Id', async () => {
    const res = await f.app.inject({ url: '/v1/towns' });
    expect(res.headers['request-id']).toMatch(/^req_[A-Za-z0-9]{20}$/);
  });

  it('serves the OpenAPI document with bearer and basic security, and a docs page', async () => {
    const res = await f.app.inject({ url: '/openapi.json' });
    expect(res.statusCode).toBe(200);
    const doc = res.json();
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.components.securitySchemes).toMatchObject({
      bearerAuth: { type: 'http', scheme: 'bearer' },
      basicAuth: { type: 'http', scheme: 'basic' },
    });
    const towns = doc.paths['/v1/towns'].get;
    expect(towns.security).toEqual([{ bearerAuth: [] }, { basicAuth: [] }]);
    expect(towns.description).toContain('network:read');
    expect(Object.keys(towns.responses)).toEqual(expect.arrayContaining(['200', '401', '403', '429']));
    expect(doc.paths['/openapi.json']).toBeUndefined();
    const page = await f.app.inject({ url: '/docs/' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toContain('text/html');
  });
});

describe('hardening: rate limits and outages', () => {
  it('429 rate_limited with Retry-After, counted per key, and per address before a key is known', async () => {
    const f = await apiFixture({ env: { API_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const a = (await f.key()).key;
      const b = (await f.key()).key;
      for (let i = 0; i < 3; i += 1)
        expect((await f.app.inject({ url: '/v1/towns', headers: bearer(a) })).statusCode).toBe(200);
      const limited = await f.app.inject({ url: '/v1/towns', headers: bearer(a) });
      expect(limited.statusCode).toBe(429);
      expect(limited.json().error).toMatchObject({ code: 'rate_limited', type: 'rate_limit_error' });
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
      // Another key of the same address has its own budget.
      expect((await f.app.inject({ url: '/v1/towns', headers: bearer(b) })).statusCode).toBe(200);
      // Failed authentication is throttled by address, so guessing keys is too.
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1)
        statuses.push(
          (await f.app.inject({ url: '/v1/towns', headers: bearer(`svc_test_${'g'.repeat(32)}`) })).statusCode,
        );
      expect(statuses).toEqual([401, 401, 401, 429]);
      // Health probes are never limited.
      for (let i = 0; i < 5; i += 1) expect((await f.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await f.close();
    }
  });

  it('unknown URLs are rate-limited per address like the API routes, before any key lookup', async () => {
    const f = await apiFixture({ env: { API_RATE_LIMIT_PER_MINUTE: '3' } });
    try {
      const guess = bearer(`svc_test_${'h'.repeat(32)}`);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1)
        statuses.push((await f.app.inject({ url: `/nowhere/${i}`, headers: guess })).statusCode);
      expect(statuses).toEqual([404, 404, 404, 429]);
      const limited = await f.app.inject({ url: '/nowhere/else', headers: guess });
      expect(limited.json().error.code).toBe('rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // One budget per address: the API routes refuse this address now too, and health probes never do.
      expect((await f.app.inject({ url: '/v1/towns', headers: guess })).statusCode).toBe(429);
      expect((await f.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    } finally {
      await f.close();
    }
  });

  it('a database outage during authentication is 503 service_unavailable, not 500', async () => {
    const broken = createPool('postgres://postgres@127.0.0.1:1/nothing');
    const f = await apiFixture({ pool: broken });
    try {
      const res = await f.app.inject({ url: '/v1/towns', headers: bearer(`svc_test_${'a'.repeat(32)}`) });
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('service_unavailable');
      expect(res.body).not.toMatch(/ECONNREFUSED|at .*\.ts/);
    } finally {
      await f.close();
      await broken.end();
    }
  });

  it('a /v1 route without a scope stops the app at start instead of going unprotected', async () => {
    await expect(
      apiFixture({ extend: (app) => app.get('/v1/unprotected', async () => ({ ok: true })) }),
    ).rejects.toThrow(/has no scope/);
    await expect(
      apiFixture({
        extend: (app) => app.get('/v1/towns-again', { config: { scope: 'bogus' as never } }, async () => ({})),
      }),
    ).rejects.toThrow(/unknown scope/);
  });
});
