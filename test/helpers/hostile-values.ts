import fc from 'fast-check';

/**
 * Values a hostile or careless caller sends, for the property-based API suite (test/integration/api/fuzz.test.ts):
 * odd strings, every shape of JSON value, cursors, integers written in every way, bodies that break encodings.
 */

/** Any UTF-16 code unit, lone surrogates included: what JSON's \u escapes can carry. */
const codeUnit = fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n));

const NOTABLE_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\ud800',
  'x\udfffy',
  '\ufeff',
  '\u202etxt.exe',
  '\r\n',
  'é',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '🙂'.repeat(50),
  "' OR 1=1 --",
  "'; DROP TABLE accounts; --",
  '$1',
  '%s%n%x',
  '%00',
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '__proto__',
  'constructor',
  'null',
  'NaN',
  '-1',
  '1e309',
  'x'.repeat(300),
  'x'.repeat(70_000),
];

/** Unicode of every kind: notable strings, full code points, bare code units. */
export const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...NOTABLE_STRINGS),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: codeUnit, maxLength: 40 }),
);

/** Any JSON value, a few levels deep, with odd strings and numbers at the leaves. */
export const anyJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.constantFrom(0, -1, 2 ** 53, -(2 ** 63), 1e308, 0.5),
    oddString,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(oddString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

/** An integer as a query string can write it, and as it cannot. */
export const oddIntegerText: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: -5, max: 150 }).map(String),
  fc.constantFrom(
    '0',
    '-0',
    '1.5',
    '1e2',
    '0x10',
    ' 5',
    '5 ',
    '+5',
    '99999999999999999999',
    'NaN',
    'Infinity',
    '',
    'true',
    '[]',
    '٣',
  ),
);

/** Cursor shapes: real ids (of this account, of another, of another kind) and anything else. */
export function cursor(known: readonly string[]): fc.Arbitrary<string> {
  const prefixes = ['evt_', 'we_', 'dlv_', 'acct_', 'town_', 'rcv_', 'key_'];
  return fc.oneof(
    known.length > 0 ? fc.constantFrom(...known) : fc.constant('evt_none'),
    fc.constantFrom(...prefixes),
    fc.tuple(fc.constantFrom(...prefixes), fc.string({ maxLength: 80 })).map(([p, s]) => p + s),
    fc.tuple(fc.constantFrom(...prefixes), fc.nat(400)).map(([p, n]) => p + 'A'.repeat(n)),
    fc.constantFrom('0', '-1', '1e10', 'null', '{"id":1}', 'evt_\u0000', 'we_\ud800', "evt_' OR '1'='1"),
    oddString,
  );
}

/** Invalid UTF-8: a lone continuation byte, an overlong '/', an encoded surrogate, a truncated sequence, 0xFF. */
const BAD_UTF8 = [
  [0x80],
  [0xc0, 0xaf],
  [0xe0, 0x80, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xff],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
];

export type BodyTwist = (json: string) => string | Buffer;

/**
 * One field of a JSON object body set to a value nested deeper than any recursive serializer's stack, written as
 * text (JSON.stringify would overflow here); the body's other fields are kept.
 */
export function deepField(names: readonly string[]): fc.Arbitrary<BodyTwist> {
  const field = names.length > 0 ? fc.constantFrom(...names) : fc.constant('x');
  return fc
    .tuple(field, fc.constantFrom(2_000, 6_000, 10_000, 30_000), fc.boolean())
    .map(([name, depth, asArray]): BodyTwist => (json) => {
      const [open, close] = asArray ? ['[', ']'] : ['{"a":', '}'];
      const deep = `${open.repeat(depth)}1${close.repeat(depth)}`;
      const fields = json.startsWith('{') && json.length > 2 ? `${json.slice(1, -1)},` : '';
      return `{${fields}${JSON.stringify(name)}:${deep}}`;
    });
}

/** The API's body limit (src/api/server.ts): hostile bodies are sized just under, at and just over it. */
export const BODY_LIMIT = 64 * 1024;
const NEAR_LIMIT = [BODY_LIMIT - 100, BODY_LIMIT, BODY_LIMIT + 1] as const;

/** `unit` repeated to exactly `bytes` bytes, the last copy cut short. */
export function repeatTo(unit: string, bytes: number): string {
  return unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
}

/**
 * One member repeated up to the body limit (`{"url":"x","url":"x",...}`), or one of the body's own fields: work
 * that grows with the square of the repeats in a parser would show here.
 */
export function repeatedMember(names: readonly string[]): fc.Arbitrary<BodyTwist> {
  const field = names.length > 0 ? fc.constantFrom(...names) : fc.constant('a');
  return fc
    .tuple(field, fc.constantFrom('"x"', '1', '[]', '{}', 'null'), fc.constantFrom(...NEAR_LIMIT))
    .map(([name, value, bytes]): BodyTwist => () => {
      const member = `${JSON.stringify(name)}:${value},`;
      const inner = member.repeat(Math.floor((bytes - 2) / member.length)).slice(0, -1);
      return `{${inner}}${' '.repeat(Math.max(0, bytes - inner.length - 2))}`;
    });
}

