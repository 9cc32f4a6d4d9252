import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';

/**
 * The app's validator compiler (api/app.ts). Fastify's default ajv coerces, which would quietly turn
 * `"events": "parcel.created"` into a list, `"url": 5` into "5" and `"livemode": "true"` into true; here
 * bodies are checked as sent, while querystring and params (always strings on the wire) are converted to
 * their schema types first.
 *
 * Issues are reshaped to ajv's (missingProperty, additionalProperty) so api/errors.ts maps them the same way.
 */

interface Issue {
  keyword: string;
  instancePath: string;
  schemaPath?: string;
  message: string;
  params: Record<string, unknown>;
}

function ajvShaped(issue: Issue): Issue {
  const params = issue.params ?? {};
  if (issue.keyword === 'required' && Array.isArray(params.requiredProperties)) {
    return { ...issue, params: { missingProperty: params.requiredProperties[0] } };
  }
  if (issue.keyword === 'additionalProperties' && Array.isArray(params.additionalProperties)) {
    return { ...issue, params: { additionalProperty: params.additionalProperties[0] } };
  }
  return issue;
}

/** The issue a caller can act on: TypeBox reports `additionalProperties: false` as a bare "schema is false" first. */
function firstUseful(issues: Issue[]): Issue[] {
  const useful = issues.filter((issue) => issue.keyword !== 'boolean');
  return (useful.length > 0 ? useful : issues).map(ajvShaped);
}

const DECIMAL_INTEGER = /^-?\d+$/;

/**
 * Value.Convert reads `1.5` and `true` as 1 and `0x10` as 16; an integer on the wire must be written as one.
 * Returns the properties sent otherwise, to be put back as sent after converting, so the check names the
 * parameter instead of quietly using another number. Taken before converting: Convert works in place.
 */
function nonDecimalIntegers(schema: TSchema, raw: unknown): Record<string, string> {
  const properties = (schema as { properties?: Record<string, { type?: unknown }> }).properties;
  const found: Record<string, string> = {};
  if (!properties || typeof raw !== 'object' || raw === null) return found;
  const sent = raw as Record<string, unknown>;
  for (const [name, property] of Object.entries(properties)) {
    const value = Object.hasOwn(sent, name) ? sent[name] : undefined;
    if (property.type === 'integer' && typeof value === 'string' && !DECIMAL_INTEGER.test(value)) found[name] = value;
  }
  return found;
}

function convertQuery(schema: TSchema, raw: unknown): unknown {
  const keep = nonDecimalIntegers(schema, raw);
  const converted = Value.Convert(schema, raw);
  if (Object.keys(keep).length === 0 || typeof converted !== 'object' || converted === null) return converted;
  return { ...converted, ...keep };
}

/**
 * How deep a JSON body may nest. Bodies are small (the body limit) but JSON.parse reads any depth, while
 * JSON.stringify, Postgres's jsonb and the delivery path recurse: a body of a few kilobytes of brackets would
 * overflow a stack there and fail as our error. Event data is a handful of levels deep; this leaves room.
 */
export const MAX_BODY_DEPTH = 32;

/** The nesting depth of a parsed JSON value, without recursion (the value may be deeper than any stack). */
export function jsonDepth(value: unknown, stopAfter = MAX_BODY_DEPTH): number {
  let deepest = 0;
  const pending: Array<[unknown, number]> = [[value, 0]];
  while (pending.length > 0) {
    const [current, depth] = pending.pop() as [unknown, number];
    if (typeof current !== 'object' || current === null) continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > stopAfter) return deepest;
    for (const child of Object.values(current)) pending.push([child, depth + 1]);
  }
  return deepest;
}

const TOO_DEEP: Issue = {
  keyword: 'maxDepth',
  instancePath: '',
  message: `nested more than ${MAX_BODY_DEPTH} levels deep`,
  params: { limit: MAX_BODY_DEPTH },
};

export const strictTypeBoxCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (input: unknown) => {
    // No body at all is read as an empty object, so a missing field is named rather than "must be object".
    const raw = httpPart === 'body' && (input === undefined || input === null) ? {} : input;
    if (httpPart === 'body' && jsonDepth(raw) > MAX_BODY_DEPTH) return { error: [TOO_DEEP] as never };
    const value = httpPart === 'body' ? raw : convertQuery(schema, raw);
    if (check.Check(value)) return { value };
    return { error: firstUseful(check.Errors(value)) as never };
  };
};
