import fc from 'fast-check';
import { EVENT_TYPES } from '../../src/core/event-catalog';
import {
  anyJson,
  bodyTwist,
  cursor,
  nested,
  withDeepValue,
  oddEncoding,
  oddIntegerText,
  oddString,
} from './hostile-values';
import type { JsonSchema, Operation, Parameter } from './openapi-operations';
import { parcel } from './delivery';

/**
 * Requests generated from the OpenAPI document (app.swagger()), for the property-based API suite: for each
 * operation, valid-looking requests with real ids and keys (so handlers run, not only validators), and every
 * way of getting one wrong (types, missing and extra fields, encodings, headers, cursors, sizes).
 */

/** One account of a mode with its key and a few real rows: what gets a request past the validators. */
export interface ModeFixture {
  key: string;
  accountId: string;
  endpoints: string[];
  events: string[];
}

export interface FuzzContext {
  test: ModeFixture;
  live: ModeFixture;
  internalToken: string;
  /** Ids of other accounts: a cursor or path id of someone else's row must read as missing. */
  foreign: string[];
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string | Buffer;
}

function pick<T>(values: readonly T[], fallback: T): fc.Arbitrary<T> {
  return values.length > 0 ? fc.constantFrom(...values) : fc.constant(fallback);
}

const URLS = [
  'https://127.0.0.1:9/fuzz',
  'https://localhost:9/hook?x=1',
  'https://[::1]:9/',
  'http://127.0.0.1/',
  'https://user:pass@127.0.0.1/',
  'https://127.0.0.1:99999/',
  'ftp://127.0.0.1/',
  'javascript:alert(1)',
  'https://169.254.169.254/latest/meta-data',
  `https://127.0.0.1/${'a'.repeat(3000)}`,
  'https://127.0.0.1/\u0000',
  'https://127.0.0.1/é🙂',
];

/** A plausible value for a named field: known ids, event kinds, URLs; the schema's type otherwise. */
function validValue(name: string, schema: JsonSchema, own: ModeFixture, ctx: FuzzContext): fc.Arbitrary<unknown> {
  if (name === 'url') return fc.constantFrom(...URLS);
  if (name === 'events') return fc.array(fc.constantFrom(...EVENT_TYPES), { maxLength: 3 });
  // Mostly the kind whose data below is valid, so publishing gets past its checks to storing.
  if (name === 'type')
    return fc.oneof({ weight: 3, arbitrary: fc.constant('parcel.delivered') }, fc.constantFrom(...EVENT_TYPES));
  if (name === 'account_id') return fc.constantFrom(own.accountId, ctx.test.accountId, ctx.live.accountId);
  if (name === 'endpoint_id') return pick(own.endpoints, 'we_none');
  if (name === 'event_id') return pick(own.events, 'evt_none');
  if (name === 'id') return fc.stringMatching(/^evt_fuzz_[A-Za-z0-9]{1,12}$/);
  if (name === 'starting_after') return cursor([...own.events, ...own.endpoints, ...ctx.foreign]);
  if (name === 'data')
    return fc.oneof(
      { weight: 3, arbitrary: fc.constant({ parcel: PARCEL }) },
      fc.constantFrom({ cod_settlement: { amount: 100, currency: 'KES' } }, {}),
    );
  return fromSchema(schema);
}

/** A whole parcel, as publishing requires. */
const PARCEL = parcel();

function fromSchema(schema: JsonSchema): fc.Arbitrary<unknown> {
  const variants = schema.anyOf ?? schema.oneOf;
  if (variants) return fc.oneof(...variants.map(fromSchema));
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (type === 'integer') {
    const min = schema.minimum ?? -1000;
    const max = schema.maximum ?? 2_000_000_000;
    // Boundaries and sizes no column or clock holds, besides values in range.
    const edges = [min - 1, min, max, max + 1, 2 ** 31, 2 ** 32, 2 ** 53 - 1, 2 ** 53 + 2, 2 ** 63, 1e21, 8.64e15];
    return fc.oneof({ weight: 3, arbitrary: fc.integer({ min, max }) }, fc.constantFrom(...edges));
  }
  if (type === 'number') return fc.double({ noNaN: true, noDefaultInfinity: true });
  if (type === 'boolean') return fc.boolean();
  if (type === 'null') return fc.constant(null);
  if (type === 'array') return fc.array(fromSchema(schema.items ?? {}), { maxLength: 3 });
  if (type === 'object') return fc.dictionary(oddString, anyJson, { maxKeys: 3 });
  if (type === 'string') return fc.oneof(fc.string({ maxLength: schema.maxLength ?? 30 }), oddString);
  return anyJson;
}

type Mutation = (value: Record<string, unknown>) => unknown;