/**
 * Urlencoded bodies of the shapes that cost a form parser the most: one field repeated (`a&a&...`, `a=1&a=1&...`)
 * up to the body limit, just past the page's field cap, and a field name of thousands of nested brackets.
 */
export function hostileForm(fields: readonly string[], maxFields: number): fc.Arbitrary<string> {
  const name = fields.length > 0 ? fc.constantFrom('a', ...fields) : fc.constant('a');
  return fc.oneof(
    fc
      .tuple(name, fc.constantFrom('', '=1', '=', '=%00'), fc.constantFrom(...NEAR_LIMIT))
      .map(([field, value, bytes]) => repeatTo(`${field}${value}&`, bytes)),
    fc
      .tuple(name, fc.constantFrom(maxFields, maxFields + 1, maxFields * 4))
      .map(([field, count]) => Array.from({ length: count }, () => `${field}=1`).join('&')),
    fc
      .tuple(fc.constantFrom(1_000, 10_000), fc.constantFrom('[', 'a['))
      .map(([depth, open]) => `${open.repeat(depth)}${']'.repeat(depth)}=1`),
  );
}

/** Ways to break a JSON body on the wire while keeping (or not) its text. */
export const bodyTwist: fc.Arbitrary<BodyTwist> = fc.oneof(
  fc.constant<BodyTwist>((json) => json),
  fc.constant<BodyTwist>((json) => `\ufeff${json}`),
  fc.constant<BodyTwist>((json) => json.slice(0, Math.max(0, json.length - 1))),
  fc.constant<BodyTwist>((json) => `${json}garbage`),
  fc.constant<BodyTwist>((json) => `${json}\u0000`),
  fc.constant<BodyTwist>((json) => Buffer.from(json, 'utf16le')),
  fc.tuple(fc.constantFrom(...BAD_UTF8), fc.nat()).map(([bytes, at]): BodyTwist => (json) => {
    const text = Buffer.from(json);
    // Inside a string literal when there is one, so the parser reads past the bytes.
    const quote = text.indexOf(0x22);
    const cut = quote >= 0 ? quote + 1 : at % (text.length + 1);
    return Buffer.concat([text.subarray(0, cut), Buffer.from(bytes), text.subarray(cut)]);
  }),
  // Just under and over the 64 KiB body limit.
  fc.constantFrom(60_000, 65_536, 70_000, 300_000).map(
    (size): BodyTwist =>
      (json) =>
        `${' '.repeat(Math.max(0, size - json.length))}${json}`,
  ),
  fc
    .constantFrom(
      '',
      'null',
      '[]',
      '"text"',
      '1',
      'true',
      '{',
      '}',
      '{"a":1,"a":2}',
      '{"__proto__":{"x":1}}',
      '{"constructor":{"prototype":{}}}',
    )
    .map(
      (text): BodyTwist =>
        () =>
          text,
    ),
  fc.integer({ min: 1, max: 20_000 }).map(
    (depth): BodyTwist =>
      () =>
        `${'['.repeat(depth)}${']'.repeat(depth)}`,
  ),
  deepField(['data', 'description', 'events', 'url', 'endpoint_id']),
  repeatedMember(['account_id', 'data', 'description', 'events', 'url', 'endpoint_id']),
  fc.uint8Array({ maxLength: 200 }).map(
    (bytes): BodyTwist =>
      () =>
        Buffer.from(bytes),
  ),
);

const DEEP_MARKER = '\u0001deep\u0001';

/**
 * A body as JSON text with one field nested `depth` levels deep, inside the field when it holds an object (so
 * the object's own fields, like data.parcel, stay valid), written as text past JSON.stringify's stack.
 */
export function withDeepValue(value: Record<string, unknown>, field: string, depth: number, asArray: boolean): string {
  const current = value[field];
  const inside = typeof current === 'object' && current !== null && !Array.isArray(current);
  const marked = { ...value, [field]: inside ? { ...current, nested: DEEP_MARKER } : DEEP_MARKER };
  const [open, close] = asArray ? ['[', ']'] : ['{"a":', '}'];
  return JSON.stringify(marked).replace(JSON.stringify(DEEP_MARKER), `${open.repeat(depth)}1${close.repeat(depth)}`);
}

/** A JSON value nested `depth` levels deep, as objects or arrays. */
export function nested(depth: number, leaf: unknown = 1, asArray = false): unknown {
  let value = leaf;
  for (let i = 0; i < depth; i += 1) value = asArray ? [value] : { a: value };
  return value;
}

/** Percent-encoding of every kind for a path segment or a query value. */
export const oddEncoding: fc.Arbitrary<string> = fc.constantFrom(
  '%',
  '%Z',
  '%ZZ',
  '%00',
  '%2F',
  '%2e%2e',
  '%C0%AF',
  '%E0%80%AF',
  '%ED%A0%80',
  '%FF',
  '%EF%BB%BF',
  '%F0%9F%99%82',
  '%25',
  '%u0041',
  '+',
);
