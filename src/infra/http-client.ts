import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { createSecureContext, rootCertificates } from 'node:tls';
import { Agent } from 'undici';
import type { Config } from './config';
import type { AttemptResult, DeliveryError } from '../core/delivery-contract';
import { RESPONSE_BODY_CHARS, RESPONSE_BODY_MAX_BYTES } from '../core/delivery-policy';
import { honoursRetryAfter, parseRetryAfter } from '../core/retry-after';
import { guardedLookup, isPublicAddress } from './ssrf';

/**
 * The one HTTP agent of a worker: pooled keep-alive connections to endpoints, our extra CA appended to the
 * default ones (test receivers), and every name resolved through the SSRF guard at connect time. No redirect
 * interceptor is installed, so a 3xx is returned to us and never followed.
 */
export function createHttpAgent(config: Config): Agent {
  const extraCa = config.webhook.caFile ? [readFileSync(config.webhook.caFile, 'utf8')] : [];
  // One context for every connection: passing `ca` instead would re-parse every root certificate on each TLS
  // handshake.
  const secureContext = createSecureContext({ ca: [...rootCertificates, ...extraCa] });
  return new Agent({
    connect: {
      secureContext,
      lookup: guardedLookup(config.webhook.allowPrivateTargets),
    },
    // An endpoint we post to rarely should not pin sockets for long.
    keepAliveTimeout: 4_000,
  });
}

/** Reads just enough of a body to keep its first characters, then drops the connection's remainder. */
async function readPrefix(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= RESPONSE_BODY_MAX_BYTES) break;
    }
  } catch {
    // A body cut short or too slow still leaves us what arrived; the status already decided the outcome.
  } finally {
    body.destroy();
  }
  const text = new TextDecoder('utf-8').decode(Buffer.concat(chunks).subarray(0, RESPONSE_BODY_MAX_BYTES));
  // Code points, as Postgres counts characters (char_length), so a surrogate pair is never split. NUL is the
  // one character Postgres text refuses: left in, a binary answer (gzip, an image) could never be recorded.
  return Array.from(text)
    .slice(0, RESPONSE_BODY_CHARS)
    .join('')
    .replace(/\u0000/g, '\uFFFD');
}

const TLS_CODE = /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_|DEPTH_ZERO_|SELF_SIGNED_|EPROTO$|HOSTNAME_MISMATCH)/;

/** Maps what undici and node throw onto the record's error kinds, looking through `cause` chains. */
export function classifyError(err: unknown): DeliveryError {
  for (let e = err as (Error & { code?: string; cause?: unknown }) | undefined, depth = 0; e && depth < 5; depth++) {
    const code = typeof e.code === 'string' ? e.code : '';
    if (e.name === 'TimeoutError' || e.name === 'AbortError') return 'timeout';
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
      return 'timeout';
    }
    if (code === 'ETIMEDOUT') return 'timeout';
    if (code === 'ERR_ADDRESS_NOT_PUBLIC') return 'ssrf_blocked';
    if (code === 'ECONNREFUSED') return 'connection_refused';
    if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
      return 'connection_reset';
    }
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_FAIL' || code === 'EAI_NODATA') return 'dns';
    if (TLS_CODE.test(code) || /certificate|ssl|tls/i.test(e.message ?? '')) return 'tls';
    e = e.cause as typeof e;
  }
  return 'network';
}

/** An IP literal is connected to without a lookup, so the SSRF guard must judge it here. */
function blockedLiteral(url: URL, allowPrivate: boolean): boolean {
  if (allowPrivate) return false;
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  return isIP(host) !== 0 && !isPublicAddress(host);
}

/** Loopback IP literals a listen session may use; never a name, so no resolver can point one elsewhere. */
const LOOPBACK_LITERALS = new Set(['127.0.0.1', '[::1]']);
const LOCAL_AGENTS_MAX = 16;
const localAgents = new Map<string, Agent>();

/**
 * The agent of one listen session: it trusts that session's certificate and nothing else, so the loopback
 * exception reaches only the process holding the certificate's key. Few sessions live at once; the oldest
 * agents are closed past LOCAL_AGENTS_MAX.
 */
function localAgent(certificate: string): Agent {
  let agent = localAgents.get(certificate);
  if (!agent) {
    agent = new Agent({ connect: { ca: [certificate] }, keepAliveTimeout: 4_000 });
    localAgents.set(certificate, agent);
    for (const [key, old] of localAgents) {
      if (localAgents.size <= LOCAL_AGENTS_MAX) break;
      localAgents.delete(key);
      void old.close();
    }
  }
  return agent;
}

/**
 * One POST, never retried and never redirected. Success is a 2xx within timeoutMs; the whole
 * exchange, body prefix included, is bounded by the same deadline. A 429 or 503 brings its Retry-After along.
 */
export async function postWebhook(
  agent: Agent,
  request: {
    url: string;
    body: string;
    headers: Record<string, string>;
    timeoutMs: number;
    allowPrivate: boolean;
    /** A listen session's certificate: the URL must be https on a loopback literal, trusted through this alone. */
    pinnedCertificate?: string;
  },
): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = () => Math.round(performance.now() - started);
  const fail = (error: DeliveryError): AttemptResult => ({
    statusCode: null,
    responseBody: null,
    error,
    durationMs: elapsed(),
    succeeded: false,
  });
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return fail('invalid_url');
  }
  if (request.pinnedCertificate !== undefined) {
    if (url.protocol !== 'https:' || !LOOPBACK_LITERALS.has(url.hostname)) return fail('ssrf_blocked');
    agent = localAgent(request.pinnedCertificate);
  } else if (blockedLiteral(url, request.allowPrivate)) {
    return fail('ssrf_blocked');
  }
  try {
    const response = await agent.request({
      origin: url.origin,
      path: `${url.pathname}${url.search}`,
      method: 'POST',
      headers: request.headers,
      body: request.body,
      // Per request: each event carries the timeout it was published with.
      headersTimeout: request.timeoutMs,
      bodyTimeout: request.timeoutMs,
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    const statusCode = response.statusCode;
    // Read as the answer arrives: an HTTP date is a time, and the delay counts from the answer.
    const retryAfterMs = honoursRetryAfter(statusCode)
      ? parseRetryAfter(response.headers['retry-after'], Date.now())
      : undefined;
    const responseBody = await readPrefix(response.body);
    const redirect = statusCode >= 300 && statusCode < 400;
    return {
      statusCode,
      responseBody,
      error: redirect ? 'redirect' : null,
      durationMs: elapsed(),
      succeeded: statusCode >= 200 && statusCode < 300,
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    };
  } catch (err) {
    return fail(classifyError(err));
  }
}
