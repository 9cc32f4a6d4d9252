import { WorkflowNotFoundError } from '@temporalio/client';
import { createActivities } from '../../../src/activities';
import { createHttpAgent } from '../../../src/infra/http-client';
import { createPool } from '../../../src/db/pool';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../../src/infra/config';
import { SUPERVISOR_SIGNALS_PER_RUN } from '../../../src/core/delivery-policy';
import { abandonedSignal, deliverySucceededSignal } from '../../../src/core/delivery-contract';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { startSmtpServer } from '../../helpers/smtp';
import { startTestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

describe('endpoint supervisor: failing mark, notification, email, recovery', () => {
  let config: Config;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;

  const publish = (accountId: string) =>
    publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.returned', data: { parcel: parcel({ status: 'RETURNED' }) } },
    );
  const endpointRow = async (id: string) =>
    (await h.tw.pool.query('SELECT status, abandoned_streak FROM webhook_endpoints WHERE id = $1', [id])).rows[0];

  beforeAll(async () => {
    smtp = await startSmtpServer();
    config = testConfig({
      DELIVERY_RETRY_DELAYS: '10ms',
      SMTP_URL: smtp.url,
      NOTIFICATION_FROM: 'Parcel <noreply@parcel.test>',
    });
  });
  // After the SMTP server is up: the worker's config names it.
  const h = useDeliveryHarness(() => config);
  afterAll(async () => {
    await smtp?.close();
  });

  it('does not start a supervisor for an endpoint that only succeeds', async () => {
    const accountId = await createAccount(h.tw.pool);
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/healthy` });
    await deliveryResult(h.tw.client, (await publish(accountId)).event.id);
    await expect(
      h.tw.client.workflow.getHandle(`endpoint-supervisor:${endpoint.id}`).describe(),
    ).rejects.toBeInstanceOf(WorkflowNotFoundError);
  });

  it('marks failing after three abandoned deliveries, notifies once, emails, and clears on success', async () => {
    const accountId = await createAccount(h.tw.pool, { email: 'ops@merchant.test' });
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/failing` });
    let healthy = false;
    h.receiver.script('/failing', () => (healthy ? { status: 200 } : { status: 500, body: 'down' }));

    for (let i = 1; i <= 2; i++) {
      await deliveryResult(h.tw.client, (await publish(accountId)).event.id);
      await waitFor(async () => (await endpointRow(endpoint.id))?.abandoned_streak === i, { what: `streak ${i}` });
    }
    expect(await endpointRow(endpoint.id)).toEqual({ status: 'enabled', abandoned_streak: 2 });
    await deliveryResult(h.tw.client, (await publish(accountId)).event.id);
    await waitFor(async () => (await endpointRow(endpoint.id))?.status === 'failing', { what: 'failing mark' });
    expect((await endpointRow(endpoint.id))?.abandoned_streak).toBe(3);

    const mail = await waitFor(() => smtp.mails.find((m) => m.to.includes('ops@merchant.test')), { what: 'the email' });
    expect(mail.raw).toContain(`${h.receiver.url}/failing`);
    expect(mail.from).toBe('noreply@parcel.test');
    const notifications = await waitFor(
      async () => {
        const { rows } = await h.tw.pool.query('SELECT * FROM notifications WHERE endpoint_id = $1', [endpoint.id]);
        return rows.length === 1 && rows[0].email_sent_at ? rows : undefined;
      },
      { what: 'the notification row, emailed' },
    );
    expect(notifications[0]).toMatchObject({
      kind: 'endpoint_failing',
      account_id: accountId,
      email_to: 'ops@merchant.test',
    });
    expect(notifications[0].dedupe_key).toMatch(new RegExp(`^endpoint_failing:${endpoint.id}:evt_`));
    expect(notifications[0].body).toContain('3 deliveries in a row were abandoned');

    // A fourth abandonment while failing adds no notification and no email.
    await deliveryResult(h.tw.client, (await publish(accountId)).event.id);
    await waitFor(async () => (await endpointRow(endpoint.id))?.abandoned_streak === 4, { what: 'streak 4' });
    expect((await h.tw.pool.query('SELECT 1 FROM notifications WHERE endpoint_id = $1', [endpoint.id])).rowCount).toBe(
      1,
    );
    expect(smtp.mails.filter((m) => m.to.includes('ops@merchant.test'))).toHaveLength(1);

    healthy = true;
    await deliveryResult(h.tw.client, (await publish(accountId)).event.id);
    expect(await endpointRow(endpoint.id)).toEqual({ status: 'enabled', abandoned_streak: 0 });
    const supervisor = h.tw.client.workflow.getHandle(`endpoint-supervisor:${endpoint.id}`);
    await waitFor(
      async () => {
        const history = await supervisor.fetchHistory();
        return history.events?.some(
          (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'deliverySucceeded',
        );
      },
      { what: 'the supervisor to hear of the success' },
    );
    const description = await supervisor.describe();
    expect(await description.staticSummary()).toContain(endpoint.id);
    await supervisor.terminate('test done');
  });

  it('continues as new after its signal budget, carrying the count', async () => {
    const accountId = await createAccount(h.tw.pool);
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/can` });
    const workflowId = `endpoint-supervisor:${endpoint.id}`;
    const start = {
      workflowId,
      taskQueue: config.temporal.taskQueue,
      args: [{ endpointId: endpoint.id, failingThreshold: 3 }],
    };
    const abandon = (eventId: string) =>
      h.tw.client.workflow.signalWithStart('endpointSupervisor', {
        ...start,
        signal: abandonedSignal,
        signalArgs: [{ eventId, attemptCount: 2, failingThreshold: 3 }],
      });
    const first = await h.tw.client.workflow.signalWithStart('endpointSupervisor', {
      ...start,
      signal: deliverySucceededSignal,
      signalArgs: [{ eventId: 'evt_can_0' }],
    });
    for (let i = 1; i < SUPERVISOR_SIGNALS_PER_RUN - 1; i++)
      await first.signal(deliverySucceededSignal, { eventId: `evt_can_${i}` });
    await first.signal(abandonedSignal, { eventId: 'evt_can_a1', attemptCount: 2, failingThreshold: 3 });
    await waitFor(
      async () => (await h.tw.client.workflow.getHandle(workflowId).describe()).runId !== first.signaledRunId,
      {
        what: 'continue-as-new',
      },
    );
    // One abandonment came over in the new run's state: two more make three.
    await abandon('evt_can_a2');
    await abandon('evt_can_a3');
    await waitFor(async () => (await endpointRow(endpoint.id))?.status === 'failing', { what: 'the failing mark' });
    expect((await endpointRow(endpoint.id))?.abandoned_streak).toBe(3);
    const { rows } = await h.tw.pool.query('SELECT dedupe_key FROM notifications WHERE endpoint_id = $1', [
      endpoint.id,
    ]);
    // The notice is named by the abandonment that crossed the threshold (stored once, so named once).
    expect(rows).toEqual([{ dedupe_key: `endpoint_failing:${endpoint.id}:evt_can_a3` }]);
    await h.tw.client.workflow.getHandle(workflowId).terminate('test done');
  }, 120_000);
});

describe('endpoint supervisor: recording an abandonment while our database is down', () => {
  it('retries recordAbandonment until the database answers, then marks the endpoint failing once', async () => {
    const config = testConfig({ ENDPOINT_FAILING_THRESHOLD: '1' });
    const pool = createPool(config.databaseUrl);
    const http = createHttpAgent(config);
    const real = createActivities({ config, pool, http });
    let calls = 0;
    const recordAbandonment: typeof real.recordAbandonment = async (input) => {
      calls += 1;
      if (calls === 1) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
      return real.recordAbandonment(input);
    };
    const flaky = await startTestWorker(config, { activities: { ...real, recordAbandonment } });
    try {
      const accountId = await createAccount(flaky.pool);
      const endpoint = await createEndpoint(flaky.pool, { accountId, url: 'https://example.invalid/hook' });
      const workflowId = `endpoint-supervisor:${endpoint.id}`;
      await flaky.client.workflow.signalWithStart('endpointSupervisor', {
        workflowId,
        taskQueue: config.temporal.taskQueue,
        args: [{ endpointId: endpoint.id, failingThreshold: 1 }],
        signal: abandonedSignal,
        signalArgs: [{ eventId: 'evt_outage_1', attemptCount: 6, failingThreshold: 1 }],
      });
      const status = async () =>
        (await flaky.pool.query('SELECT status FROM webhook_endpoints WHERE id = $1', [endpoint.id])).rows[0]?.status;
      await waitFor(async () => (await status()) === 'failing', { what: 'the failing mark after the outage' });
      expect(calls).toBe(2);
      const { rows } = await flaky.pool.query('SELECT kind FROM notifications WHERE endpoint_id = $1', [endpoint.id]);
      expect(rows).toEqual([{ kind: 'endpoint_failing' }]);
      await flaky.client.workflow.getHandle(workflowId).terminate('test done');
    } finally {
      await flaky.stop();
      await http.close();
      await pool.end();
    }
  });
});
