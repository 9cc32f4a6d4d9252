import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postWebhook } from '../../../src/infra/http-client';
import { createSessionCertificate } from '../../../src/infra/session-certificate';

/** listen's certificate and the pinned path of the HTTP client: only the session's own server is reachable. */
describe('session certificate and pinned loopback posts', () => {
  const session = createSessionCertificate();
  const impostor = createSessionCertificate();
  const servers: https.Server[] = [];
  const urls: Record<'session' | 'impostor', string> = { session: '', impostor: '' };
  const shared = new Agent();

  beforeAll(async () => {
    for (const [name, pair] of [
      ['session', session],
      ['impostor', impostor],
    ] as const) {
      const server = https.createServer({ cert: pair.cert, key: pair.key }, (_req, res) =>
        res.writeHead(200).end('ok'),
      );
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      servers.push(server);
      urls[name] = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    }
  });
  afterAll(async () => {
    await shared.close();
    for (const server of servers) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  const post = (url: string, pinnedCertificate?: string) =>
    postWebhook(shared, { url, body: '{}', headers: {}, timeoutMs: 5_000, allowPrivate: false, pinnedCertificate });

  it('is a one-day self-signed certificate for the loopback addresses, not a CA', () => {
    const cert = new X509Certificate(session.cert);
    expect(cert.subjectAltName).toBe('IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(cert.ca).toBe(false);
    expect(cert.checkIssued(cert)).toBe(true);
    expect(Date.parse(cert.validTo) - Date.now()).toBeLessThanOrEqual(86_400_000);
  });

  it('posts to the session that holds the pinned certificate, and to nothing else', async () => {
    expect(await post(urls.session, session.cert)).toMatchObject({ statusCode: 200, succeeded: true });
    expect(await post(urls.impostor, session.cert)).toMatchObject({ statusCode: null, error: 'tls' });
    // Without the pin the loopback target is what it always was: blocked.
    expect(await post(urls.session)).toMatchObject({ error: 'ssrf_blocked' });
    // The pin never opens anything but https on a loopback literal.
    expect(await post(urls.session.replace('127.0.0.1', 'localhost'), session.cert)).toMatchObject({
      error: 'ssrf_blocked',
    });
    expect(await post(urls.session.replace('https', 'http'), session.cert)).toMatchObject({ error: 'ssrf_blocked' });
    expect(await post('https://10.0.0.1/hook', session.cert)).toMatchObject({ error: 'ssrf_blocked' });
  });
});
