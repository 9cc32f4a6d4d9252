import { ERRORS, type ErrorCode } from '../../src/core/errors';
import type { FuzzRequest } from './openapi-arbitraries';

/**
 * What every response of the API must be, whatever was sent (test/integration/api/fuzz.test.ts): never a 5xx,
 * errors in the catalogue's JSON shape with a known code, and nothing secret or internal in the bytes.
 * Each check returns the problems it finds, so the checks themselves can be tested on made-up responses.
 */

export interface Observed {
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** Where a secret may appear: once, in the answer that creates it (the API and the developers page alike). */
const SHOWN_ONCE: Record<string, RegExp[]> = {
  'a webhook secret': [
    /^POST \/v1\/webhooks$/,
    /^POST \/v1\/webhooks\/[^/]+\/secret\/rotate$/,
    /^POST \/dashboard\/[^/]+\/endpoints$/,
    /^POST \/dashboard\/[^/]+\/endpoints\/[^/]+\/rotate$/,
    /^POST \/internal\/v1\/operational-webhooks$/,
  ],
  'an API key': [/^POST \/dashboard\/[^/]+\/keys$/],
};

/** Things a response must never contain unless the request itself sent them. */
const LEAKS: Array<{ what: string; pattern: RegExp }> = [
  { what: 'an API key', pattern: /svc_(?:test|live)_[A-Za-z0-9]{32}/g },
  { what: 'a webhook secret', pattern: /whsec_[A-Za-z0-9+/=_-]{16,}/g },
  { what: 'a stack trace', pattern: /\n\s+at [^\n]*(?:\(|:\d+:\d+)/g },
  { what: 'a stack trace', pattern: /\b(?:TypeError|ReferenceError|RangeError|SyntaxError): /g },
  { what: 'SQL text', pattern: /\b(?:SELECT\s.+?\sFROM|INSERT INTO|DELETE FROM|UPDATE\s+\w+\s+SET)\b/gi },
  {
    what: 'a Postgres error',
    pattern:
      /(?:syntax error at or near|violates \w+ constraint|duplicate key value|relation "|invalid input syntax for|column "[^"]*" of relation)/gi,
  },
  { what: 'a file path', pattern: /(?:\/work\/|\/home\/|\/root\/|\/usr\/|node_modules|\w\.(?:ts|js):\d+)/g },
];

function requestText(request: FuzzRequest): string {
  let url = request.url;
  try {
    url = decodeURIComponent(url);
  } catch {
    // Bad percent-encoding: compare with the URL as sent.
  }
  const payload = request.payload === undefined ? '' : request.payload.toString();
  return `${request.url}\n${url}\n${payload}\n${Object.values(request.headers).join('\n')}`;
}

/** Matches of a secret or internal detail that did not come from the request (an echo of input is no leak). */
export function leaks(request: FuzzRequest, response: Observed, secrets: readonly string[]): string[] {
  const problems: string[] = [];
  const sent = requestText(request);
  const where = `${request.method} ${request.url.split('?')[0]}`;
  for (const { what, pattern } of LEAKS) {
    if (response.statusCode < 300 && (SHOWN_ONCE[what] ?? []).some((p) => p.test(where))) continue;
    for (const match of response.body.matchAll(pattern)) {
      if (!sent.includes(match[0]))
        problems.push(`response contains ${what}: ${JSON.stringify(match[0].slice(0, 80))}`);
    }
  }
  // Credentials the suite holds (keys, the internal token) never come back, even when sent.
  for (const secret of secrets) if (response.body.includes(secret)) problems.push('response echoes a credential');
  return problems;
}

/** The catalogue's wire shape: {"error": {"type", "code", "message"}} with a known code, at that code's status. */
export function errorShapeProblems(response: Observed): string[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(response.body);
  } catch {
    return [`error body is not JSON: ${JSON.stringify(response.body.slice(0, 120))}`];
  }
  const error = (parsed as { error?: Record<string, unknown> } | null)?.error;
  if (typeof error !== 'object' || error === null)
    return [`error body has no error object: ${response.body.slice(0, 120)}`];
  const problems: string[] = [];
  for (const field of ['type', 'code', 'message'] as const) {
    if (typeof error[field] !== 'string') problems.push(`error.${field} is not a string`);
  }
  const known = Object.hasOwn(ERRORS, error.code as string) ? ERRORS[error.code as ErrorCode] : undefined;
  if (!known) problems.push(`unknown error code ${JSON.stringify(error.code)}`);
  else {
    if (known.type !== error.type)
      problems.push(`error.type ${String(error.type)} is not ${known.type} for ${String(error.code)}`);
    if (known.status !== response.statusCode)
      problems.push(`status ${response.statusCode} is not ${known.status} for ${String(error.code)}`);
  }
  const contentType = String(response.headers['content-type'] ?? '');
  if (!contentType.startsWith('application/json'))
    problems.push(`error Content-Type is ${JSON.stringify(contentType)}`);
  return problems;
}

/** The developers page and the docs answer in HTML or their own formats; everything else in the API's JSON. */
function isJsonApi(url: string): boolean {
  return !url.startsWith('/dashboard') && !url.startsWith('/docs');
}

export function problemsWith(request: FuzzRequest, response: Observed, secrets: readonly string[]): string[] {
  const problems: string[] = [];
  if (response.statusCode >= 500) problems.push(`status ${response.statusCode}: ${response.body.slice(0, 300)}`);
  if (response.statusCode >= 400 && request.method !== 'HEAD' && isJsonApi(request.url))
    problems.push(...errorShapeProblems(response));
  problems.push(...leaks(request, response, secrets));
  return problems;
}
