import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_UNIX_SECONDS } from '../../../src/api/schemas';
import { MAX_BODY_DEPTH } from '../../../src/api/typebox-validator';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';

/** Hostile requests of the kinds fuzz.test.ts generates, refused at the edge rather than failing deeper in: each pinned. */

const TOKEN = 'internal-token-for-hostile-bodies-0123';
/** A whole parcel, as publishing requires, without its closing brace: a test adds a field of its own. */
const PARCEL_FIELDS = JSON.stringify(parcel()).slice(0, -1);
const PARCEL = `${PARCEL_FIELDS}}`;

/** Written as text: JSON.stringify itself overflows on the deepest of these. */
const deep = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;

describe('deeply nested JSON bodies', () => {
  let f: ApiFixture;
  let accountId: string;
  let key: string;
  beforeAll(async () => {
    f = await apiFixture({ config: testConfig({ INTERNAL_API_TOKEN: TOKEN }) });
    const created = await f.key({ status: 'active' });
    accountId = created.account_id;
    key = created.key;
  });
  afterAll(() => f?.close());

  const publish = (data: string) =>
    f.app.inject({
      method: 'POST',
      url: '/internal/v1/events',
      headers: { ...bearer(TOKEN), 'content-type': 'application/json' },
      payload: `{"account_id":"${accountId}","livemode":false,"type":"parcel.delivered","data":${data}}`,
    });

  it('refuses event data nested thousands of levels deep as invalid_request, not a 500', async () => {
    for (const depth of [MAX_BODY_DEPTH, 5_000, 10_000]) {
      const response = await publish(`{"parcel":${PARCEL},"extra":${deep(depth)}}`);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'invalid_request', type: 'invalid_request_error' });
      expect(response.json().error.message).toContain(`${MAX_BODY_DEPTH} levels`);
    }
  });

  it('still stores event data a few levels deep', async () => {
    // A parcel may carry fields the schema does not name: one nested just under the limit is stored.
    const response = await publish(`{"parcel":${PARCEL_FIELDS},"extra":${deep(MAX_BODY_DEPTH - 4)}}}`);
    expect(response.statusCode, response.body).toBe(201);
  });

  it('refuses a deep body on a merchant route the same way', async () => {
    const response = await f.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: `{"url":"https://127.0.0.1:9/x","description":${deep(5_000)}}`,
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json().error.code).toBe('invalid_request');
  });
});

describe('recovery windows beyond any timestamp', () => {
  let f: ApiFixture;
  let key: string;
  let endpointId: string;
  beforeAll(async () => {
    f = await apiFixture();
    key = (await f.key({ status: 'active' })).key;
    const endpoint = await f.app.inject({
      method: 'POST',
      url: '/v1/webhooks',
      headers: bearer(key),
      payload: { url: 'https://127.0.0.1:9/x' },
    });
    endpointId = endpoint.json().id;
  });
  afterAll(() => f?.close());

  const recover = (body: string) =>
    f.app.inject({
      method: 'POST',
      url: `/v1/webhooks/${endpointId}/recover`,
      headers: { ...bearer(key), 'content-type': 'application/json' },
      payload: body,
    });

  it('refuses an until past the year 9999 (up to more than a Postgres int8 holds) as parameter_invalid', async () => {
    for (const until of ['9223372036854776000', '1e300', String(MAX_UNIX_SECONDS + 1)]) {
      const response = await recover(`{"since":0,"until":${until}}`);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json().error).toMatchObject({ code: 'parameter_invalid', param: 'until' });
    }
  });

  it('accepts the widest window there is', async () => {
    const response = await recover(`{"since":0,"until":${MAX_UNIX_SECONDS}}`);
    expect(response.statusCode, response.body).toBe(202);
  });
});
