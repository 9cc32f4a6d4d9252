import { readFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { FIXTURES } from './paths';

/** What the receiver does with one request; a function may decide per request (e.g. fail the first two). */
export interface Reply {
  status?: number;
  /** Answer after this long (the engine's timeout may fire first). */
  delayMs?: number;
  /** Answer once this settles: holds the request open for as long as a test needs. */
  until?: Promise<unknown>;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** Shorthand for a 3xx with Location. */
  redirectTo?: string;
}

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  /** The raw bytes as received, for signature checks. */
  rawBody: Buffer;
  receivedAt: number;
}

export interface Receiver {
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Requests to one path (receivers are shared by several endpoints in a file). */
  at(pathname: string): ReceivedRequest[];
  script(pathname: string, reply: Reply | ((index: number, request: ReceivedRequest) => Reply)): void;
  close(): Promise<void>;
}

type Script = (index: number, request: ReceivedRequest) => Reply;

/**
 * An HTTPS receiver on loopback with the test CA's certificate (or an untrusted one), scripted per path.
 * Unscripted paths answer 200.
 */
export async function startReceiver(options: { untrusted?: boolean } = {}): Promise<Receiver> {
  const tls = path.join(FIXTURES, 'tls');
  const [cert, key] = options.untrusted ? ['untrusted.pem', 'untrusted-key.pem'] : ['server.pem', 'server-key.pem'];
  const requests: ReceivedRequest[] = [];
  const scripts = new Map<string, Script>();
  const counts = new Map<string, number>();
  const server = https.createServer(
    { cert: readFileSync(path.join(tls, cert)), key: readFileSync(path.join(tls, key)) },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const pathname = (req.url ?? '/').split('?')[0] as string;
        const request: ReceivedRequest = {
          method: req.method ?? '',
          path: pathname,
          headers: req.headers,
          rawBody: Buffer.concat(chunks),
          receivedAt: Date.now(),
        };
        requests.push(request);
        const index = counts.get(pathname) ?? 0;
        counts.set(pathname, index + 1);
        const reply = scripts.get(pathname)?.(index, request) ?? {};
        const send = () => {
          if (res.destroyed) return;
          const headers = { ...reply.headers, ...(reply.redirectTo ? { location: reply.redirectTo } : {}) };
          res.writeHead(reply.status ?? (reply.redirectTo ? 302 : 200), headers);
          res.end(reply.body ?? 'ok');
        };
        if (reply.until) void reply.until.finally(send);
        else if (reply.delayMs) setTimeout(send, reply.delayMs).unref();
        else send();
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    requests,
    at: (pathname) => requests.filter((r) => r.path === pathname),
    script(pathname, reply) {
      scripts.set(pathname, typeof reply === 'function' ? reply : () => reply);
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
