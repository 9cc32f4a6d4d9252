import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_FORM_FIELDS } from '../../../src/core/form-body';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { testConfig } from '../../helpers/env';

/**
 * Every body parser the API runs (the JSON of /v1 and the internal routes, the developers page's forms), each
 * driven with a field repeated up to the body limit, nesting 10,000 levels deep and bodies at and just over the
 * limit: each answers a 4xx, never a 5xx. A body at the limit costs per byte no more than a small body of the
 * same shape (a generous factor: the small one's time is mostly the request's fixed cost), which a parser whose
 * work grows with the square of the body fails by far, and /healthz answers while each is in flight.
 */

const TOKEN = 'internal-token-for-body-parsers-0123';
const LIMIT = 64 * 1024;
const ORIGIN = 'http://localhost:80';
const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';

let f: ApiFixture;
let key: string;
let accountId: string;
let cookie: string;
let csrf: string;

beforeAll(async () => {
  f = await apiFixture({ config: testConfig({ INTERNAL_API_TOKEN: TOKEN, API_RATE_LIMIT_PER_MINUTE: '1000000' }) });
  const created = await f.key({ status: 'active' });
  key = created.key;
  accountId = created.account_id;
  const link = await f.app.inject({
    method: 'POST',
    url: '/internal/v1/dashboard/sessions',
    headers: bearer(TOKEN),
    payload: { account_id: accountId },
  });
  expect(link.statusCode, link.body).toBe(201);
  const opened = await f.app.inject({
    method: 'POST',
    url: new URL(link.json().url).pathname,
    headers: { origin: ORIGIN, 'content-type': FORM },
    payload: '',
  });
  cookie = String(opened.headers['set-cookie'] ?? '').split(';')[0] as string;
  expect(cookie, opened.body).toMatch(/^parcel_dashboard_session=./);
  const page = await f.app.inject({ method: 'GET', url: '/dashboard/test/endpoints', headers: { cookie } });
  csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] as string;
  expect(csrf, page.body.slice(0, 300)).toBeDefined();
});
afterAll(() => f?.close());

/** `unit` repeated to exactly `bytes` bytes (the last copy cut short). */
const fill = (unit: string, bytes: number) => unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes);
/** A JSON object of one member repeated, `bytes` long: `{"a":1,"a":1,...,"a":1}` padded with spaces. */
const repeatedMember = (member: string, bytes: number) => {
  const inner = `${member},`.repeat(Math.floor((bytes - 2) / (member.length + 1))).slice(0, -1);
  return `{${inner}}${' '.repeat(bytes - inner.length - 2)}`;
};
const deepArrays = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const deepObjects = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
const padded = (json: string, bytes: number) => `${json}${' '.repeat(bytes - json.length)}`;

interface Target {
  name: string;
  url: string;
  headers: Record<string, string>;
  /** A valid-looking body of the route, for the at-limit padding. */
  sample: string;
  /** The name of a field the route reads, to repeat. */
  field: string;
}

const jsonTargets = (): Target[] => [
  {
    name: 'POST /v1/webhooks',
    url: '/v1/webhooks',
    headers: bearer(key),
    sample: '{"url":"https://127.0.0.1:9/x"}',
    field: 'url',
  },
  {
    name: 'POST /internal/v1/events',
    url: '/internal/v1/events',
    headers: bearer(TOKEN),
    sample: `{"account_id":"${accountId}","livemode":false,"type":"parcel.nope","data":{}}`,
    field: 'account_id',
  },
  {
    name: 'POST /internal/v1/dashboard/sessions',
    url: '/internal/v1/dashboard/sessions',
    headers: bearer(TOKEN),
    sample: '{"account_id":"acct_none"}',
    field: 'account_id',
  },
];