/** One field of a valid body made hostile: a wrong type, an odd string, a deep nest, or left out. */
function oneFieldWrong(field: fc.Arbitrary<string>): fc.Arbitrary<Mutation> {
  return fc.oneof(
    field.map(
      (name): Mutation =>
        (value) =>
          omit(value, name),
    ),
    fc.tuple(field, anyJson).map(([name, wrong]): Mutation => (value) => ({ ...value, [name]: wrong })),
    fc.tuple(field, oddString).map(([name, text]): Mutation => (value) => ({ ...value, [name]: text })),
    fc
      .tuple(field, fc.constantFrom(20, 40, 200, 1000), fc.boolean())
      .map(([name, depth, asArray]): Mutation => (value) => ({ ...value, [name]: nested(depth, 1, asArray) })),
  );
}

/** A valid body, then (often) one thing wrong with it; `chaos` adds extra fields and whole wrong bodies. */
function body(schema: JsonSchema, own: ModeFixture, ctx: FuzzContext, chaos: boolean): fc.Arbitrary<unknown> {
  const properties = schema.properties ?? {};
  const names = Object.keys(properties);
  const required = new Set(schema.required ?? []);
  const fields = Object.fromEntries(
    names.map((name) => [name, validValue(name, properties[name] as JsonSchema, own, ctx)]),
  );
  const valid = fc.record(fields, { requiredKeys: names.filter((name) => required.has(name)) }) as fc.Arbitrary<
    Record<string, unknown>
  >;
  const field = names.length > 0 ? fc.constantFrom(...names) : fc.constant('x');
  const extra = fc
    .tuple(fc.oneof(oddString, fc.constantFrom('__proto__', 'constructor', 'prototype')), anyJson)
    .map(([name, value]): Mutation => (body) => ({ ...body, [name]: value }));
  const mutation: fc.Arbitrary<Mutation> = chaos
    ? fc.oneof(
        { weight: 3, arbitrary: fc.constant<Mutation>((value) => value) },
        oneFieldWrong(field),
        extra,
        anyJson.map(
          (whole): Mutation =>
            () =>
              whole,
        ),
      )
    : fc.oneof(
        { weight: 2, arbitrary: fc.constant<Mutation>((value) => value) },
        { weight: 3, arbitrary: oneFieldWrong(field) },
      );
  return fc.tuple(valid, mutation).map(([value, mutate]) => mutate(value));
}

/** A valid body with one field nested thousands of levels deep (inside it, when it is an object). */
function deepBody(schema: JsonSchema, own: ModeFixture, ctx: FuzzContext): fc.Arbitrary<string> {
  const names = Object.keys(schema.properties ?? {});
  const valid = body(schema, own, ctx, false).filter(
    (value): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value),
  );
  // Object fields first: a deep value inside one (data.nested) keeps the body valid all the way to storing it.
  const objects = names.filter((name) => schema.properties?.[name]?.type === 'object');
  const field =
    names.length === 0
      ? fc.constant('x')
      : objects.length > 0
        ? fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...objects) }, fc.constantFrom(...names))
        : fc.constantFrom(...names);
  // Objects take 6 bytes a level and arrays 2: each depth stays under the body limit.
  const nest = fc.oneof(
    fc.constantFrom(4_000, 9_000).map((depth) => [depth, false] as const),
    fc.constantFrom(9_000, 25_000).map((depth) => [depth, true] as const),
  );
  return fc
    .tuple(valid, field, nest)
    .map(([value, name, [depth, asArray]]) => withDeepValue(value, name, depth, asArray));
}

function omit(value: Record<string, unknown>, name: string): Record<string, unknown> {
  const { [name]: _dropped, ...rest } = value;
  return rest;
}

function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    // A lone surrogate has no UTF-8 encoding: send the bytes of an encoded surrogate in its place.
    return `${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))}%ED%A0%80`;
  }
}

function ownIds(own: ModeFixture, path: string): string[] {
  return path.startsWith('/v1/events') ? own.events : own.endpoints;
}

/** A path segment: a real id of the caller most of the time, anything else otherwise. */
function pathValue(own: ModeFixture, ctx: FuzzContext, path: string): fc.Arbitrary<string> {
  const known = ownIds(own, path);
  return fc.oneof(
    { weight: 4, arbitrary: pick(known, 'we_none').map(encode) },
    cursor([...own.events, ...own.endpoints, ...ctx.foreign]).map(encode),
    oddEncoding,
    fc.tuple(pick(known, 'we_none'), oddEncoding).map(([id, odd]) => `${id}${odd}`),
    fc.constantFrom('x'.repeat(201), '.', '..', '%2e', 'we_x;DROP', 'we_x?'),
  );
}

