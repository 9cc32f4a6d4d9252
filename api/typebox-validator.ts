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

export const strictTypeBoxCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (input: unknown) => {
    // No body at all is read as an empty object, so a missing field is named rather than "must be object".
    const raw = httpPart === 'body' && (input === undefined || input === null) ? {} : input;
    const value = httpPart === 'body' ? raw : convertQuery(schema, raw);
    if (check.Check(value)) return { value };
    return { error: firstUseful(check.Errors(value) as unknown as Issue[]) as never };
  };
};