const formTargets = (): Target[] => [
  {
    name: 'POST /dashboard/:mode/endpoints (signed in)',
    url: '/dashboard/test/endpoints',
    headers: { cookie, origin: ORIGIN },
    sample: `_csrf=${csrf}&url=https%3A%2F%2F127.0.0.1%3A9%2Fx`,
    field: 'url',
  },
  {
    name: 'POST /dashboard/:mode/endpoints (signed out)',
    url: '/dashboard/test/endpoints',
    headers: { origin: ORIGIN },
    sample: 'url=x',
    field: 'a',
  },
  {
    name: 'POST /dashboard/sign-in/:token',
    url: '/dashboard/sign-in/not-a-token',
    headers: { origin: ORIGIN },
    sample: '',
    field: 'a',
  },
  { name: 'POST /dashboard/nowhere', url: '/dashboard/nowhere', headers: {}, sample: 'a=1', field: 'a' },
];

async function send(options: InjectOptions): Promise<LightMyRequestResponse> {
  return f.app.inject(options);
}

/**
 * Sends `payload`, and /healthz while it is in flight; both must answer, the hostile one with a 4xx (or, for a
 * body a route may well accept, anything but a 5xx). How long either takes is the bench's to measure
 * (`npm run bench -- body-parsing`), not this test's.
 */
async function hostile(target: Target, type: string, payload: string, label: string, refused = true): Promise<void> {
  const pending = send({
    method: 'POST',
    url: target.url,
    headers: { ...target.headers, 'content-type': type },
    payload,
  });
  const health = await send({ method: 'GET', url: '/healthz' });
  const response = await pending;
  expect(health.statusCode, `${label}: /healthz`).toBeLessThan(500);
  if (refused)
    expect(response.statusCode, `${target.name} ${label}: ${response.body.slice(0, 200)}`).toBeGreaterThanOrEqual(400);
  expect(response.statusCode, `${target.name} ${label}: ${response.body.slice(0, 200)}`).toBeLessThan(500);
}

/** A 1 KB body of the shape and one at the limit: both answered with a 4xx, /healthz answering meanwhile. */
async function expectRefusedUpToLimit(target: Target, type: string, body: (bytes: number) => string): Promise<void> {
  const large = body(LIMIT);
  expect(large.length).toBe(LIMIT);
  await hostile(target, type, body(1024), '1 KB');
  await hostile(target, type, large, 'at the limit');
}

describe('the JSON parsers (/v1 and the internal routes)', () => {
  it('answer one member repeated up to the body limit with a 4xx', async () => {
    for (const target of jsonTargets()) {
      await expectRefusedUpToLimit(target, JSON_TYPE, (bytes) => repeatedMember(`"${target.field}":"x"`, bytes));
      await expectRefusedUpToLimit(target, JSON_TYPE, (bytes) => repeatedMember('"a":1', bytes));
    }
  });

  it('answer 10,000 nested arrays or objects, alone or in a field, with a 4xx', async () => {
    for (const target of jsonTargets()) {
      for (const deep of [deepArrays(10_000), deepObjects(10_000)]) {
        await hostile(target, JSON_TYPE, deep, 'deep');
        await hostile(target, JSON_TYPE, `{"${target.field}":${deep}}`, 'deep field');
      }
    }
  });

  it('read a body at the limit (never a 5xx) and refuse one byte over it as body_too_large', async () => {
    for (const target of jsonTargets()) {
      await hostile(target, JSON_TYPE, padded(target.sample, LIMIT), 'at the limit', false);
      const over = await send({
        method: 'POST',
        url: target.url,
        headers: { ...target.headers, 'content-type': JSON_TYPE },
        payload: padded(target.sample, LIMIT + 1),
      });
      expect(over.statusCode, target.name).toBe(413);
      expect(over.json().error.code).toBe('body_too_large');
    }
  });

  it('refuse a form as unsupported_media_type', async () => {
    for (const target of jsonTargets()) {
      const response = await send({
        method: 'POST',
        url: target.url,
        headers: { ...target.headers, 'content-type': FORM },
        payload: 'a=1',
      });
      expect(response.statusCode, target.name).toBe(415);
      expect(response.json().error.code).toBe('unsupported_media_type');
    }
  });
});

