import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiFixture, bearer, type ApiFixture } from '../../helpers/api';
import { testConfig } from '../../helpers/env';
import { ALL_SCOPES } from '../../../src/core/scopes';
import { createApiKey } from '../../../src/domain/api-keys';
import { problemsWith, type Observed } from '../../helpers/fuzz-checks';
import { pageRequest, type PageRoute, type PageSession } from '../../helpers/page-arbitraries';
import { rawExchange, rawRequest, toBytes } from '../../helpers/raw-http';
import {
  pathSpellings,
  requestFor,
  type FuzzContext,
  type FuzzRequest,
  type ModeFixture,
} from '../../helpers/openapi-arbitraries';
import { INTERNAL_OPERATIONS, operationsOf, type Operation } from '../../helpers/openapi-operations';
import { parcel } from '../../helpers/delivery';
import { servedRoutes } from '../../helpers/routes';
import { CredentialFailures } from '../../../src/infra/credential-failures';
import { startApi } from '../../../src/api/server';
import { randomBase62 } from '../../../src/core/ids';
import { createAccount } from '../../helpers/fixtures';
import { CLI_ACTOR } from '../../../src/domain/audit-log';

/**
 * Hostile input, property-based: requests generated from the OpenAPI document for every route (and the hidden
 * internal ones), wrong in every way a client can get them wrong, and valid-looking with real keys and ids so
 * the handlers run too. Whatever is sent: never a 5xx, never a hang, every error in the catalogue's shape, and
 * nothing secret or internal in the response. Seeded and bounded here; `npm run fuzz -- --runs N [--seed S]`
 * runs the same properties longer (FUZZ_RUNS, FUZZ_SEED).
 */

const SEED = Number(process.env.FUZZ_SEED ?? 20_261_125);
const RUNS = Number(process.env.FUZZ_RUNS ?? 60);
const REQUEST_TIMEOUT_MS = 10_000;
const TOKEN = 'internal-token-for-fuzzing-0123456789';
/** FUZZ_STATS=1: print how often each route answered each status and code, to see what the generators reach. */
const STATS = process.env.FUZZ_STATS === '1';
const tally = new Map<string, number>();

function count(op: Operation, kind: string, response: Observed): void {
  let code = '';
  if (response.statusCode >= 400) {
    try {
      code = ` ${JSON.parse(response.body).error?.code ?? ''}`;
    } catch {
      code = ' (not JSON)';
    }
  }
  const key = `${op.method} ${op.path} ${kind} -> ${response.statusCode}${code}`;
  tally.set(key, (tally.get(key) ?? 0) + 1);
}

let fixture: ApiFixture;
let operations: Operation[];
/** Every credential the suite holds: none may ever come back in a response. */
const secrets: string[] = [TOKEN];
/** Ids of earlier operations' accounts: someone else's rows from where each operation stands. */
const foreign: string[] = [];

beforeAll(async () => {
  fixture = await apiFixture({
    config: testConfig({ INTERNAL_API_TOKEN: TOKEN, API_RATE_LIMIT_PER_MINUTE: '1000000' }),
  });
  operations = [...operationsOf(fixture.app.swagger()), ...INTERNAL_OPERATIONS];
  // The suite sends wrong internal tokens by the thousand from one address, as it sends bad keys under a limit of
  // a million: the limit on guesses has its own test (credential-limits.test.ts).
  fixture.app.internalTokenFailures = new CredentialFailures(Number.MAX_SAFE_INTEGER, 60_000, 'internal tokens');
});
afterAll(async () => {
  if (STATS)
    console.log(
      [...tally]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([key, n]) => `${String(n).padStart(6)} ${key}`)
        .join('\n'),
    );
  await fixture?.close();
});