function typedQueryValue(parameter: Parameter, own: ModeFixture, ctx: FuzzContext): fc.Arbitrary<string> {
  if (parameter.schema.type === 'integer') return oddIntegerText;
  return validValue(parameter.name, parameter.schema, own, ctx).map((v) =>
    typeof v === 'string' ? v : (JSON.stringify(v) ?? ''),
  );
}

function queryString(
  parameters: Parameter[],
  own: ModeFixture,
  ctx: FuzzContext,
  chaos: boolean,
): fc.Arbitrary<string> {
  const known = parameters.filter((p) => p.in === 'query');
  const value = (p: Parameter) =>
    fc.oneof({ weight: 3, arbitrary: typedQueryValue(p, own, ctx).map(encode) }, oddString.map(encode), oddEncoding);
  const pairs = known.map((p) => value(p).map((v) => `${p.name}=${v}`));
  const odd = fc.oneof(
    fc.tuple(oddString, oddString).map(([name, v]) => `${encode(name)}=${encode(v)}`),
    fc.constantFrom(
      'limit',
      'starting_after',
      '=',
      '&',
      'a[b]=1',
      'limit[]=1',
      '__proto__=1',
      'constructor[prototype]=1',
    ),
  );
  // Focused: each known parameter at most once; chaos: repeats, unknown names and bare separators too.
  const list = chaos
    ? fc.array(pairs.length > 0 ? fc.oneof({ weight: 3, arbitrary: fc.oneof(...pairs) }, odd) : odd, {
        maxLength: known.length + 2,
      })
    : fc
        .subarray(known.map((p) => p.name))
        .chain((names) =>
          fc.tuple(...names.map((name) => pairs[known.findIndex((p) => p.name === name)] as fc.Arbitrary<string>)),
        );
  return list.map((items) => (items.length > 0 ? `?${items.join('&')}` : ''));
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json; charset=',
  'APPLICATION/JSON',
  'application/json;;',
  'application/vnd.api+json',
  'application/jsonx',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '*/*',
  '',
  ';',
];

function goodAuthorization(op: Operation, own: ModeFixture, ctx: FuzzContext): string {
  return op.auth === 'internal' ? `Bearer ${ctx.internalToken}` : `Bearer ${own.key}`;
}

