import { randomBytes } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool';
import { createEndpoint, deliveryResult, parcel, publishOverHttp } from '../helpers/delivery';
import { createSignInLink, openSession } from '../../src/domain/dashboard-sessions';
import { SESSION_COOKIE } from '../../src/dashboard/session';
import { createAccountWithKey } from '../helpers/fixtures';
import { testDatabaseUrl } from '../helpers/database';
import { independentlyVerified } from '../helpers/independent-verifier';
import { historyText } from '../helpers/history-text';
import { startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver';
import { freeMetricsPort } from '../helpers/prometheus';
import { startReceiver, type ReceivedRequest, type Receiver } from '../helpers/receiver';
import { startTracedApi, tracedEnv } from '../helpers/traced-processes';
import { waitFor } from '../helpers/wait';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

/** Every row of every table of the database, as text: what a dump of it would hold. */
async function databaseText(pool: Pool): Promise<string> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) AS name FROM information_schema.tables
      WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`,
  );
  expect(tables.map((t) => t.name)).toContain('public.events');
  const parts: string[] = [];
  for (const { name } of tables) {
    const { rows } = await pool.query<{ row: string }>(`SELECT t::text AS row FROM ${name} t`);
    parts.push(...rows.map((r) => r.row));
  }
  return parts.join('\n');
}

/** Which of `needles` occur in `text` (a value's raw spelling, its JSON-escaped one, its base64 is decoded above). */
const found = (text: string, needles: readonly string[]) => needles.filter((needle) => text.includes(needle));

/**
 * Personal values of a parcel, in every path a delivery takes (a success, a retry whose receiver echoes the body, an
 * ordered wait, a throttled wait, a one-endpoint resend, an abandoned ladder, its supervisor marking the endpoint
 * failing and the operational events that tell the parcel system), never enter a Temporal history, a log line, a
 * span or a metric label; once the parcel is erased they are in no table either, the delivery still pending posts
 * the erased body, signed, and the API, the page and a resend read the erased event. Another parcel of the
 * account keeps its values. Real API and worker processes, real Temporal and Postgres, an HTTPS receiver. (A
 * continue-as-new's histories are scanned in test/integration/workflows/max-age.test.ts.)
 */
describe('personal data', () => {
  const TOKEN = 'personal-data-test-internal-token-7d2b9c41e0';
  const hex = () => randomBytes(8).toString('hex');
  // Unique pieces: each is searched for on its own, so a value found in any spelling (escaped, cut) is found.
  const name = { mark: `nm${hex()}`, full: '' };
  const text = { mark: `ds${hex()}`, full: '' };
  name.full = `Amina "${name.mark}" Wanjirü`;
  text.full = `Two shirts ${text.mark}\nand a note`;
  const other = { name: `on${hex()}`, text: `od${hex()}` };
  const urlSecrets = { path: `pp${hex()}`, query: `qq${hex()}` };
  const parcelId = `p-${hex()}`;
  let pool: Pool;
  let otlp: OtlpReceiver;
  let receiver: Receiver;
  let connection: Connection | undefined;
  const processes: WorkerProcess[] = [];
  let metricsPages: string[] = [];

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

  it('keeps them out of histories, logs, spans and metrics, and erases them from every table', async () => {
    // The second retry waits long enough that the late endpoint's third attempt comes after the erasure.
    const common: Record<string, string> = {
      ...tracedEnv(otlp.url, 'personal', '1s,25s'),
      LOG_LEVEL: 'debug',
      DELIVERY_TIMEOUT: '3s',
    };
    const [apiMetrics, workerMetrics] = [await freeMetricsPort(), await freeMetricsPort()];
    metricsPages = [`http://127.0.0.1:${apiMetrics}/metrics`, `http://127.0.0.1:${workerMetrics}/metrics`];
    const { api, url: apiUrl } = await startTracedApi({ ...common, METRICS_PORT: String(apiMetrics) }, TOKEN);
    processes.push(api);
    const worker = await startWorkerProcess(
      { ...common, METRICS_PORT: String(workerMetrics), OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' },
      300_000,
    );
    processes.push(worker);
    const { accountId, headers } = await createAccountWithKey(pool, { status: 'active' });

    // Every answer echoes the body it got, as many receivers do.
    const echo = (request: ReceivedRequest) => request.rawBody.toString();
    let erased = false;
    const hookUrl = (label: string) => `${receiver.url}/${label}/${urlSecrets.path}?token=${urlSecrets.query}`;
    const at = (label: string) => `/${label}/${urlSecrets.path}`;
    const ok = await createEndpoint(pool, { accountId, url: hookUrl('ok') });
    const retry = await createEndpoint(pool, { accountId, url: hookUrl('retry') });
    const ordered = await createEndpoint(pool, { accountId, url: hookUrl('ordered') });
    const throttled = await createEndpoint(pool, { accountId, url: hookUrl('throttled') });
    const late = await createEndpoint(pool, { accountId, url: hookUrl('late') });
    const abandon = await createEndpoint(pool, { accountId, url: hookUrl('abandon') });
    // The parcel system hears of the abandoned deliveries and of the endpoint marked failing.
    const operational = await fetch(`${apiUrl}/internal/v1/operational-webhooks`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: hookUrl('ops') }),
    });
    expect(operational.status).toBe(201);
    await pool.query(`UPDATE webhook_endpoints SET ordering = 'parcel' WHERE id = $1`, [ordered.id]);
    // One a second, and a Retry-After it answered a moment ago: the attempts queue for their places on timers.
    await pool.query(
      `UPDATE webhook_endpoints SET rate_limit = 1, not_before = now() + interval '6 seconds' WHERE id = $1`,
      [throttled.id],
    );
    const seen = new Map<string, number>();
    const firstOfEach = (request: ReceivedRequest) => {
      const id = (JSON.parse(echo(request)) as { id: string }).id;
      const n = (seen.get(`${request.path}:${id}`) ?? 0) + 1;
      seen.set(`${request.path}:${id}`, n);
      return n === 1;
    };
    receiver.script(at('ok'), (_, request) => ({ status: 200, body: echo(request) }));
    receiver.script(at('retry'), (_, request) => ({ status: firstOfEach(request) ? 500 : 200, body: echo(request) }));
    receiver.script(at('ordered'), (_, request) => ({ status: firstOfEach(request) ? 500 : 200, body: echo(request) }));
    receiver.script(at('throttled'), (_, request) => ({ status: 200, body: echo(request) }));
    receiver.script(at('late'), (_, request) => ({ status: erased ? 200 : 500, body: echo(request) }));
    receiver.script(at('abandon'), (_, request) => ({ status: 500, body: echo(request) }));
    receiver.script(at('ops'), (_, request) => ({ status: 200, body: echo(request) }));
    const resend = async (eventId: string) => {
      const response = await fetch(`${apiUrl}/v1/events/${eventId}/resend`, {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json' },
        body: JSON.stringify({ endpoint_id: ok.id }),
      });
      expect(response.status).toBe(202);
    };
    const postsOf = (label: string, eventId: string) =>
      receiver.at(at(label)).filter((r) => (JSON.parse(echo(r)) as { id: string }).id === eventId);

    const publish = async (type: string, data: Record<string, unknown>, livemode = false) => {
      const response = await publishOverHttp(apiUrl, TOKEN, { account_id: accountId, livemode, type, data });
      expect(response.status).toBe(201);
      return ((await response.json()) as { id: string }).id;
    };
    const personal = { recipient_name: name.full, description: text.full };
    const eventIds = [
      await publish('parcel.created', { parcel: parcel({ id: parcelId, status: 'CREATED', ...personal }) }),
      await publish('parcel.in_transit', { parcel: parcel({ id: parcelId, status: 'IN_TRANSIT', ...personal }) }),
      await publish('parcel.delivered', { parcel: parcel({ id: parcelId, ...personal }) }),
    ];
    const otherId = await publish('parcel.created', {
      parcel: parcel({ id: `q-${hex()}`, recipient_name: other.name, description: other.text }),
    });

    // Everything but the late endpoint ends; the late one has failed twice for each event.
    await waitFor(() => eventIds.every((id) => seen.get(`${at('ordered')}:${id}`) === 2), {
      timeoutMs: 60_000,
      what: 'the ordered endpoint served every event, the later ones after the first',
    });
    await waitFor(() => receiver.at(at('late')).length >= 8, {
      timeoutMs: 60_000,
      what: "the late endpoint's two tries",
    });
    await waitFor(() => receiver.at(at('throttled')).length >= 4, {
      timeoutMs: 60_000,
      what: 'the throttled endpoint',
    });
    await waitFor(() => receiver.at(at('retry')).length >= 8, { timeoutMs: 60_000, what: 'the retried endpoint' });
    await waitFor(() => receiver.at(at('abandon')).length >= 8, { timeoutMs: 60_000, what: 'the failing endpoint' });
    // A resend is a workflow of one ladder (delivery:<dly>), its answer echoing the body too.
    await resend(eventIds[0]!);
    await waitFor(() => postsOf('ok', eventIds[0]!).length === 2, { timeoutMs: 60_000, what: 'the resend' });
    const lateBefore = receiver.at(at('late')).length;
    expect(lateBefore).toBe(8);

    const erase = (parcel: string, account = accountId) =>
      fetch(`${apiUrl}/internal/v1/parcels/${encodeURIComponent(parcel)}/erase`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ account_id: account }),
      });
    const first = await erase(parcelId);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ object: 'parcel_erasure', parcel_id: parcelId, events_erased: 3 });
    erased = true;
    const again = await erase(parcelId);
    expect(await again.json()).toEqual({ object: 'parcel_erasure', parcel_id: parcelId, events_erased: 3 });
    const missing = await erase('no-such-parcel');
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: { code: string } }).error.code).toBe('resource_missing');

    connection = await Connection.connect({ address: inject('temporalAddress') });
    const client = new Client({ connection });
    for (const id of [...eventIds, otherId]) await deliveryResult(client, id, 120_000);

    // The pending delivery's next attempt posted the erased body, signed anew.
    const posted = receiver.at(at('late')).slice(lateBefore);
    expect(posted.length).toBeGreaterThanOrEqual(3);
    for (const request of posted.filter((r) => eventIds.includes((JSON.parse(echo(r)) as { id: string }).id))) {
      const body = JSON.parse(echo(request)) as { data: { parcel: Record<string, unknown> } };
      expect(body.data.parcel).toMatchObject({ id: parcelId, recipient_name: '[erased]', description: '[erased]' });
      expect(independentlyVerified(request.headers['service-signature'], request.rawBody, late.secret)).toBe(true);
    }

    // Every delivery to the failing endpoint was given up: the supervisor marked it failing, and the parcel system
    // was told of each abandoned delivery and of the mark.
    await waitFor(() => receiver.at(at('ops')).length >= 5, { timeoutMs: 60_000, what: 'the operational events' });
    const told = receiver.at(at('ops')).map((r) => (JSON.parse(echo(r)) as { type: string }).type);
    expect(told.filter((type) => type === 'delivery.abandoned')).toHaveLength(4);
    expect(told).toContain('endpoint.failing');

    // A resend of an erased event posts the erased body, signed.
    await resend(eventIds[2]!);
    const [resent] = await waitFor(
      () => (postsOf('ok', eventIds[2]!).length === 2 ? postsOf('ok', eventIds[2]!).slice(1) : undefined),
      {
        timeoutMs: 60_000,
        what: 'the resend of the erased event',
      },
    );
    expect((JSON.parse(echo(resent!)) as { data: { parcel: Record<string, unknown> } }).data.parcel).toMatchObject({
      recipient_name: '[erased]',
      description: '[erased]',
    });
    expect(independentlyVerified(resent!.headers['service-signature'], resent!.rawBody, ok.secret)).toBe(true);

    // The page shows the erased event as the API does.
    const link = await createSignInLink(pool, { accountId, origin: new URL(apiUrl).origin });
    const session = await openSession(pool, link.url.split('/').pop() as string);
    const page = await fetch(`${apiUrl}/dashboard/test/events/${eventIds[1]}`, {
      headers: { cookie: `${SESSION_COOKIE}=${session!.sessionId}` },
    });
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain('[erased]');
    expect(found(html, [name.mark, text.mark, 'Wanjir'])).toEqual([]);

    // The API reads the erased event, other fields unchanged.
    const read = await fetch(`${apiUrl}/v1/events/${eventIds[1]}`, { headers });
    const event = (await read.json()) as { data: { parcel: Record<string, unknown> } };
    expect(event.data.parcel).toMatchObject({
      id: parcelId,
      status: 'IN_TRANSIT',
      recipient_name: '[erased]',
      description: '[erased]',
      tracking_number: parcel().tracking_number,
    });

    // No table holds the erased values; the other parcel's stay (the scan sees them).
    const dump = await databaseText(pool);
    expect(found(dump, [name.mark, text.mark])).toEqual([]);
    expect(found(dump, [other.name, other.text])).toEqual([other.name, other.text]);
    expect(dump).toContain('[erased]');
    // The answers recorded after the erasure are stored without a body.
    const { rows: lateAnswers } = await pool.query<{ response_body: string | null; status_code: number }>(
      `SELECT response_body, status_code FROM delivery_attempts WHERE endpoint_id = $1 AND event_id = ANY ($2) AND attempt = 3`,
      [late.id, eventIds],
    );
    expect(lateAnswers).toEqual(eventIds.map(() => ({ response_body: null, status_code: 200 })));
    // The echoed answers are kept, the values in them erased.
    const { rows: answers } = await pool.query<{ response_body: string }>(
      `SELECT response_body FROM delivery_attempts WHERE endpoint_id = $1 AND event_id = ANY ($2)`,
      [retry.id, eventIds],
    );
    expect(answers).toHaveLength(6);
    for (const { response_body } of answers) expect(response_body).toContain(`"description":"[erased]"`);

    // Every workflow this file's task queue ran: the events', the resends', the operational events' and the
    // failing endpoint's supervisor.
    const histories = new Map<string, string>();
    await waitFor(
      async () => {
        for await (const execution of client.workflow.list({ query: `TaskQueue = "${common.TEMPORAL_TASK_QUEUE}"` })) {
          const key = `${execution.workflowId}/${execution.runId}`;
          if (histories.has(key)) continue;
          const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
          histories.set(key, historyText(history));
        }
        const keys = [...histories.keys()];
        return (
          [...eventIds, otherId].every((id) => keys.some((k) => k.startsWith(`event:${id}/`))) &&
          keys.filter((k) => k.startsWith('delivery:')).length === 2 &&
          keys.some((k) => k.startsWith(`endpoint-supervisor:${abandon.id}/`))
        );
      },
      { timeoutMs: 30_000, what: 'every workflow listed' },
    );
    const allHistories = [...histories.values()].join('\n');
    expect(allHistories).toContain(ok.id);
    expect(allHistories).toContain(receiver.url);
    // The paths wanted are in them: an ordered wait and a throttled one.
    expect(allHistories).toContain(`waiting for ${eventIds[0]}`);
    expect(allHistories).toContain('waits for its rate limit (1/s)');
    const secrets = [name.mark, text.mark, other.name, other.text, urlSecrets.path, urlSecrets.query];
    for (const [key, history] of histories) expect({ key, found: found(history, secrets) }).toEqual({ key, found: [] });

    // No log line, exported span or metric label holds a personal value or a URL's path or query.
    const logs = [...api.output, ...worker.output].join('');
    expect(logs.length).toBeGreaterThan(0);
    expect(found(logs, secrets)).toEqual([]);
    await waitFor(() => otlp.spans.some((s) => s.name === 'POST'), { timeoutMs: 60_000, what: 'a POST span' });
    expect(found(Buffer.concat(otlp.bodies).toString('latin1'), secrets)).toEqual([]);
    expect(found(Buffer.concat(otlp.bodies).toString('utf8'), secrets)).toEqual([]);
    for (const page of metricsPages) {
      const metrics = await (await fetch(page)).text();
      expect(metrics).toContain('# TYPE');
      expect(found(metrics, secrets)).toEqual([]);
    }
  }, 600_000);
});
