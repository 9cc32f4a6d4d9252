import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createActivities } from '../../../src/activities';
import {
  abandonedSignal,
  attemptRecord,
  type AttemptRecord,
  type SignAndPostInput,
} from '../../../src/core/delivery-contract';
import { newId } from '../../../src/core/ids';
import { recordAttempt } from '../../../src/attempt';
import { recordAbandonment } from '../../../src/domain/endpoint-health';
import type { Config } from '../../../src/infra/config';
import { createHttpAgent } from '../../../src/infra/http-client';
import { createMailer } from '../../../src/infra/mailer';
import { inActivityContext } from '../../helpers/activity-context';
import { createEndpoint } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { startSmtpServer } from '../../helpers/smtp';
import { waitFor } from '../../helpers/wait';

/**
 * Endpoint health has one owner, the database. Each abandonment counts once per event however
 * often it is reported, a success in between resets it, a mark never lands after a success that came in between,
 * and the merchant is emailed once. Real worker, supervisor, Postgres and SMTP server.
 */
describe('endpoint health: one owner', () => {
  let config: Config;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let refuseMail = false;

  beforeAll(async () => {
    smtp = await startSmtpServer({ refuse: () => refuseMail });
    config = testConfig({ SMTP_URL: smtp.url, ENDPOINT_FAILING_THRESHOLD: '2' });
  });
  const h = useDeliveryHarness(() => config);
  const http = createHttpAgent(testConfig());
  afterAll(async () => {
    await smtp?.close();
    await http.close();
  });

  const endpointRow = async (id: string) =>
    (await h.tw.pool.query('SELECT status, abandoned_streak FROM webhook_endpoints WHERE id = $1', [id])).rows[0];

  /** An attempt of an event to an endpoint, recorded as the engine records them (the event row exists). */
  async function recordedAttempt(
    accountId: string,
    endpointId: string,
    eventId: string,
    succeeded: boolean,
    attempt = 1,
  ): Promise<AttemptRecord> {
    await h.tw.pool.query(
      // dispatched: no workflow of the outbox's must deliver it (this test records its attempts itself)
      `INSERT INTO events (id, account_id, livemode, type, created, body, endpoint_ids, dispatched_at)
       VALUES ($1, $2, false, 'parcel.delivered', 0, '{}', ARRAY[$3], now()) ON CONFLICT (id) DO NOTHING`,
      [eventId, accountId, endpointId],
    );
    const delivery = await h.tw.pool.query<{ id: string }>(
      `INSERT INTO deliveries (id, event_id, endpoint_id, account_id, livemode, trigger)
       VALUES ('dly_' || replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, false, 'automatic')
       ON CONFLICT (event_id, endpoint_id) WHERE trigger = 'automatic' DO UPDATE SET trigger = EXCLUDED.trigger RETURNING id`,
      [eventId, endpointId, accountId],
    );
    const input: SignAndPostInput = {
      attemptId: newId('delivery'),
      endpointId,
      eventId,
      eventType: 'parcel.delivered',
      accountId,
      livemode: false,
      attempt,
      deliveryId: delivery.rows[0]!.id,
      finalAttempt: false,
      timeoutMs: 1_000,
    };
    const record = attemptRecord(input, {
      statusCode: succeeded ? 200 : 500,
      responseBody: null,
      error: null,
      durationMs: 5,
      succeeded,
    });
    await recordAttempt(h.tw.pool, record);
    return record;
  }

  async function healthyEndpoint(email = 'ops@merchant.test') {
    const accountId = await createAccount(h.tw.pool, { email });
    const endpoint = await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/health-${newId('event')}` });
    return { accountId, endpointId: endpoint.id };
  }

  it('a repeated report of the same abandonment is one signal and counts once', async () => {
    const { accountId, endpointId } = await healthyEndpoint();
    const eventId = newId('event');
    await recordedAttempt(accountId, endpointId, eventId, false);
    // notifySupervisor as a retried activity would run it: twice with the same message.
    const activities = createActivities({ config, pool: h.tw.pool, http, temporal: h.tw.client });
    const notify = {
      endpointId,
      failingThreshold: 3,
      signal: { kind: 'abandoned' as const, eventId, attemptCount: 1 },
    };
    await inActivityContext({ taskQueue: config.temporal.taskQueue }, () => activities.notifySupervisor(notify));
    await inActivityContext({ taskQueue: config.temporal.taskQueue, attempt: 2 }, () =>
      activities.notifySupervisor(notify),
    );
    const supervisor = h.tw.client.workflow.getHandle(`endpoint-supervisor:${endpointId}`);
    await waitFor(async () => (await endpointRow(endpointId))?.abandoned_streak === 1, { what: 'streak 1' });
    // The same abandonment signalled again by hand (a new request id: a second signal) is dropped by the supervisor
    // and the database. It is told apart from the notified one by its attemptCount.
    await supervisor.signal(abandonedSignal, { eventId, attemptCount: 99, failingThreshold: 3 });
    expect(
      await recordAbandonment({ pool: h.tw.pool, config }, { endpointId, eventId, failingThreshold: 3 }),
    ).toMatchObject({
      counted: false,
      streak: 1,
    });
    const signalCounts = async () => {
      const events = (await supervisor.fetchHistory()).events ?? [];
      const counts = { notified: 0, byHand: 0, handled: false };
      for (const e of events) {
        const payload = e.workflowExecutionSignaledEventAttributes?.input?.payloads?.[0]?.data;
        if (!payload) continue;
        if ((JSON.parse(Buffer.from(payload).toString()) as { attemptCount: number }).attemptCount === 99)
          counts.byHand += 1;
        else counts.notified += 1;
      }
      const lastSignal = events.findLastIndex((e) => Boolean(e.workflowExecutionSignaledEventAttributes));
      counts.handled = events.findLastIndex((e) => Boolean(e.workflowTaskCompletedEventAttributes)) > lastSignal;
      return counts;
    };
    const counts = await waitFor(
      async () => {
        const found = await signalCounts();
        return found.byHand === 1 && found.handled ? found : undefined;
      },
      { what: 'the supervisor to handle the repeated signal' },
    );
    // Two notifySupervisor calls for one abandonment: one signal.
    expect(counts.notified).toBe(1);
    expect(await endpointRow(endpointId)).toEqual({ status: 'enabled', abandoned_streak: 1 });
    await supervisor.terminate('test done');
  });

  it('an abandonment whose last attempt came before a recorded success does not count', async () => {
    const { accountId, endpointId } = await healthyEndpoint();
    const [early, late] = [newId('event'), newId('event')];
    await recordedAttempt(accountId, endpointId, early, false);
    await recordedAttempt(accountId, endpointId, late, true);
    // The early delivery's abandonment is reported only now (a busy supervisor, a retried activity).
    await h.tw.client.workflow.signalWithStart('endpointSupervisor', {
      workflowId: `endpoint-supervisor:${endpointId}`,
      taskQueue: config.temporal.taskQueue,
      args: [{ endpointId, failingThreshold: 2 }],
      signal: abandonedSignal,
      signalArgs: [{ eventId: early, attemptCount: 1, failingThreshold: 2 }],
    });
    const { rows } = await waitFor(
      async () => {
        const found = await h.tw.pool.query('SELECT counted FROM endpoint_abandonments WHERE endpoint_id = $1', [
          endpointId,
        ]);
        return found.rowCount ? found : undefined;
      },
      { what: 'the abandonment to be recorded' },
    );
    expect(rows).toEqual([{ counted: false }]);
    expect(await endpointRow(endpointId)).toEqual({ status: 'enabled', abandoned_streak: 0 });
    await h.tw.client.workflow.getHandle(`endpoint-supervisor:${endpointId}`).terminate('test done');
  });

  it('a success recorded while an abandonment holds the row still resets the mark (no snapshot race)', async () => {
    const { accountId, endpointId } = await healthyEndpoint();
    const [failed, succeeded] = [newId('event'), newId('event')];
    await recordedAttempt(accountId, endpointId, failed, false);
    // An abandonment's transaction (threshold 1) on a healthy endpoint, held open with the row locked and the mark
    // written but not committed...
    const abandonment = new pg.Client({ connectionString: config.databaseUrl });
    await abandonment.connect();
    try {
      await abandonment.query('BEGIN');
      await abandonment.query('SELECT 1 FROM webhook_endpoints WHERE id = $1 FOR UPDATE', [endpointId]);
      await abandonment.query(`UPDATE webhook_endpoints SET abandoned_streak = 1, status = 'failing' WHERE id = $1`, [
        endpointId,
      ]);
      // ...while a success is recorded: its statement starts now and waits for the row.
      const success = recordedAttempt(accountId, endpointId, succeeded, true);
      const { rows: held } = await abandonment.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      await waitFor(
        async () => {
          const { rows } = await h.tw.pool.query(
            'SELECT 1 FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))',
            [held[0]!.pid],
          );
          return rows.length > 0;
        },
        { what: 'the success to wait on the endpoint row' },
      );
      await abandonment.query('COMMIT');
      await success;
    } finally {
      await abandonment.end();
    }
    expect(await endpointRow(endpointId)).toEqual({ status: 'enabled', abandoned_streak: 0 });
  });

  it('never re-marks or emails after a success that came while the email was being retried', async () => {
    const { accountId, endpointId } = await healthyEndpoint('retry@merchant.test');
    const [first, second] = [newId('event'), newId('event')];
    await recordedAttempt(accountId, endpointId, first, false);
    await recordedAttempt(accountId, endpointId, second, false);
    refuseMail = true;
    const start = {
      workflowId: `endpoint-supervisor:${endpointId}`,
      taskQueue: config.temporal.taskQueue,
      args: [{ endpointId, failingThreshold: 2 }],
      signal: abandonedSignal,
    };
    try {
      await h.tw.client.workflow.signalWithStart('endpointSupervisor', {
        ...start,
        signalArgs: [{ eventId: first, attemptCount: 1, failingThreshold: 2 }],
      });
      await h.tw.client.workflow.signalWithStart('endpointSupervisor', {
        ...start,
        signalArgs: [{ eventId: second, attemptCount: 1, failingThreshold: 2 }],
      });
      await waitFor(async () => (await endpointRow(endpointId))?.status === 'failing', { what: 'the failing mark' });
      await waitFor(() => smtp.refused.some((m) => m.to.includes('retry@merchant.test')), { what: 'a refused email' });
      // The endpoint recovers before the mail server does.
      await recordedAttempt(accountId, endpointId, newId('event'), true);
      expect(await endpointRow(endpointId)).toEqual({ status: 'enabled', abandoned_streak: 0 });
    } finally {
      refuseMail = false;
    }
    // The email's retry (5 s later) finds the endpoint healthy: it sends nothing and marks nothing.
    const supervisor = h.tw.client.workflow.getHandle(start.workflowId);
    await waitFor(
      async () => {
        const events = (await supervisor.fetchHistory()).events ?? [];
        return events.some(
          (e) =>
            e.activityTaskCompletedEventAttributes &&
            events.some(
              (s) =>
                s.activityTaskScheduledEventAttributes?.activityType?.name === 'emailFailingNotice' &&
                Number(s.eventId) === Number(e.activityTaskCompletedEventAttributes?.scheduledEventId),
            ),
        );
      },
      { what: 'the email activity to complete', timeoutMs: 30_000 },
    );
    expect(smtp.mails.filter((m) => m.to.includes('retry@merchant.test'))).toHaveLength(0);
    expect(await endpointRow(endpointId)).toEqual({ status: 'enabled', abandoned_streak: 0 });
    const { rows } = await h.tw.pool.query('SELECT email_sent_at FROM notifications WHERE endpoint_id = $1', [
      endpointId,
    ]);
    expect(rows).toEqual([{ email_sent_at: null }]);
    await supervisor.terminate('test done');
  });

  it('emails a failing notice once, however often the email is asked for', async () => {
    const { accountId, endpointId } = await healthyEndpoint('once@merchant.test');
    const events = [newId('event'), newId('event')];
    for (const eventId of events) await recordedAttempt(accountId, endpointId, eventId, false);
    const deps = { pool: h.tw.pool, config };
    await recordAbandonment(deps, { endpointId, eventId: events[0]!, failingThreshold: 2 });
    const marked = await recordAbandonment(deps, { endpointId, eventId: events[1]!, failingThreshold: 2 });
    expect(marked).toMatchObject({ counted: true, streak: 2, failing: true });
    const withMail = createActivities({
      config,
      pool: h.tw.pool,
      http,
      temporal: h.tw.client,
      mailer: createMailer(config),
    });
    // Three workers retrying the same email at once, then once more later.
    await Promise.all(
      [1, 2, 3].map((attempt) =>
        inActivityContext({ attempt }, () => withMail.emailFailingNotice(marked.notificationId!)),
      ),
    );
    await inActivityContext({ attempt: 4 }, () => withMail.emailFailingNotice(marked.notificationId!));
    await waitFor(() => smtp.mails.some((m) => m.to.includes('once@merchant.test')), { what: 'the email' });
    expect(smtp.mails.filter((m) => m.to.includes('once@merchant.test'))).toHaveLength(1);
  });
});
