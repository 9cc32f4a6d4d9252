import { ApiError } from '../core/errors';

/**
 * The one place that recognises an outage of a dependency of ours (Postgres or Temporal) in an error, whatever
 * layer threw it, so every edge answers it the same way: 503 service_unavailable with Retry-After in the API
 * (and the dashboard), `service_unavailable` with its own exit code in the CLI. A caller can only retry those;
 * anything else is a bug of ours (500) or the caller's (4xx).
 */

/** Seconds a caller is asked to wait before retrying during an outage of ours. */
export const OUTAGE_RETRY_AFTER_SECONDS = 5;

/** EX_TEMPFAIL (sysexits.h): the CLI's exit code when a dependency is down, distinct from a failed command's 1. */
export const OUTAGE_EXIT_CODE = 75;

/** Socket-level failures: the peer is gone, refuses, or cannot be found right now. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'ENETDOWN',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server that is shutting down, starting, or out of connections: 57P01 admin_shutdown,
 * 57P02 crash_shutdown, 57P03 cannot_connect_now, 53300 too_many_connections, 58000/58030 system and I/O
 * errors. Class 08 (connection exceptions) is matched by prefix.
 */
const PG_OUTAGE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '58000', '58030']);

/**
 * node-postgres reports a lost or unobtainable connection with plain Errors and no code: a pool that could not
 * hand out a client within connectionTimeoutMillis, a socket closed under a query, a query past query_timeout.
 */
const PG_OUTAGE_MESSAGES = [
  /^timeout exceeded when trying to connect/i,
  /^Connection terminated/i,
  /^Client has encountered a connection error and is not queryable/i,
  /^Query read timeout/i,
];

/** gRPC status codes of a Temporal frontend that cannot be reached or did not answer in time. */
const GRPC_UNAVAILABLE = 14;
const GRPC_DEADLINE_EXCEEDED = 4;

/**
 * What the Temporal SDKs throw before any gRPC status exists: Connection.connect's own deadline, and the Rust
 * core's transport errors (NativeConnection, the worker).
 */
const TEMPORAL_OUTAGE_MESSAGES = [/^Failed to connect before the deadline/i, /tcp connect error/i, /transport error/i];

interface ErrorLike {
  name?: unknown;
  code?: unknown;
  message?: unknown;
  cause?: unknown;
  errors?: unknown;
  metadata?: unknown;
}

function isOutageItself(err: ErrorLike): boolean {
  const message = typeof err.message === 'string' ? err.message : '';
  if (typeof err.code === 'string') {
    if (NETWORK_CODES.has(err.code) || PG_OUTAGE_STATES.has(err.code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(err.code)) return true;
  }
  // A gRPC status: numeric code (pg's SQLSTATEs are strings); Temporal wraps it in ServiceError.cause.
  if (typeof err.code === 'number' && (err.code === GRPC_UNAVAILABLE || err.code === GRPC_DEADLINE_EXCEEDED))
    return true;
  if (err.name === 'TransportError') return true;
  return [...PG_OUTAGE_MESSAGES, ...TEMPORAL_OUTAGE_MESSAGES].some((pattern) => pattern.test(message));
}

/**
 * True when `err`, or anything it wraps (cause chains, AggregateError from a dual-stack connect), says that
 * Postgres or Temporal is unreachable or not answering. Bounded walk: a cyclic cause chain cannot hang it.
 */
export function isDependencyOutage(err: unknown): boolean {
  const pending: unknown[] = [err];
  for (let seen = 0; pending.length > 0 && seen < 20; seen += 1) {
    const current = pending.shift();
    if (typeof current !== 'object' || current === null) continue;
    const candidate = current as ErrorLike;
    if (isOutageItself(candidate)) return true;
    if (candidate.cause !== undefined) pending.push(candidate.cause);
    if (Array.isArray(candidate.errors)) pending.push(...candidate.errors);
  }
  return false;
}

/** The catalogue's answer to an outage: 503 service_unavailable, with the Retry-After the caller should honour. */
export function serviceUnavailable(
  message = 'A service we depend on is unavailable right now; retry shortly.',
): ApiError {
  return new ApiError('service_unavailable', message, {}, { 'Retry-After': String(OUTAGE_RETRY_AFTER_SECONDS) });
}
