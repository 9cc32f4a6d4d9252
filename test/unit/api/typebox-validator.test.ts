import { describe, expect, it } from 'vitest';
import Type from 'typebox';
import { jsonDepth, MAX_BODY_DEPTH, strictTypeBoxCompiler } from '../../../src/api/typebox-validator';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i += 1) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

describe('body depth', () => {
  it('measures nesting without recursing, stopping once past the limit', () => {
    expect(jsonDepth(1)).toBe(0);
    expect(jsonDepth({})).toBe(1);
    expect(jsonDepth({ a: [1, { b: null }] })).toBe(3);
    expect(jsonDepth(nested(10))).toBe(10);
    // Deeper than any recursive walk could go; the count stops just past the limit.
    expect(jsonDepth(nested(200_000))).toBe(MAX_BODY_DEPTH + 1);
  });

  it('refuses a body nested deeper than the limit before checking its schema, and accepts one at the limit', () => {
    const validate = strictTypeBoxCompiler({
      schema: Type.Object({ data: Type.Object({}, { additionalProperties: true }) }),
      httpPart: 'body',
      method: 'POST',
      url: '/x',
    }) as (input: unknown) => { value?: unknown; error?: Array<{ keyword: string; instancePath: string }> };
    expect(validate({ data: nested(MAX_BODY_DEPTH - 1) }).error).toBeUndefined();
    const refused = validate({ data: nested(MAX_BODY_DEPTH) });
    expect(refused.error?.[0]).toMatchObject({ keyword: 'maxDepth', instancePath: '' });
  });
});
