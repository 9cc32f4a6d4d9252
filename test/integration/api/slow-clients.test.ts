import net from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REQUEST_TIMEOUT_MS } from '../../../src/api/errors';
import { listenInternal, type InternalListener } from '../../../src/api/internal-port';
import { buildServer } from '../../../src/api/server';
import { testConfig } from '../../helpers/env';

const TOKEN = 'slow-clients-internal-token-0123456789';
/** The server's bound on a whole request in this file: short, so the test sees it end. */
const TIMEOUT_MS = 1_000;
/** Well past the bound and Node's check of it, and still far below what the trickle would take to finish. */
const ANSWER_WITHIN_MS = 10_000;

/**
 * A client that sends its headers and then trickles its body a byte at a time is answered 408 request_timeout
 * and its connection closed once the request has taken longer than the bound, on the API's port and on the
 * internal port alike: nobody can hold a connection open for ever by never finishing a request.
 */
describe('slow clients', () => {
  let app: FastifyInstance;
  let internal: InternalListener;
  beforeAll(async () => {
    app = await buildServer(
      { config: testConfig({ INTERNAL_API_TOKEN: TOKEN, INTERNAL_PORT: '0' }) },
      { logger: false, requestTimeoutMs: TIMEOUT_MS },
    );
    await app.listen({ port: 0, host: '127.0.0.1' });
    internal = await listenInternal(app, 0, '127.0.0.1');
  });
  afterAll(async () => {
    await internal?.close();
    await app?.close();
  });

  /** Sends a request's headers and one byte of its 1,000-byte body every 100 ms; the answer and how long it took. */
  function trickle(port: number, head: string): Promise<{ answer: string; ms: number }> {
    return new Promise((resolve, reject) => {
      const t0 = performance.now();
      let answer = '';
      const socket = net.connect(port, '127.0.0.1', () =>
        socket.write(`${head}Host: x\r\nContent-Length: 1000\r\n\r\n{`),
      );
      const drip = setInterval(() => socket.writable && socket.write(' '), 100);
      const bound = setTimeout(() => {
        socket.destroy();
        reject(new Error(`still open after ${ANSWER_WITHIN_MS} ms; answered ${JSON.stringify(answer)}`));
      }, ANSWER_WITHIN_MS);
      socket.on('data', (chunk) => (answer += chunk.toString()));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearInterval(drip);
        clearTimeout(bound);
        resolve({ answer, ms: performance.now() - t0 });
      });
    });
  }

  it('answers a trickled body 408 request_timeout and closes the connection, on both ports', async () => {
    const requests = [
      // the developers page's sign-in form, on the API's port
      {
        port: (app.server.address() as net.AddressInfo).port,
        head: 'POST /dashboard/sign-in/abc HTTP/1.1\r\nContent-Type: application/x-www-form-urlencoded\r\n',
      },
      // a publish, on the internal port
      {
        port: Number(new URL(internal.url).port),
        head: `POST /internal/v1/events HTTP/1.1\r\nContent-Type: application/json\r\nAuthorization: Bearer ${TOKEN}\r\n`,
      },
    ];
    for (const { port, head } of requests) {
      const { answer, ms } = await trickle(port, head);
      expect(answer.split('\r\n')[0]).toBe('HTTP/1.1 408 Request Timeout');
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({
        error: { code: 'request_timeout', type: 'invalid_request_error' },
      });
      expect(ms).toBeGreaterThanOrEqual(TIMEOUT_MS);
    }
  });

  it('bounds every request by default', async () => {
    const plain = await buildServer({ config: testConfig() }, { logger: false });
    try {
      await plain.listen({ port: 0, host: '127.0.0.1' });
      expect(plain.server.requestTimeout).toBe(REQUEST_TIMEOUT_MS);
      expect(plain.server.headersTimeout).toBeLessThanOrEqual(REQUEST_TIMEOUT_MS);
    } finally {
      await plain.close();
    }
  });
});
