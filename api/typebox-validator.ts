import type { FastifySchemaCompiler } from 'fastify';
import type { TSchema } from 'typebox';
import { Compile } from 'typebox/compile';
import { Value } from 'typebox/value';

/**
 * A validator compiler for routes that must not coerce JSON bodies. The app's ajv runs with
 * coerceTypes 'array', which would quietly turn `"events": "parcel.created"` into a list and `"url": 5`
 * into "5"; here bodies are checked as sent, while querystring and params (always strings on the wire)
 * are converted to their schema types first. Register it inside a route plugin with setValidatorCompiler.
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

export const strictTypeBoxCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const check = Compile(schema);
  return (input: unknown) => {
    // No body at all is read as an empty object, so a missing field is named rather than "must be object".
    const raw = httpPart === 'body' && (input === undefined || input === null) ? {} : input;
    const value = httpPart === 'body' ? raw : Value.Convert(schema, raw);
    if (check.Check(value)) return { value };
    return { error: firstUseful(check.Errors(value) as unknown as Issue[]) as never };
  };
};