describe("the developers page's form parser", () => {
  it('answers one field repeated up to the body limit with a 4xx', async () => {
    for (const target of formTargets()) {
      await expectRefusedUpToLimit(target, FORM, (bytes) => fill(`${target.field}&`, bytes));
      await expectRefusedUpToLimit(target, FORM, (bytes) => fill(`${target.field}=1&`, bytes));
    }
  });

  it('refuses more than MAX_FORM_FIELDS fields as body_too_large (413), in the page', async () => {
    for (const target of formTargets()) {
      const response = await send({
        method: 'POST',
        url: target.url,
        headers: { ...target.headers, 'content-type': FORM },
        payload: `${target.sample}${'&a'.repeat(MAX_FORM_FIELDS)}`,
      });
      expect(response.statusCode, target.name).toBe(413);
      expect(response.headers['content-type']).toMatch(/^text\/html/);
      expect(response.body).toContain('body_too_large');
    }
  });

  it('answers a field name nested 10,000 levels deep and a body at the limit, never with a 5xx; one byte over is 413', async () => {
    for (const target of formTargets()) {
      await hostile(target, FORM, `${target.sample}&${'a['.repeat(10_000)}${']'.repeat(10_000)}=1`, 'deep name', false);
      await hostile(
        target,
        FORM,
        `${target.sample}&description=${fill('x', LIMIT - target.sample.length - 13)}`,
        'at the limit',
        false,
      );
      const over = await send({
        method: 'POST',
        url: target.url,
        headers: { ...target.headers, 'content-type': FORM },
        payload: `${target.sample}&description=${fill('x', LIMIT - target.sample.length - 12)}`,
      });
      expect(over.statusCode, target.name).toBe(413);
    }
  });

  it('takes urlencoded forms only: JSON, text and multipart bodies are 415 unsupported_media_type', async () => {
    const bodies: Array<[string, string]> = [
      [JSON_TYPE, JSON.stringify({ _csrf: [csrf], url: { href: 'https://127.0.0.1:9/x' }, events: 1 })],
      [JSON_TYPE, JSON.stringify({ _csrf: csrf, url: ['https://127.0.0.1:9/x'], description: null })],
      ['text/plain', `_csrf=${csrf}&url=x`],
      [
        'multipart/form-data; boundary=x',
        `--x\r\nContent-Disposition: form-data; name="_csrf"\r\n\r\n${csrf}\r\n--x--\r\n`,
      ],
      ['application/xml', '<a/>'],
    ];
    for (const target of formTargets()) {
      for (const [type, payload] of bodies) {
        const response = await send({
          method: 'POST',
          url: target.url,
          headers: { ...target.headers, 'content-type': type },
          payload,
        });
        expect(response.statusCode, `${target.name} ${type}`).toBe(415);
        expect(response.body).toContain('unsupported_media_type');
      }
    }
  });

  it('answers a field repeated where one value is read, or left empty, with a 4xx or a form page, never a 5xx', async () => {
    const forms = [
      `_csrf=${csrf}&url=https%3A%2F%2F127.0.0.1%3A9%2Fa&url=https%3A%2F%2F127.0.0.1%3A9%2Fb`,
      `_csrf=${csrf}&_csrf=${csrf}x&url=x`,
      `_csrf=${csrf}&url=&rate_limit=&rate_limit=1e999&events=&events=parcel.nope`,
      `_csrf=${csrf}&url[]=x&url[a]=y&__proto__=x&constructor=y`,
    ];
    for (const payload of forms) {
      const response = await send({
        method: 'POST',
        url: '/dashboard/test/endpoints',
        headers: { cookie, origin: ORIGIN, 'content-type': FORM },
        payload,
      });
      expect(response.statusCode, `${payload}: ${response.body.slice(0, 200)}`).toBeLessThan(500);
    }
  });
});
