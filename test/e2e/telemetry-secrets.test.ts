import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WORKFLOW_ID } from '../../src/core/delivery-contract';
import { createPool, type Pool } from '../../src/db/pool';
import { createSignInLink } from '../../src/domain/dashboard-sessions';
import { createEndpoint, deliveryResult, parcel, publishOverHttp } from '../helpers/delivery';
import { createAccount } from '../helpers/fixtures';
import { testDatabaseUrl } from '../helpers/database';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';
import { startTracedApi, tracedEnv } from '../helpers/traced-processes';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

/** A history as plain data with every payload's bytes as text, so a value inside an input or a summary is searchable. */
function decoded(value: unknown): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (Array.isArray(value)) return value.map(decoded);
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([key, field]) => [key, decoded(field)]));
  return value;
}
const historyText = (history: unknown) => JSON.stringify(decoded(history));

/**
 * Nothing secret leaves in telemetry. A traced API (OTLP JSON) and worker (OTLP protobuf) serve a sign-in through
 * a link (GET and POST of its address), a request no route matches, and a delivery to two endpoints whose URLs
 * hold a secret in their path and query (one answers 500 then 200, one always 500, so retries, summaries and the
 * supervisor all see the URL). No exported byte holds the link's token, a path secret or a query value, and
 * neither do the deliveries' Temporal histories; the spans still name the route pattern and the endpoint's host.
 */
describe('telemetry holds no secret of a URL', () => {
  const TOKEN = 'telemetry-test-internal-token-5c1e8a9f3b27d604';
  const TRACE_ID = randomBytes(16).toString('hex');
  const secret = (label: string) => `${label}${randomBytes(12).toString('hex')}`;
  let pool: Pool;
  let otlp: OtlpReceiver;
  let receiver: Receiver;
  let connection: Connection | undefined;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    pool = createPool(testDatabaseUrl());
    otlp = await startOtlpReceiver();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const child of processes) await child.kill();
    await connection?.close();
    await receiver?.close();
    await otlp?.close();
    await pool?.end();
  });

  const waitForSpan = (what: string, match: (span: ReceivedSpan) => boolean) =>
    waitFor(() => otlp.spans.find(match), { timeoutMs: 60_000, what });

  it('exports route patterns and origins, never a token, a path or a query', async () => {
    const common = tracedEnv(otlp.url, 'telemetry', '1s,1s');
    const { api, url: apiUrl } = await startTracedApi(common, TOKEN);
    processes.push(api);
    processes.push(
      await startWorkerProcess(
        { ...common, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf', OTEL_SERVICE_NAME: 'worker-under-test' },
        300_000,
      ),
    );
    const accountId = await createAccount(pool);

    // A sign-in through a link: the page (GET), then its button (POST, from the page's own origin).
    const link = await createSignInLink(pool, { accountId, origin: apiUrl });
    const linkToken = link.url.split('/').pop() as string;
    expect((await fetch(link.url)).status).toBe(200);
    const signedIn = await fetch(link.url, {
      method: 'POST',
      redirect: 'manual',
      headers: { origin: apiUrl, 'content-type': 'application/x-www-form-urlencoded' },
      body: '',
    });
    expect(signedIn.status).toBe(303);
    // A path no route matches.
    const strayPath = secret('stray-');
    expect((await fetch(`${apiUrl}/nowhere/${strayPath}`)).status).toBe(404);

    // A delivery to two endpoints whose URLs hold the receiver's secrets.
    const hooks = [secret('s3cr3t-'), secret('s3cr3t-')];
    const queries = [secret('q-'), secret('q-')];
    const endpoints = [];
    for (const [i, hook] of hooks.entries())
      endpoints.push(
        await createEndpoint(pool, {
          accountId,
          url: `${receiver.url}/hook/${hook}?token=${queries[i]}`,
          events: ['parcel.created'],
        }),
      );
    receiver.script(`/hook/${hooks[0]}`, (index) => ({ status: index === 0 ? 500 : 200 }));
    receiver.script(`/hook/${hooks[1]}`, () => ({ status: 500 }));
    const published = await publishOverHttp(
      apiUrl,
      TOKEN,
      { account_id: accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
      { traceparent: `00-${TRACE_ID}-${randomBytes(8).toString('hex')}-01` },
    );
    expect(published.status).toBe(201);
    const eventId = ((await published.json()) as { id: string }).id;

    connection = await Connection.connect({ address: inject('temporalAddress') });
    const client = new Client({ connection });
    await deliveryResult(client, eventId, 120_000);
    expect(receiver.at(`/hook/${hooks[0]}`)).toHaveLength(2);
    expect(receiver.at(`/hook/${hooks[1]}`)).toHaveLength(3);

    // Every span wanted is exported: the sign-in's, the stray request's, the POSTs' and the supervisor's start.
    for (const method of ['GET', 'POST'])
      await waitForSpan(`${method} sign-in span`, (s) => s.name === `${method} /dashboard/sign-in/:token`);
    const stray = await waitForSpan('the unmatched request span', (s) => s.name === 'GET unmatched');
    expect(stray.attributes['http.response.status_code']).toBe(404);
    await waitFor(
      () =>
        otlp.spans.filter((s) => s.name === 'POST' && s.attributes['http.response.status_code'] === 500).length >= 4,
      { timeoutMs: 60_000, what: 'the failed POST spans' },
    );
    await waitForSpan(
      'a delivered POST span',
      (s) => s.name === 'POST' && s.attributes['http.response.status_code'] === 200,
    );
    await waitForSpan('the supervisor signal', (s) => s.name.startsWith('RunActivity:notifySupervisor'));

    // The raw export requests, JSON and protobuf, in which the route pattern is readable as plain text.
    const exported = Buffer.concat(otlp.bodies).toString('latin1');
    expect(otlp.contentTypes).toEqual(expect.arrayContaining(['application/json', 'application/x-protobuf']));
    expect(exported).toContain('/dashboard/sign-in/:token');
    for (const value of [linkToken, strayPath, ...hooks, ...queries]) expect(exported).not.toContain(value);

    const signInSpan = otlp.spans.find((s) => s.name === 'POST /dashboard/sign-in/:token') as ReceivedSpan;
    expect(signInSpan.attributes['http.route']).toBe('/dashboard/sign-in/:token');
    expect(signInSpan.attributes['url.path']).toBeUndefined();
    const post = otlp.spans.find((s) => s.name === 'POST' && s.attributes['server.port'] !== undefined) as ReceivedSpan;
    expect(post.format).toBe('protobuf');
    expect(post.attributes['server.address']).toBe(new URL(receiver.url).hostname);
    expect(post.attributes['server.port']).toBe(Number(new URL(receiver.url).port));
    expect(post.attributes['url.path']).toBeUndefined();

    // The deliveries' Temporal histories, and the supervisor's the abandonment started, say which endpoint by
    // id and origin, never by path or query.
    const histories = [
      await client.workflow.getHandle(WORKFLOW_ID.deliverEvent(eventId)).fetchHistory(),
      await client.workflow.getHandle(WORKFLOW_ID.supervisor(endpoints[1]!.id)).fetchHistory(),
    ].map(historyText);
    expect(histories[0]).toContain(endpoints[0]!.id);
    expect(histories[0]).toContain(receiver.url);
    expect(histories[1]).toContain(receiver.url);
    for (const value of [...hooks, ...queries, '/hook/'])
      for (const text of histories) expect(text).not.toContain(value);
  }, 900_000);
});
