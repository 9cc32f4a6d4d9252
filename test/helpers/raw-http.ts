import net from 'node:net';
import fc from 'fast-check';
import type { Observed } from './fuzz-checks';
import { oddEncoding } from './hostile-values';

/**
 * Requests as bytes on a real socket, for what app.inject cannot send: repeated headers, bytes no header may
 * hold, oversized heads, broken request lines. Each answer is read until the server closes, within a bound.
 */

/** How long a client with an incomplete request waits before closing its side. */
const GIVE_UP_MS = 300;

export async function rawExchange(port: number, bytes: Buffer, timeoutMs = 10_000): Promise<Observed> {
  const chunks: Buffer[] = [];
  await new Promise<void>((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no complete answer within ${timeoutMs} ms`));
    }, timeoutMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    // A reset after the answer was written is how a refused request ends; what was read still counts.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
    // Written without closing our side: Node's server drops a half-closed connection unanswered. A request whose
    // framing promises more bytes than sent gets our end of the stream a moment later, as a client giving up.
    socket.write(bytes);
    const giveUp = setTimeout(() => socket.end(), GIVE_UP_MS);
    socket.on('close', () => clearTimeout(giveUp));
  });
  return parseResponse(Buffer.concat(chunks));
}

function dechunk(body: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < body.length) {
    const lineEnd = body.indexOf('\r\n', at);
    if (lineEnd < 0) break;
    const size = Number.parseInt(body.subarray(at, lineEnd).toString(), 16);
    if (!(size > 0)) break;
    parts.push(body.subarray(lineEnd + 2, lineEnd + 2 + size));
    at = lineEnd + 2 + size + 2;
  }
  return Buffer.concat(parts);
}

/** The final response on the connection, after any 100 Continue (status 0 when nothing came back at all). */
export function parseResponse(raw: Buffer): Observed {
  const headEnd = raw.indexOf('\r\n\r\n');
  if (/^HTTP\/1\.[01] 1\d\d /.test(raw.subarray(0, 13).toString('latin1')) && headEnd >= 0)
    return parseResponse(raw.subarray(headEnd + 4));
  if (headEnd < 0) return { statusCode: 0, headers: {}, body: raw.toString() };
  const [statusLine, ...lines] = raw.subarray(0, headEnd).toString('latin1').split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  let body = raw.subarray(headEnd + 4);
  if (headers['transfer-encoding'] === 'chunked') body = dechunk(body);
  else if (headers['content-length'] !== undefined) body = body.subarray(0, Number(headers['content-length']));
  return {
    statusCode: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine ?? '')?.[1] ?? 0),
    headers,
    body: body.toString(),
  };
}

export interface RawRequest {
  method: string;
  path: string;
  headerLines: string[];
  body: Buffer;
}

/** Header lines a client can put on the wire, Authorization repeated and oversized among them. */
export function headerLines(key: string): fc.Arbitrary<string[]> {
  // Lines Node's parser takes, so most requests reach the app: repeated and oversized among them.
  const accepted = fc.constantFrom(
    `Authorization: Bearer ${key}`,
    `Authorization: Bearer ${key}`,
    'Authorization: Bearer svc_test_x',
    'Authorization: Basic Og==',
    `Authorization: Bearer ${'A'.repeat(8_000)}`,
    'Content-Type: application/json',
    'Content-Type: application/json',
    'Content-Type: application/json; charset=iso-8859-1',
    'Content-Type: text/plain',
    'Accept: text/html',
    'Accept-Charset: utf-7',
    'Content-Encoding: gzip',
    'Expect: 100-continue',
    'X-Latin: \u00e9\u00ff',
    'Cookie: parcel_dashboard_session=x',
  );
  // Lines it refuses or that break the framing: the answer comes from the client error handler.
  const refused = fc.oneof(
    fc.constantFrom(
      `Authorization: Bearer ${'A'.repeat(70_000)}`,
      `X-Padding: ${'p'.repeat(20_000)}`,
      'Transfer-Encoding: chunked',
      'Content-Length: 5',
      'Content-Length: -1',
      'Content-Length: 99999999999999999999',
      'Host: ',
      ' folded: continuation',
      'No-Colon-Here',
      'X-Nul: a\u0000b',
    ),
    fc.string({ unit: 'binary-ascii', maxLength: 30 }).map((value) => `X-Odd: ${value.replace(/[\r\n]/g, '')}`),
  );
  const line = fc.oneof({ weight: 6, arbitrary: accepted }, refused);
  const good = `Authorization: Bearer ${key}`;
  const auth = fc.oneof(
    { weight: 4, arbitrary: fc.constant([good]) },
    fc.constantFrom(
      [good, good],
      [good, 'Authorization: Bearer svc_test_x'],
      ['Authorization: Bearer svc_test_x', good],
      [`authorization: basic ${Buffer.from(`${key}:`).toString('base64')}`, good],
      [],
    ),
  );
  return fc.tuple(auth, fc.array(line, { maxLength: 4 })).map(([first, rest]) => [...first, ...rest]);
}

export function rawRequest(paths: readonly string[], key: string): fc.Arbitrary<RawRequest> {
  return fc.record({
    method: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom('GET', 'POST', 'PATCH', 'DELETE') },
      fc.constantFrom('get', 'BREW', 'GET /x HTTP/1.1\r\nX:', ''),
    ),
    path: fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom(...paths) },
      fc.tuple(fc.constantFrom(...paths), oddEncoding).map(([path, odd]) => `${path}${odd}`),
      fc.constantFrom(
        '*',
        '//v1//webhooks',
        '/v1/webhooks/\u00e9',
        '/v1/../v1/webhooks',
        'http://evil.example/v1/webhooks',
        `/${'a'.repeat(20_000)}`,
      ),
    ),
    headerLines: headerLines(key),
    body: fc.oneof(
      fc.constant(Buffer.alloc(0)),
      fc.constantFrom('{}', '{"url":"https://127.0.0.1:9/raw"}', '{"since":0}').map((text) => Buffer.from(text)),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
    ),
  });
}

/** The request as bytes: Host and Connection: close always, Content-Length only when no line sets framing. */
export function toBytes(request: RawRequest): Buffer {
  const framed = request.headerLines.some((line) => /^(content-length|transfer-encoding):/i.test(line));
  const lines = [
    `${request.method} ${request.path} HTTP/1.1`,
    'Host: 127.0.0.1',
    'Connection: close',
    ...request.headerLines,
  ];
  if (!framed) lines.push(`Content-Length: ${request.body.length}`);
  return Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`, 'latin1'), request.body]);
}
