import { HEADER_NAME_MAX_LENGTH, HEADER_VALUE_MAX_LENGTH, HIDDEN_VALUE, MAX_HEADERS } from '../core/endpoint-settings';
import { ApiError } from '../core/errors';
import { openSecret, sealSecret, SecretUnavailableError, type KeyRing } from '../core/secrets';

/**
 * An endpoint's custom headers: name -> value, sent on every POST to it (a merchant's gateway token, a routing
 * key). Stored as one JSON object sealed like the signing secret (core/secrets.ts: AES-256-GCM bound to the
 * endpoint id), since values are often credentials. Values of credential-like names never leave the service
 * again: responses show them as HIDDEN_VALUE, and they do not follow the endpoint to another origin
 * (headersForUrlChange), so whoever may change the URL cannot point it at their own server to read them.
 */

type EndpointHeaders = Record<string, string>;

/** The stored form of no headers: nothing secret, so stored as is (and opened under a sealed-only ring too). */
export const NO_HEADERS = '{}';

/** An HTTP token (RFC 9110 field-name). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** Printable ASCII and space: what every HTTP stack carries unchanged. */
const PRINTABLE = /^[\x20-\x7e]+$/;

/**
 * Names the service sets itself, or that change how the request is framed, negotiated or routed (hop-by-hop
 * and proxy headers: an HTTP stack refuses to send most of them, so every delivery would fail with nothing sent).
 */
const REFUSED_NAMES = [
  'host',
  'connection',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'expect',
  'te',
  'trailer',
  'traceparent',
  'tracestate',
];
const REFUSED_PREFIXES = ['content-', 'service-', 'webhook-', 'proxy-'];

function refusedName(name: string): boolean {
  const lower = name.toLowerCase();
  return REFUSED_NAMES.includes(lower) || REFUSED_PREFIXES.some((prefix) => lower.startsWith(prefix));
}

const HIDDEN_NAMES = ['authorization', 'proxy-authorization', 'cookie'];
const HIDDEN_PARTS = ['token', 'secret', 'key', 'password', 'auth'];

/** Credentials: their values never appear in a response, a page or a log line, nor follow the URL elsewhere. */
export function isHiddenHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return HIDDEN_NAMES.includes(lower) || HIDDEN_PARTS.some((part) => lower.includes(part));
}

function invalid(
  name: string,
  message: string,
  code: 'parameter_invalid' | 'header_not_allowed' = 'parameter_invalid',
): ApiError {
  return new ApiError(code, message, { param: `headers.${name.slice(0, HEADER_NAME_MAX_LENGTH + 1)}` });
}

function checkName(name: string): void {
  if (name.length === 0 || name.length > HEADER_NAME_MAX_LENGTH || !TOKEN.test(name)) {
    throw invalid(
      name,
      `A header name is an HTTP token (letters, digits and !#$%&'*+-.^_\`|~) of 1 to ${HEADER_NAME_MAX_LENGTH} characters.`,
    );
  }
  if (refusedName(name)) {
    throw invalid(
      name,
      `The header ${name} is set by the service or changes the request; it cannot be set on an endpoint.`,
      'header_not_allowed',
    );
  }
}

function checkValue(name: string, value: string): void {
  if (value === HIDDEN_VALUE)
    throw invalid(
      name,
      `"${HIDDEN_VALUE}" is how responses hide a value: send the value itself, or leave the header out.`,
    );
  if (value.length > HEADER_VALUE_MAX_LENGTH || !PRINTABLE.test(value)) {
    throw invalid(name, `A header value is 1 to ${HEADER_VALUE_MAX_LENGTH} printable ASCII characters.`);
  }
}

/**
 * The headers after applying `change` to `current`: a string sets a name (replacing any spelling of it), null
 * removes it. Every name and value is checked, and the count after the change; names keep the case given.
 */
export function applyHeaderChange(current: EndpointHeaders, change: unknown): EndpointHeaders {
  if (typeof change !== 'object' || change === null || Array.isArray(change)) {
    throw new ApiError('parameter_invalid', 'headers must be an object of header name to value.', { param: 'headers' });
  }
  const next = new Map(Object.entries(current).map(([name, value]) => [name.toLowerCase(), [name, value] as const]));
  const given = new Set<string>();
  for (const [name, value] of Object.entries(change as Record<string, unknown>)) {
    checkName(name);
    if (given.has(name.toLowerCase())) throw invalid(name, `The header ${name} is given more than once.`);
    given.add(name.toLowerCase());
    if (value === null) {
      next.delete(name.toLowerCase());
      continue;
    }
    if (typeof value !== 'string') throw invalid(name, 'A header value is a string (null removes the header).');
    checkValue(name, value);
    next.set(name.toLowerCase(), [name, value]);
  }
  if (next.size > MAX_HEADERS) {
    throw new ApiError('parameter_invalid', `An endpoint has at most ${MAX_HEADERS} custom headers.`, {
      param: 'headers',
    });
  }
  return Object.fromEntries(next.values());
}

/**
 * The headers an endpoint keeps when its URL changes from `fromUrl` to `toUrl`: all of them on the same origin
 * (scheme, host and port); on another origin only those whose values are not hidden, since credentials are
 * meant for the server they were given for. A change applied after this sets them again.
 */
export function headersForUrlChange(current: EndpointHeaders, fromUrl: string, toUrl: string): EndpointHeaders {
  if (new URL(fromUrl).origin === new URL(toUrl).origin) return current;
  return Object.fromEntries(Object.entries(current).filter(([name]) => !isHiddenHeader(name)));
}

/** Registration's headers: the whole set (null values are refused there: there is nothing to remove). */
export function validateHeaders(input: unknown): EndpointHeaders {
  if (input === undefined) return {};
  if (typeof input === 'object' && input !== null) {
    const nullName = Object.entries(input).find(([, value]) => value === null)?.[0];
    if (nullName !== undefined) throw invalid(nullName, 'A header value is a string.');
  }
  return applyHeaderChange({}, input);
}

/** The stored form: '{}' when there are none, else sealed under the ring's newest key for this endpoint. */
export function sealHeaders(headers: EndpointHeaders, endpointId: string, ring: KeyRing): string {
  return Object.keys(headers).length === 0 ? NO_HEADERS : sealSecret(JSON.stringify(headers), endpointId, ring);
}

/** The plain headers; throws SecretUnavailableError when no key of the ring opens them. */
export function openHeaders(stored: string, endpointId: string, ring: KeyRing): EndpointHeaders {
  if (stored === NO_HEADERS) return {};
  const plain = openSecret(stored, endpointId, ring);
  try {
    return JSON.parse(plain) as EndpointHeaders;
  } catch {
    throw new SecretUnavailableError("an endpoint's custom headers are stored in an unrecognised form");
  }
}

/**
 * As a response shows them: credentials' values hidden. Headers no key opens (a key dropped too early) show as
 * hidden values under no names: `{}`, the delivery itself then ends skipped as for a secret.
 */
export function shownHeaders(stored: string, endpointId: string, ring: KeyRing): EndpointHeaders {
  let headers: EndpointHeaders;
  try {
    headers = openHeaders(stored, endpointId, ring);
  } catch {
    return {};
  }
  return Object.fromEntries(
    Object.entries(headers).map(([name, value]) => [name, isHiddenHeader(name) ? HIDDEN_VALUE : value]),
  );
}