/** Bounded: a request that never answers fails the property instead of the file's timeout. */
async function send(request: FuzzRequest): Promise<Observed> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`)), REQUEST_TIMEOUT_MS);
  });
  try {
    const response = await Promise.race([fixture.app.inject({ ...request, method: request.method as 'GET' }), timeout]);
    return { statusCode: response.statusCode, headers: response.headers, body: response.body };
  } finally {
    clearTimeout(timer);
  }
}

/** A whole parcel, as publishing requires. */
const PARCEL = parcel();

/** A fresh account of a mode with one endpoint and one event, made through the API as a merchant would. */
async function modeFixture(mode: 'test' | 'live'): Promise<ModeFixture> {
  const created = await fixture.key({ mode, status: 'active' });
  secrets.push(created.key);
  return {
    key: created.key,
    accountId: created.account_id,
    ...(await rows(created.key, created.account_id, mode === 'live')),
  };
}

/** Each operation starts from its own accounts, so one operation's deletes and disables never starve the next. */
async function freshContext(): Promise<FuzzContext> {
  const ctx = {
    test: await modeFixture('test'),
    live: await modeFixture('live'),
    internalToken: TOKEN,
    foreign: [...foreign],
  };
  foreign.push(...ctx.test.endpoints, ...ctx.test.events, ...ctx.live.endpoints, ...ctx.live.events);
  return ctx;
}

let signIns = 0;

/** A developers page session (through a real sign-in link) of an account with an endpoint and an event per mode. */
async function pageSession(): Promise<PageSession> {
  const test = await fixture.key({ mode: 'test', status: 'active' });
  const live = await createApiKey(
    fixture.pool,
    { accountId: test.account_id, mode: 'live', scopes: [...ALL_SCOPES] },
    CLI_ACTOR,
  );
  secrets.push(test.key, live.key);
  const ids = { test: await rows(test.key, test.account_id, false), live: await rows(live.key, test.account_id, true) };
  const link = await fixture.app.inject({
    method: 'POST',
    url: '/internal/v1/dashboard/sessions',
    headers: bearer(TOKEN),
    payload: { account_id: test.account_id },
  });
  expect(link.statusCode, link.body).toBe(201);
  // Each sign-in from its own address: the page limits link openings per address.
  signIns += 1;
  // Opening a link only shows its Sign in button; the button's same-origin post signs in.
  const opened = await fixture.app.inject({
    method: 'POST',
    url: new URL(link.json().url).pathname,
    remoteAddress: `10.0.${signIns >> 8}.${signIns & 255}`,
    headers: { origin: 'http://localhost:80', 'content-type': 'application/x-www-form-urlencoded' },
    payload: '',
  });
  const cookie = String(opened.headers['set-cookie'] ?? '').split(';')[0] as string;
  expect(cookie, opened.body).toMatch(/^parcel_dashboard_session=./);
  // From the sign-in's own address: the fuzzed requests' ended cookies spend their address's unknown-session allowance.
  const page = await fixture.app.inject({
    method: 'GET',
    url: '/dashboard/test/keys',
    headers: { cookie },
    remoteAddress: `10.0.${signIns >> 8}.${signIns & 255}`,
  });
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1];
  expect(csrf, page.body.slice(0, 300)).toBeDefined();
  return { cookie, csrf: csrf as string, origin: 'http://localhost:80', ids };
}

/** One endpoint (through the API, with the key) and one published event of an account in a mode. */
async function rows(
  key: string,
  accountId: string,
  livemode: boolean,
): Promise<{ endpoints: string[]; events: string[] }> {
  const endpoint = await fixture.app.inject({
    method: 'POST',
    url: '/v1/webhooks',
    headers: bearer(key),
    payload: { url: 'https://127.0.0.1:9/page' },
  });
  expect(endpoint.statusCode, endpoint.body).toBe(200);
  const event = await fixture.app.inject({
    method: 'POST',
    url: '/internal/v1/events',
    headers: bearer(TOKEN),
    payload: { account_id: accountId, livemode, type: 'parcel.delivered', data: { parcel: PARCEL } },
  });
  expect(event.statusCode, event.body).toBe(201);
  return { endpoints: [endpoint.json().id], events: [event.json().id] };
}

/** Everything the router serves that the OpenAPI document does not describe: the developers page and the docs. */
function pageRoutes(): PageRoute[] {
  return servedRoutes(fixture.app)
    .filter((route) => / \/(dashboard|docs|openapi\.json)/.test(route))
    .map((route) => {
      const [method, path] = route.split(' ') as [string, string];
      return { method, path };
    });
}

describe('every route, fuzzed from the OpenAPI document', () => {
  it('covers every route the app serves under /v1 and /internal, and the probes', () => {
    const covered = new Set(operations.map((op) => `${op.method} ${op.path.replace(/\{(\w+)\}/g, ':$1')}`));
    const served = servedRoutes(fixture.app).filter((route) => /^[A-Z]+ \/(v1|internal|healthz|readyz)/.test(route));
    expect(served.length).toBeGreaterThanOrEqual(17);
    expect(operations.length).toBeGreaterThanOrEqual(17);
    expect(served.filter((route) => !covered.has(route))).toEqual([]);
  });

  it('answers every generated request sanely', { timeout: 60_000 + RUNS * 1_000 }, async () => {
    for (const op of operations) {
      const ctx = await freshContext();
      for (const kind of ['focused', 'chaos'] as const) {
        await fc.assert(
          fc.asyncProperty(requestFor(op, ctx, kind), async (request) => {
            const response = await send(request);
            if (STATS) count(op, kind, response);
            const problems = problemsWith(request, response, secrets);
            if (problems.length > 0)
              throw new Error(`${request.method} ${request.url.slice(0, 200)}\n${problems.join('\n')}`);
          }),
          { seed: SEED, numRuns: RUNS },
        );
      }
    }
  });
});

describe('the developers page and the docs, fuzzed from the router', () => {
  it(
    'answers every generated page request and form post without a 5xx, a hang or a leak',
    { timeout: 60_000 + RUNS * 600 },
    async () => {
      const routes = pageRoutes();
      expect(routes.filter((route) => route.method === 'POST').length).toBeGreaterThanOrEqual(10);
      for (const route of routes) {
        // A fresh session per route: sign-out ends one, and a suspended or deleted row must not starve the next.
        const session = await pageSession();
        await fc.assert(
          fc.asyncProperty(pageRequest(route, session), async (request) => {
            const response = await send(request);
            if (STATS)
              count({ method: route.method, path: route.path, parameters: [], auth: 'none' }, 'page', response);
            const problems = problemsWith(request, response, secrets);
            if (problems.length > 0)
              throw new Error(`${request.method} ${request.url.slice(0, 200)}\n${problems.join('\n')}`);
          }),
          { seed: SEED, numRuns: Math.ceil(RUNS / 2) },
        );
      }
    },
  );
});

describe('requests as bytes on a real socket', () => {
  it(
    'answers repeated, oversized and broken heads in the wire shape, never with a 5xx',
    { timeout: 60_000 + RUNS * 300 },
    async () => {
      const address = await fixture.app.listen({ port: 0, host: '127.0.0.1' });
      const port = Number(new URL(address).port);
      const ctx = await freshContext();
      const paths = [
        '/v1/webhooks',
        `/v1/webhooks/${ctx.test.endpoints[0]}`,
        `/v1/webhooks/${ctx.test.endpoints[0]}/recover`,
        '/v1/events',
        '/internal/v1/events',
        '/healthz',
        '/dashboard/test/keys',
      ];
      await fc.assert(
        fc.asyncProperty(rawRequest(paths, ctx.test.key), async (request) => {
          const bytes = toBytes(request);
          const response = await rawExchange(port, bytes);
          if (STATS)
            count(
              {
                method: 'RAW',
                path: request.path.split('/').slice(0, 3).join('/').slice(0, 20),
                parameters: [],
                auth: 'none',
              },
              'raw',
              response,
            );
          const problems = problemsWith(
            { method: request.method, url: request.path, headers: {}, payload: bytes.toString('latin1') },
            response,
            secrets,
          );
          if (problems.length > 0)
            throw new Error(`${JSON.stringify(bytes.toString('latin1').slice(0, 400))}\n${problems.join('\n')}`);
        }),
        { seed: SEED, numRuns: RUNS },
      );
    },
  );
});

describe('internal routes spelled every way, on the public port of an API with INTERNAL_PORT', () => {
  it(
    'never reach an internal handler: 404 (or 400 for a malformed URL), and nothing is stored',
    { timeout: 60_000 + RUNS * 300 },
    async () => {
      const api = await startApi(
        testConfig({ INTERNAL_API_TOKEN: TOKEN, HOST: '127.0.0.1', PORT: '0', INTERNAL_PORT: '0' }),
      );
      try {
        const port = Number(new URL(api.url).port);
        const accountId = await createAccount(fixture.pool);
        const spelled = fc.oneof(
          pathSpellings('/internal/v1/events'),
          pathSpellings('/internal/v1/dashboard/sessions'),
        );
        await fc.assert(
          fc.asyncProperty(spelled, async (path) => {
            const id = `evt_${randomBase62(24)}`;
            const body = Buffer.from(
              JSON.stringify({
                id,
                account_id: accountId,
                livemode: false,
                type: 'parcel.delivered',
                data: { parcel: parcel() },
              }),
            );
            const bytes = toBytes({
              method: 'POST',
              path,
              headerLines: [`Authorization: Bearer ${TOKEN}`, 'Content-Type: application/json'],
              body,
            });
            const response = await rawExchange(port, bytes);
            if (STATS)
              count({ method: 'POST', path: 'spelled /internal', parameters: [], auth: 'none' }, 'spelling', response);
            expect([400, 404], `${path}: ${response.body}`).toContain(response.statusCode);
            if (response.statusCode === 404) expect(JSON.parse(response.body).error.code, path).toBe('route_not_found');
            const stored = await fixture.pool.query('SELECT count(*)::int AS n FROM events WHERE id = $1', [id]);
            expect(stored.rows[0].n, path).toBe(0);
          }),
          { seed: SEED, numRuns: RUNS },
        );
        const links = await fixture.pool.query(
          'SELECT count(*)::int AS n FROM dashboard_sign_in_links WHERE account_id = $1',
          [accountId],
        );
        expect(links.rows[0].n).toBe(0);
      } finally {
        await api.close();
      }
    },
  );
});

describe('the checks the properties rely on', () => {
  const request: FuzzRequest = { method: 'GET', url: '/v1/webhooks?limit=x', headers: {} };
  const json = (statusCode: number, body: unknown): Observed => ({
    statusCode,
    headers: { 'content-type': 'application/json; charset=utf-8' },
    body: JSON.stringify(body),
  });
  const error = (code: string, type = 'invalid_request_error') => ({ error: { type, code, message: 'm' } });

  it('pass a catalogue error and a success', () => {
    expect(problemsWith(request, json(400, error('parameter_invalid')), [])).toEqual([]);
    expect(problemsWith(request, json(200, { object: 'list', data: [] }), [])).toEqual([]);
  });

  it('catch a 5xx, an unknown code, a wrong type or status, a body not in the shape', () => {
    expect(problemsWith(request, json(500, error('internal_error', 'api_error')), [])).not.toEqual([]);
    expect(problemsWith(request, json(400, error('made_up')), [])).not.toEqual([]);
    expect(problemsWith(request, json(400, error('parameter_invalid', 'api_error')), [])).not.toEqual([]);
    expect(problemsWith(request, json(404, error('parameter_invalid')), [])).not.toEqual([]);
    expect(problemsWith(request, json(400, { message: 'bad' }), [])).not.toEqual([]);
    expect(
      problemsWith(request, { statusCode: 400, headers: { 'content-type': 'text/plain' }, body: 'bad' }, []),
    ).not.toEqual([]);
  });

  it('catch secrets and internals that the request did not send', () => {
    const leaked = (text: string) =>
      problemsWith(
        request,
        json(400, { error: { type: 'invalid_request_error', code: 'parameter_invalid', message: text } }),
        ['s3cret-token'],
      );
    expect(leaked(`key svc_test_${'a'.repeat(32)}`)).not.toEqual([]);
    expect(leaked(`whsec_${'b'.repeat(32)}`)).not.toEqual([]);
    expect(leaked('Error\n    at storeEvent (/srv/domain/events.ts:124:73)')).not.toEqual([]);
    expect(leaked('TypeError: cannot read properties of undefined')).not.toEqual([]);
    expect(leaked('SELECT id FROM api_keys WHERE key_hash = $1')).not.toEqual([]);
    expect(leaked('duplicate key value violates unique constraint "events_pkey"')).not.toEqual([]);
    expect(leaked('ENOENT: /work/app/node_modules/x')).not.toEqual([]);
    expect(leaked('the token is s3cret-token')).not.toEqual([]);
    // An echo of the caller's own input is no leak, and a webhook secret is shown on registration.
    const echoed = { ...request, url: `/v1/webhooks?limit=whsec_${'c'.repeat(32)}` };
    expect(problemsWith(echoed, json(400, error(`whsec_${'c'.repeat(32)}`)), [])).not.toContain(
      expect.stringContaining('webhook secret'),
    );
    const registered = { method: 'POST', url: '/v1/webhooks', headers: {} };
    expect(problemsWith(registered, json(200, { secret: `whsec_${'d'.repeat(32)}` }), [])).toEqual([]);
  });
});
