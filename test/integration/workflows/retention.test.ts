import { describe, expect, it } from 'vitest';
import { newId } from '../../../src/core/ids';
import { publishEvent } from '../../../src/domain/events';
import { deleteExpired, purgeExpired } from '../../../src/domain/retention';
import { eventIdsWithOpenWorkflows } from '../../../src/infra/temporal';
import { retentionScheduleId } from '../../../src/worker/retention-schedule';
import { ensureRetentionSchedule } from '../../../src/worker/worker';
import { attemptsOf, createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';

/**
 * EVENT_RETENTION and a Temporal Schedule, created by the worker, that deletes expired events
 * with their attempts (and local attempts' claims), deliveries and abandonment records, and old notifications, in bounded batches, never an
 * event whose delivery is still running. Events are made old by moving their time (`created`, and the insert time with it) back two hours.
 */
describe('retention', () => {
  // A failing endpoint's ladder waits an hour between attempts: its delivery is still running during the test.
  const config = testConfig({ EVENT_RETENTION: '1h', DELIVERY_RETRY_DELAYS: '1h' });
  const h = useDeliveryHarness(config);

  const publish = async (accountId: string) =>
    publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
  const age = (ids: string[], hours = 2) =>
    h.tw.pool.query(
      `UPDATE events SET inserted_at = now() - $2 * interval '1 hour', created = floor(extract(epoch FROM now() - $2 * interval '1 hour'))
        WHERE id = ANY ($1::text[])`,
      [ids, hours],
    );
  const exists = async (table: string, column: string, id: string) =>
    ((await h.tw.pool.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [id])).rowCount ?? 0) > 0;

  it('a scheduled run deletes what expired, with its attempts, and keeps what is still being delivered', async () => {
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/retention-ok` });
    const delivered = await publish(accountId);
    await deliveryResult(h.tw.client, delivered.event.id);

    const failingAccount = await createAccount(h.tw.pool);
    const down = await createEndpoint(h.tw.pool, {
      accountId: failingAccount,
      url: `${h.receiver.url}/retention-down`,
    });
    h.receiver.script('/retention-down', { status: 500 });
    const running = await publish(failingAccount);
    await waitFor(async () => (await attemptsOf(h.tw.pool, down.id)).length === 1, {
      what: 'the first failed attempt',
    });
    const fresh = await publish(accountId);
    await deliveryResult(h.tw.client, fresh.event.id);
    await age([delivered.event.id, running.event.id]);

    const notifications = { old: newId('notification'), fresh: newId('notification') };
    for (const [id, when] of [
      [notifications.old, "now() - interval '2 hours'"],
      [notifications.fresh, 'now()'],
    ] as const) {
      await h.tw.pool.query(
        `INSERT INTO notifications (id, account_id, kind, dedupe_key, subject, body, created_at)
         VALUES ($1, $2, 'test', $1, 'subject', 'body', ${when})`,
        [id, accountId],
      );
    }
    // The audit log is kept as long as events.
    const entries = { old: newId('auditEntry'), fresh: newId('auditEntry') };
    for (const [id, when] of [
      [entries.old, "now() - interval '2 hours'"],
      [entries.fresh, 'now()'],
    ] as const) {
      await h.tw.pool.query(
        `INSERT INTO audit_log (id, account_id, livemode, action, actor_type, actor_id, target_type, target_id, created_at)
         VALUES ($1, $2, false, 'endpoint.created', 'cli', NULL, 'webhook_endpoint', 'we_x', ${when})`,
        [id, accountId],
      );
    }
    // A local attempt's claim outlives its record: it goes with its event, and stays with one that stays.
    const claimOf = async (eventId: string) => {
      const { rows } = await h.tw.pool.query<{ id: string }>('SELECT id FROM delivery_attempts WHERE event_id = $1', [
        eventId,
      ]);
      const attemptId = rows[0]?.id as string;
      await h.tw.pool.query(`INSERT INTO attempt_claims (attempt_id, run) VALUES ($1, 'run') ON CONFLICT DO NOTHING`, [
        attemptId,
      ]);
      return attemptId;
    };
    const claims = { expired: await claimOf(delivered.event.id), kept: await claimOf(fresh.event.id) };
    // The running delivery is found open in Temporal's visibility, which is what protects it. Visibility is read
    // from a queue the server loads about once a second (deploy/temporal/dynamicconfig.yaml), so it is awaited.
    const openIds = [delivered.event.id, running.event.id];
    await waitFor(
      async () => {
        const open = await eventIdsWithOpenWorkflows(h.tw.client, openIds);
        return open.size === 1 && open.has(running.event.id);
      },
      { what: 'visibility to show only the running delivery open' },
    );

    // Every worker ensures the schedule at start: the first creates it, the others find it.
    const lines: string[] = [];
    await ensureRetentionSchedule(h.tw.client, config, (line) => lines.push(line));
    await ensureRetentionSchedule(h.tw.client, config, (line) => lines.push(line));
    expect(lines.filter((line) => line.includes('created'))).toHaveLength(1);
    const schedule = h.tw.client.schedule.getHandle(retentionScheduleId(config.temporal.taskQueue));
    try {
      await schedule.trigger();
      const workflowId = await waitFor(
        async () => (await schedule.describe()).info.recentActions[0]?.action.workflow.workflowId,
        {
          what: 'the scheduled run to start',
        },
      );
      const result = await waitFor(
        async () => {
          const handle = h.tw.client.workflow.getHandle(workflowId);
          return (await handle.describe()).status.name === 'COMPLETED' ? handle.result() : undefined;
        },
        { what: 'the retention run to complete', timeoutMs: 30_000 },
      );
      expect(result).toMatchObject({ events: 1, kept: 1 });
    } finally {
      await schedule.delete();
    }

    expect(await exists('events', 'id', delivered.event.id)).toBe(false);
    expect(await exists('delivery_attempts', 'event_id', delivered.event.id)).toBe(false);
    expect(await exists('deliveries', 'event_id', delivered.event.id)).toBe(false);
    expect(await exists('attempt_claims', 'attempt_id', claims.expired)).toBe(false);
    expect(await exists('attempt_claims', 'attempt_id', claims.kept)).toBe(true);
    expect(await exists('events', 'id', running.event.id)).toBe(true);
    expect(await attemptsOf(h.tw.pool, down.id)).toHaveLength(1);
    expect(await exists('events', 'id', fresh.event.id)).toBe(true);
    expect(await exists('notifications', 'id', notifications.old)).toBe(false);
    expect(await exists('notifications', 'id', notifications.fresh)).toBe(true);
    expect(await exists('audit_log', 'id', entries.old)).toBe(false);
    expect(await exists('audit_log', 'id', entries.fresh)).toBe(true);
    await h.tw.client.workflow.getHandle(`event:${running.event.id}`).terminate('test done');
  });

  it('deletes in bounded batches, and a batch goes on after the events it kept', async () => {
    const accountId = await createAccount(h.tw.pool);
    const ids: string[] = [];
    // No endpoint: nothing delivers these, nothing keeps them.
    for (let i = 0; i < 5; i++) ids.push((await publish(accountId)).event.id);
    // Older than anything the other test left behind, and cut off in between: only these five are expired here.
    await age(ids, 3);
    const cutoff = new Date(Date.now() - 2.5 * 3_600_000);
    const deps = { pool: h.tw.pool, temporal: h.tw.client };
    const first = await deleteExpired(deps, { cutoff, limit: 2 });
    expect(first).toMatchObject({ events: 2, more: true });
    const second = await deleteExpired(deps, { cutoff, limit: 2, after: first.after });
    expect(second).toMatchObject({ events: 2, more: true });
    const third = await deleteExpired(deps, { cutoff, limit: 2, after: second.after });
    expect(third.events).toBeGreaterThanOrEqual(1);
    for (const id of ids) expect(await exists('events', 'id', id)).toBe(false);
  });

  it('keeps up: batch after batch, each bounded, while there is work and the budget lasts', async () => {
    const accountId = await createAccount(h.tw.pool);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await publish(accountId)).event.id);
    // Older than anything the other tests left behind, and cut off in between: only these seven are expired here.
    await age(ids, 5);
    const cutoff = new Date(Date.now() - 4.5 * 3_600_000);
    const deps = { pool: h.tw.pool, temporal: h.tw.client };
    // A spent budget still deletes one batch, and says there is more.
    const one = await purgeExpired(deps, { cutoff, limit: 3, budgetMs: 0 });
    expect(one).toMatchObject({ events: 3, batches: 1, more: true });
    // Then the rest, from its cursor, in batches of at most three, until a batch is not full.
    const rest = await purgeExpired(deps, { cutoff, limit: 3, after: one.after, budgetMs: 60_000 });
    expect(rest).toMatchObject({ events: 4, batches: 2, more: false });
    for (const id of ids) expect(await exists('events', 'id', id)).toBe(false);
  });

  it('deletes developers page sign-in links and sessions that stopped being usable before the cutoff', async () => {
    const accountId = await createAccount(h.tw.pool);
    const link = async (hoursAgo: number) =>
      (
        await h.tw.pool.query(
          `INSERT INTO dashboard_sign_in_links (token_hash, account_id, expires_at) VALUES (decode(md5(random()::text) || md5(random()::text), 'hex'), $1, now() - $2 * interval '1 hour') RETURNING token_hash`,
          [accountId, hoursAgo],
        )
      ).rows[0].token_hash as Buffer;
    const session = async (expiresHoursAgo: number, endedHoursAgo: number | null) =>
      (
        await h.tw.pool.query(
          `INSERT INTO dashboard_sessions (id_hash, account_id, csrf_token, expires_at, ended_at)
         VALUES (decode(md5(random()::text) || md5(random()::text), 'hex'), $1, 'csrf', now() - $2 * interval '1 hour', now() - $3 * interval '1 hour') RETURNING id_hash`,
          [accountId, expiresHoursAgo, endedHoursAgo],
        )
      ).rows[0].id_hash as Buffer;
    const oldLink = await link(5);
    const freshLink = await link(-0.2);
    const expired = await session(5, null);
    const signedOut = await session(-10, 5);
    const live = await session(-10, null);
    const cutoff = new Date(Date.now() - 2 * 3_600_000);
    const result = await deleteExpired({ pool: h.tw.pool, temporal: h.tw.client }, { cutoff, limit: 100 });
    expect(result.signIns).toBeGreaterThanOrEqual(3);
    const has = async (table: string, column: string, key: Buffer) =>
      ((await h.tw.pool.query(`SELECT 1 FROM ${table} WHERE ${column} = $1`, [key])).rowCount ?? 0) > 0;
    expect(await has('dashboard_sign_in_links', 'token_hash', oldLink)).toBe(false);
    expect(await has('dashboard_sign_in_links', 'token_hash', freshLink)).toBe(true);
    expect(await has('dashboard_sessions', 'id_hash', expired)).toBe(false);
    expect(await has('dashboard_sessions', 'id_hash', signedOut)).toBe(false);
    expect(await has('dashboard_sessions', 'id_hash', live)).toBe(true);
  });
});
