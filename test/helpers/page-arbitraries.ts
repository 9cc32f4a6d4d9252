import fc from 'fast-check';
import { EVENT_TYPES } from '../../src/core/event-catalog';
import { ALL_SCOPES } from '../../src/core/scopes';
import { MAX_FORM_FIELDS } from '../../src/core/form-body';
import { cursor, hostileForm, oddEncoding, oddString } from './hostile-values';
import type { FuzzRequest } from './openapi-arbitraries';

/**
 * Requests for the routes outside the OpenAPI document (the developers page's pages and form posts, the docs),
 * for the property-based suite: a signed-in session with its CSRF token most of the time, forms with every field
 * the page's routes read, valid-looking or hostile, and the headers a cross-site or broken client sends.
 */

/** A signed-in developers page session and the rows of its account, per mode. */
export interface PageSession {
  cookie: string;
  csrf: string;
  /** The page's own origin as the app sees an injected request. */
  origin: string;
  ids: { test: { endpoints: string[]; events: string[] }; live: { endpoints: string[]; events: string[] } };
}

/** "METHOD /path/:param" as the router lists it. */
export interface PageRoute {
  method: string;
  path: string;
}

const FIELDS = [
  'url',
  'description',
  'events',
  'confirm',
  'type',
  'since',
  'until',
  'endpoint_id',
  'scopes',
  'expires',
  'disabled',
  'outcome',
];

function fieldValue(name: string, ids: { endpoints: string[]; events: string[] }): fc.Arbitrary<string> {
  const plausible: Record<string, fc.Arbitrary<string>> = {
    url: fc.constantFrom('https://127.0.0.1:9/page', 'http://127.0.0.1/', 'https://169.254.169.254/', 'not a url'),
    events: fc.constantFrom(...EVENT_TYPES, 'parcel.nope'),
    type: fc.constantFrom(...EVENT_TYPES, 'parcel.nope'),
    confirm: fc.constantFrom('yes', 'no', ''),
    since: fc.constantFrom(
      '2026-03-01T09:30',
      '2026-02-30T25:61',
      '0000-01-01T00:00',
      '9999-12-31T23:59:59',
      '275760-09-13T00:00',
    ),
    until: fc.constantFrom('2026-03-01T09:30', '1970-01-01T00:00', '99999-01-01T00:00'),
    endpoint_id: ids.endpoints.length > 0 ? fc.constantFrom(...ids.endpoints) : fc.constant('we_none'),
    scopes: fc.constantFrom(...ALL_SCOPES, 'admin'),
    expires: fc.constantFrom('2030-01-01T00:00', '2000-01-01T00:00', '1d', ''),
    disabled: fc.constantFrom('true', 'false', 'on', ''),
    outcome: fc.constantFrom('succeeded', 'failed', 'x'),
  };
  return fc.oneof({ weight: 3, arbitrary: plausible[name] ?? oddString }, oddString);
}

/**
 * An urlencoded form: fields in any order, repeated or not, the CSRF token right, wrong or absent; now and then
 * one of the costliest shapes to parse, behind a right token (one field repeated up to the body limit or past
 * the field cap, a name nested thousands of brackets deep).
 */
function form(session: PageSession, ids: { endpoints: string[]; events: string[] }): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 9, arbitrary: plainForm(session, ids) },
    hostileForm(FIELDS, MAX_FORM_FIELDS).map((body) => `_csrf=${encodeURIComponent(session.csrf)}&${body}`),
  );
}

function plainForm(session: PageSession, ids: { endpoints: string[]; events: string[] }): fc.Arbitrary<string> {
  const csrf = fc.oneof(
    { weight: 8, arbitrary: fc.constant(session.csrf) },
    fc.constantFrom('', 'x', `${session.csrf}x`),
    oddString,
  );
  const field = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .constantFrom(...FIELDS)
        .chain((name) => fieldValue(name, ids).map((value) => [name, value] as const)),
    },
    fc.tuple(oddString, oddString),
  );
  return fc
    .tuple(fc.option(csrf, { freq: 8 }), fc.array(field, { maxLength: 6 }), fc.option(oddEncoding))
    .map(([token, fields, raw]) => {
      const params = new URLSearchParams();
      if (token !== null) params.append('_csrf', token);
      for (const [name, value] of fields)
        params.append(name.replace(/[\ud800-\udfff]/g, ''), value.replace(/[\ud800-\udfff]/g, '\ufffd'));
      return raw === null ? params.toString() : `${params.toString()}&x=${raw}`;
    });
}

function paramValue(name: string, mode: 'test' | 'live', session: PageSession, path: string): fc.Arbitrary<string> {
  const ids = session.ids[mode];
  const known = name === 'mode' ? [mode] : name === 'id' ? (path.includes('/events') ? ids.events : ids.endpoints) : [];
  const encodeSafe = (text: string) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''));
  return fc.oneof(
    { weight: 5, arbitrary: known.length > 0 ? fc.constantFrom(...known) : oddString.map(encodeSafe) },
    cursor([...ids.endpoints, ...ids.events]).map(encodeSafe),
    fc.constantFrom('test', 'live', 'TEST', 'staging', 'x'.repeat(201)),
    oddEncoding,
  );
}

function fill(route: PageRoute, mode: 'test' | 'live', session: PageSession): fc.Arbitrary<string> {
  const names = [...route.path.matchAll(/:(\w+)|\*/g)].map((m) => m[1] ?? '*');
  return fc.tuple(...names.map((name) => paramValue(name, mode, session, route.path))).map((values) => {
    let i = 0;
    return route.path.replace(/(?<!\/)\*$/, '/*').replace(/:(\w+)|\*/g, () => values[i++] as string);
  });
}

const QUERY = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  fc.constantFrom(
    '?signed_out=1',
    '?notice=created',
    '?starting_after=we_x',
    '?outcome=failed&event_id=evt_x',
    '?limit=1e9',
    '?mode=live',
  ),
  fc
    .tuple(oddString, oddEncoding)
    .map(([text, raw]) => `?q=${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))}${raw}`),
);

export function pageRequest(route: PageRoute, session: PageSession): fc.Arbitrary<FuzzRequest> {
  const mode = fc.constantFrom<'test' | 'live'>('test', 'live');
  const cookie = fc.oneof(
    { weight: 8, arbitrary: fc.constant<string | undefined>(session.cookie) },
    fc.constantFrom<string | undefined>(
      undefined,
      '',
      'parcel_dashboard_session=',
      'parcel_dashboard_session=x',
      `${session.cookie}; ${session.cookie}x`,
      '=;=;',
    ),
  );
  const origin = fc.oneof(
    { weight: 6, arbitrary: fc.constant<string | undefined>(undefined) },
    fc.constantFrom<string | undefined>(session.origin, 'https://evil.example', 'null', ''),
  );
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant('application/x-www-form-urlencoded') },
    fc.constantFrom(
      'application/json',
      'text/plain',
      'multipart/form-data; boundary=x',
      'application/x-www-form-urlencoded; charset=latin1',
      '',
    ),
  );
  return mode.chain((m) =>
    fc
      .tuple(fill(route, m, session), QUERY, form(session, session.ids[m]), cookie, origin, contentType)
      .map(([path, query, body, c, o, type]): FuzzRequest => {
        const headers: Record<string, string> = {};
        if (c !== undefined) headers.cookie = c;
        if (o !== undefined) headers.origin = o;
        if (route.method !== 'POST') return { method: route.method, url: `${path}${query}`, headers };
        headers['content-type'] = type;
        return { method: 'POST', url: `${path}${query}`, headers, payload: body };
      }),
  );
}
