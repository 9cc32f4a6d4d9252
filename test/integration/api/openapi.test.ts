import { compileErrors, validate } from '@readme/openapi-parser';
import { Compile } from 'typebox/compile';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EVENT_TYPES } from '../../../src/core/event-catalog';
import { exampleEvent } from '../../../src/core/event-schemas';
import { apiFixture, type ApiFixture } from '../../helpers/api';

describe('the OpenAPI document', () => {
  let f: ApiFixture;
  let doc: Record<string, any>;
  beforeAll(async () => {
    f = await apiFixture();
    const res = await f.app.inject({ method: 'GET', url: '/docs/json' });
    expect(res.statusCode).toBe(200);
    doc = res.json();
  });
  afterAll(async () => {
    await f?.close();
  });

  it('is valid OpenAPI 3.1 under a validator made for it', async () => {
    expect(doc.openapi).toBe('3.1.0');
    // The validator resolves $refs in place: give it a copy.
    const result = await validate(structuredClone(doc) as Parameters<typeof validate>[0]);
    expect(result.valid, result.valid ? '' : compileErrors(result)).toBe(true);
  });

  it('has a webhooks entry per event kind: the body schema, the signature headers and the expected 2xx', async () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) {
      const post = doc.webhooks[type].post;
      expect(post.responses['2XX']).toBeDefined();
      expect(post.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`)).toEqual([
        'header:Service-Signature',
        'header:Service-Event',
        'header:Service-Delivery',
        'header:webhook-id',
        'header:webhook-timestamp',
        'header:webhook-signature',
        'header:traceparent',
        'header:Service-Version',
        'header:Deprecation',
        'header:Sunset',
      ]);
      const schema = post.requestBody.content['application/json'].schema;
      expect(schema.properties.type).toMatchObject({ const: type });
      // The schema as served still accepts the kind's example and refuses another kind's.
      const check = Compile(schema);
      expect(check.Check(exampleEvent(type))).toBe(true);
      const other = EVENT_TYPES.find((kind) => kind !== type) ?? type;
      expect(check.Check(exampleEvent(other))).toBe(false);
    }
  });
});