function authorization(op: Operation, own: ModeFixture, ctx: FuzzContext): fc.Arbitrary<string | undefined> {
  const basic = (user: string, password = '') => `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
  const key = own.key;
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant(goodAuthorization(op, own, ctx)) },
    { weight: 2, arbitrary: fc.constantFrom(basic(key), `Bearer ${ctx.test.key}`, `Bearer ${ctx.live.key}`) },
    fc.constantFrom(
      undefined,
      '',
      'Bearer',
      'Bearer ',
      `bearer ${key}`,
      `Bearer  ${key} `,
      `Bearer ${key} ${key}`,
      `Bearer ${key.slice(0, -1)}`,
      `Bearer ${ctx.internalToken}`,
      `Bearer ${'A'.repeat(20_000)}`,
      basic(key, 'password'),
      'Basic !!!',
      'Basic ',
      'Basic Og==',
      'Digest username="x"',
      `Bearer svc_test_${'0'.repeat(32)}`,
      `Bearer svc_live_${'é'.repeat(10)}`,
    ),
    fc.string({ maxLength: 40 }).map((s) => `Bearer ${s}`),
  );
}

const ACCEPT = [
  undefined,
  'application/json',
  'text/html',
  '*/*',
  'application/xml',
  'text/event-stream',
  '',
  '\u00ff',
];

/** Headers: mostly right, often wrong in one of the ways clients get them wrong. */
function headers(
  op: Operation,
  own: ModeFixture,
  ctx: FuzzContext,
  hasBody: boolean,
): fc.Arbitrary<Record<string, string>> {
  const contentType = fc.oneof(
    { weight: 6, arbitrary: fc.constant<string | undefined>(hasBody ? 'application/json' : undefined) },
    fc.constantFrom<string | undefined>(undefined, 'application/json', ...CONTENT_TYPES),
  );
  return fc.tuple(authorization(op, own, ctx), contentType, fc.constantFrom(...ACCEPT)).map(([auth, type, accept]) => {
    const result: Record<string, string> = {};
    if (auth !== undefined) result.authorization = auth;
    if (type !== undefined) result['content-type'] = type;
    if (accept !== undefined) result.accept = accept;
    return result;
  });
}

const OTHER_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function fillPath(op: Operation, values: string[]): string {
  return op.parameters
    .filter((p) => p.in === 'path')
    .reduce((url, p, i) => url.replace(`{${p.name}}`, values[i] as string), op.path);
}

function pathParamCount(op: Operation): number {
  return op.parameters.filter((p) => p.in === 'path').length;
}

/** Anything: every part of the request may be wrong at once, in every way the suite knows. */
function chaosRequest(op: Operation, own: ModeFixture, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const path = fc
    .tuple(...Array.from({ length: pathParamCount(op) }, () => pathValue(own, ctx, op.path)))
    .map((values) => fillPath(op, values));
  const method = fc.oneof({ weight: 9, arbitrary: fc.constant(op.method) }, fc.constantFrom(...OTHER_METHODS));
  const payload: fc.Arbitrary<string | Buffer | undefined> = op.body
    ? fc.oneof(
        { weight: 3, arbitrary: body(op.body, own, ctx, true).map((value) => JSON.stringify(value) ?? '') },
        fc.tuple(body(op.body, own, ctx, true), bodyTwist).map(([value, twist]) => twist(JSON.stringify(value) ?? '')),
        fc.constant(undefined),
      )
    : fc.oneof(
        { weight: 4, arbitrary: fc.constant(undefined) },
        bodyTwist.map((twist) => twist('{}')),
      );
  return fc
    .tuple(
      method,
      path,
      queryString(op.parameters, own, ctx, true),
      payload,
      headers(op, own, ctx, op.body !== undefined),
    )
    .map(([m, p, q, b, h]) => ({
      method: m,
      url: `${p}${q}`,
      headers: h,
      ...(b === undefined || m === 'GET' || m === 'HEAD' ? {} : { payload: b }),
    }));
}

/**
 * A well-formed request of the caller's own rows, right key and Content-Type, with at most one hostile value
 * in one field or parameter: what reaches the handlers and the database.
 */
function focusedRequest(op: Operation, own: ModeFixture, ctx: FuzzContext): fc.Arbitrary<FuzzRequest> {
  const path = fc
    .tuple(
      ...Array.from({ length: pathParamCount(op) }, () =>
        fc.oneof({ weight: 5, arbitrary: pick(ownIds(own, op.path), 'we_none') }, oddString),
      ),
    )
    .map((values) => fillPath(op, values.map(encode)));
  const payload: fc.Arbitrary<string | Buffer | undefined> = op.body
    ? fc.oneof(
        { weight: 4, arbitrary: body(op.body, own, ctx, false).map((value) => JSON.stringify(value) ?? '') },
        deepBody(op.body, own, ctx),
      )
    : fc.constant(undefined);
  const headers: Record<string, string> = { authorization: goodAuthorization(op, own, ctx) };
  if (op.body) headers['content-type'] = 'application/json';
  return fc
    .tuple(path, queryString(op.parameters, own, ctx, false), payload)
    .map(([p, q, b]) => ({ method: op.method, url: `${p}${q}`, headers, ...(b === undefined ? {} : { payload: b }) }));
}

export function requestFor(op: Operation, ctx: FuzzContext, kind: 'chaos' | 'focused'): fc.Arbitrary<FuzzRequest> {
  const generate = kind === 'chaos' ? chaosRequest : focusedRequest;
  return fc.oneof(generate(op, ctx.test, ctx), generate(op, ctx.live, ctx));
}

/**
 * Spellings of a route's path that a router, a proxy or a string test might read differently: letters
 * percent-encoded (either hex case) or in other case, doubled or encoded slashes, dot segments before it, and
 * odd endings. Half of them only percent-encode letters, the spelling a router decodes back to the route itself.
 */
export function pathSpellings(path: string): fc.Arbitrary<string> {
  const hex = (c: string) => c.charCodeAt(0).toString(16);
  const spelled = (text: string, letter: (c: string) => fc.Arbitrary<string>) =>
    fc
      .tuple(...[...text].map((c) => (/[a-z0-9]/i.test(c) ? letter(c) : fc.constant(c))))
      .map((chars) => chars.join(''));
  const segments = path.split('/').slice(1);
  const encoded = fc
    .tuple(
      ...segments.map((text) => spelled(text, (c) => fc.constantFrom(c, c, `%${hex(c)}`, `%${hex(c).toUpperCase()}`))),
    )
    .map((parts) => parts.map((text) => `/${text}`).join(''));
  const letter = (c: string) => fc.constantFrom(c, c, c.toUpperCase(), `%${hex(c)}`, `%${hex(c).toUpperCase()}`);
  const separator = fc.constantFrom('/', '/', '/', '//', '/./', '/%2f', '/%2F');
  const prefix = fc.constantFrom('', '', '/v1/..', '/.', '/%2e%2e', '/x/%2e%2e', '/x/..', '/');
  const ending = fc.constantFrom('', '', '/', ';', '%20', '?x=1', '%00');
  const wild = fc
    .tuple(prefix, fc.tuple(...segments.map((text) => fc.tuple(separator, spelled(text, letter)))), ending)
    .map(([before, parts, after]) => before + parts.map(([sep, text]) => sep + text).join('') + after);
  return fc.oneof(encoded, wild);
}
