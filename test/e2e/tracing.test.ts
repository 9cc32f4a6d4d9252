import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../src/db/pool';
import { createEndpoint, parcel, publishOverHttp } from '../helpers/delivery';
import { createAccount } from '../helpers/fixtures';
import { testDatabaseUrl } from '../helpers/database';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver';
import { startReceiver, type Receiver } from '../helpers/receiver';
import { waitFor } from '../helpers/wait';
import { startTracedApi, tracedEnv } from '../helpers/traced-processes';
import { startWorkerProcess, type WorkerProcess } from '../helpers/worker-process';

/**
 * One delivery, one trace: the parcel system publishes with a traceparent to the API (its own process, exporting
 * OTLP JSON), a worker process (exporting OTLP protobuf) posts attempt 1, is SIGKILLed, and a new worker process
 * posts the retry. Every span and both POSTs' traceparent carry the publisher's trace id.
 */
describe('tracing a delivery across processes', () => {
  const TOKEN = 'trace-test-internal-token-7f3a9c2e41b85d60';
  const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
  const CALLER_SPAN = '00f067aa0ba902b7';
  let pool: Pool;
  let otlp: OtlpReceiver;
  let receiver: Receiver;
  const processes: WorkerProcess[] = [];

  beforeAll(async () => {
    pool = createPool(testDatabaseUrl());
    otlp = await startOtlpReceiver();
    receiver = await startReceiver();
  });
  afterAll(async () => {
    for (const child of processes) await child.kill();
    await receiver?.close();
    await otlp?.close();
    await pool?.end();
  });

  const waitForSpan = (what: string, match: (span: ReceivedSpan) => boolean) =>
    waitFor(() => otlp.inTrace(TRACE_ID).find(match), { timeoutMs: 60_000, what });
  const traceIdOf = (traceparent: unknown) => /^00-([0-9a-f]{32})-[0-9a-f]{16}-0[01]$/.exec(String(traceparent))?.[1];

  it('keeps the publisher trace id from the publish to the retried POST after a worker restart', async () => {
    const common = tracedEnv(otlp.url, 'tracing', '2s,2s');
    const { api, url: apiUrl } = await startTracedApi(common, TOKEN);
    processes.push(api);
    const workerEnv = {
      ...common,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf',
      OTEL_SERVICE_NAME: 'worker-under-test',
    };
    const first = await startWorkerProcess(workerEnv, 300_000);
    processes.push(first);

    const accountId = await createAccount(pool);
    await createEndpoint(pool, { accountId, url: `${receiver.url}/traced`, events: ['parcel.created'] });
    receiver.script('/traced', (index) => ({ status: index === 0 ? 500 : 200 }));
    const published = await publishOverHttp(
      apiUrl,
      TOKEN,
      { account_id: accountId, livemode: false, type: 'parcel.created', data: { parcel: parcel() } },
      { traceparent: `00-${TRACE_ID}-${CALLER_SPAN}-01` },
    );
    expect(published.status).toBe(201);

    // Attempt 1, posted by the first worker, and its span exported before the kill.
    await waitFor(() => receiver.at('/traced').length >= 1, { timeoutMs: 60_000, what: 'attempt 1' });
    expect(traceIdOf(receiver.at('/traced')[0]!.headers.traceparent)).toBe(TRACE_ID);
    const post1 = await waitForSpan(
      'attempt 1 POST span',
      (s) => s.name === 'POST' && s.attributes['http.response.status_code'] === 500,
    );
    await waitForSpan('the workflow start', (s) => s.name.startsWith('StartWorkflow:'));
    await first.kill();

    const second = await startWorkerProcess(workerEnv, 300_000);
    processes.push(second);
    await waitFor(() => receiver.at('/traced').length >= 2, { timeoutMs: 60_000, what: 'the retry' });
    expect(traceIdOf(receiver.at('/traced')[1]!.headers.traceparent)).toBe(TRACE_ID);
    const post2 = await waitForSpan(
      'attempt 2 POST span',
      (s) => s.name === 'POST' && s.attributes['http.response.status_code'] === 200,
    );

    // Two worker processes, one trace.
    expect(post1.service).toBe('worker-under-test');
    expect(post1.format).toBe('protobuf');
    expect(post2.pid).not.toBe(post1.pid);
    expect(post2.attributes['parcel.attempt']).toBe(2);
    // The POST's own span is the parent the receiver's server continues from.
    expect(receiver.at('/traced')[1]!.headers.traceparent).toContain(`-${post2.spanId}-`);

    // The API continued the caller's span and exported as JSON; the publish's queries are under it.
    const server = await waitForSpan('the publish request span', (s) => s.name === 'POST /internal/v1/events');
    expect(server.parentSpanId).toBe(CALLER_SPAN);
    expect(server.service).toBe('api-under-test');
    expect(server.format).toBe('json');
    expect(server.attributes['http.response.status_code']).toBe(201);
    await waitForSpan(
      'a publish query span',
      (s) => s.service === 'api-under-test' && s.name.startsWith('pg ') && s.attributes['db.system'] === 'postgresql',
    );
    // The hand-off, the workflow run and the attempts are in the same trace.
    const handOff = await waitForSpan('the outbox hand-off', (s) => s.name === 'outbox hand-off');
    expect(handOff.parentSpanId).toBe(server.spanId);
    await waitForSpan('the workflow run', (s) => s.name.startsWith('RunWorkflow:'));
    await waitForSpan('a worker query span', (s) => s.service === 'worker-under-test' && s.name.startsWith('pg '));
    // Every span the processes exported for this delivery is in the publisher's trace.
    expect(
      otlp.spans.filter((s) => s.attributes['parcel.endpoint.id'] !== undefined).every((s) => s.traceId === TRACE_ID),
    ).toBe(true);
  }, 900_000);
});
