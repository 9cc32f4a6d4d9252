import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { publishEvent } from '../../../src/domain/events';
import { createEndpoint, deliveryResult, parcel } from '../../helpers/delivery';
import { FIXTURES, testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { useDeliveryHarness } from '../../helpers/harness';
import { waitFor } from '../../helpers/wait';
import { CLI_ACTOR } from '../../../src/domain/audit-log';
import { pauseEndpoint, resumeEndpoint } from '../../../src/domain/endpoint-lifecycle';

type History = temporal.api.history.v1.IHistory;
const { History } = temporal.api.history.v1;

/**
 * Workflow code must replay every history it ever wrote. Histories of real runs (success, retries,
 * abandonment, the supervisor marking and clearing) are replayed against the current code; the committed ones
 * in test/fixtures/histories catch a change that breaks workflows already running in production.
 * UPDATE_HISTORIES=1 commits each history of this run whose name is not committed yet; a committed history stands
 * for workflows running in production and is never rewritten.
 * Stored as binary protobuf: the SDK's own JSON helpers fail in this install (two protobufjs majors).
 */
const HISTORY_DIR = path.join(FIXTURES, 'histories');
const WORKFLOWS_PATH = path.join(__dirname, '..', '..', '..', 'src', 'workflows', 'index.ts');

async function replayAll(histories: Record<string, History>): Promise<Record<string, string | null>> {
  const results: Record<string, string | null> = {};
  const iterable = Object.entries(histories).map(([workflowId, history]) => ({ workflowId, history }));
  for await (const result of Worker.runReplayHistories({ workflowsPath: WORKFLOWS_PATH }, iterable)) {
    results[result.workflowId] = result.error ? String(result.error) : null;
  }
  return results;
}

describe('replay: workflow code stays deterministic', () => {
  const config = testConfig({ DELIVERY_RETRY_DELAYS: '10ms,10ms', ENDPOINT_FAILING_THRESHOLD: '2' });
  const h = useDeliveryHarness(config);
  const recorded: Record<string, History> = {};

  const publish = (accountId: string) =>
    publishEvent(
      { pool: h.tw.pool },
      { accountId, livemode: false, type: 'parcel.delivered', data: { parcel: parcel() } },
    );
  const keep = async (name: string, workflowId: string) => {
    recorded[name] = await h.tw.client.workflow.getHandle(workflowId).fetchHistory();
  };

  it('records real runs', async () => {
    const accountId = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId, url: `${h.receiver.url}/replay-ok` });
    const success = await publish(accountId);
    await deliveryResult(h.tw.client, success.event.id);
    await keep('success', success.workflowId as string);

    // A fan-out whose attempts 1 all succeed, made by the dispatcher before the start.
    const wide = await createAccount(h.tw.pool);
    for (let i = 0; i < 3; i++)
      await createEndpoint(h.tw.pool, { accountId: wide, url: `${h.receiver.url}/replay-fan-out-${i}` });
    const fanOut = await publish(wide);
    await deliveryResult(h.tw.client, fanOut.event.id);
    await keep('fan-out-success', fanOut.workflowId as string);

    // Second account: a fan-out with retries, one endpoint recovering on attempt 2, one abandoning, side by side.
    const other = await createAccount(h.tw.pool);
    let healthy = false;
    h.receiver.script('/replay-flaky', (i) => (i === 0 ? { status: 500 } : { status: 200 }));
    h.receiver.script('/replay-down', () => (healthy ? { status: 200 } : { status: 503 }));
    await createEndpoint(h.tw.pool, { accountId: other, url: `${h.receiver.url}/replay-flaky` });
    const down = await createEndpoint(h.tw.pool, { accountId: other, url: `${h.receiver.url}/replay-down` });
    const mixed = await publish(other);
    await deliveryResult(h.tw.client, mixed.event.id);
    await keep('retries-and-abandonment', mixed.workflowId as string);

    h.receiver.script('/replay-flaky', { status: 200 });
    await deliveryResult(h.tw.client, (await publish(other)).event.id);
    const failing = async () =>
      (await h.tw.pool.query('SELECT status FROM webhook_endpoints WHERE id = $1', [down.id])).rows[0]?.status;
    await waitFor(async () => (await failing()) === 'failing', { what: 'the failing mark' });
    healthy = true;
    const recovery = await publish(other);
    await deliveryResult(h.tw.client, recovery.event.id);
    await keep('recovery', recovery.workflowId as string);
    const supervisor = h.tw.client.workflow.getHandle(`endpoint-supervisor:${down.id}`);
    await waitFor(
      async () => {
        const history = await supervisor.fetchHistory();
        const events = history.events ?? [];
        const signaled = events.findIndex(
          (e) => e.workflowExecutionSignaledEventAttributes?.signalName === 'deliverySucceeded',
        );
        const lastTaskDone = events.findLastIndex((e) => Boolean(e.workflowTaskCompletedEventAttributes));
        return signaled >= 0 && lastTaskDone > signaled ? true : undefined;
      },
      { what: 'the supervisor to handle the success' },
    );
    await keep('supervisor', `endpoint-supervisor:${down.id}`);
    await supervisor.terminate('replay test done');

    // Order per parcel: the second event of a parcel waits for the first (held open by the receiver until the
    // second is seen waiting), once as a one-ladder workflow (local steps) and once beside an unordered endpoint.
    for (const [name, unordered] of [
      ['parcel-order-local', false],
      ['parcel-order', true],
    ] as const) {
      const account = await createAccount(h.tw.pool);
      const ordered = await createEndpoint(h.tw.pool, { accountId: account, url: `${h.receiver.url}/replay-${name}` });
      await h.tw.pool.query(`UPDATE webhook_endpoints SET ordering = 'parcel' WHERE id = $1`, [ordered.id]);
      if (unordered)
        await createEndpoint(h.tw.pool, { accountId: account, url: `${h.receiver.url}/replay-${name}-unordered` });
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      h.receiver.script(`/replay-${name}`, (i) => (i === 0 ? { status: 200, until: held } : { status: 200 }));
      const inOrder = () =>
        publishEvent(
          { pool: h.tw.pool },
          {
            accountId: account,
            livemode: false,
            type: 'parcel.in_transit',
            data: { parcel: parcel({ id: `p_${name}` }) },
          },
        );
      const first = await inOrder();
      const second = await inOrder();
      await waitFor(
        async () => {
          const { rows } = await h.tw.pool.query(
            'SELECT waiting_for FROM deliveries WHERE event_id = $1 AND endpoint_id = $2',
            [second.event.id, ordered.id],
          );
          return rows[0]?.waiting_for === first.event.id;
        },
        { what: `${name}: the second event waiting` },
      );
      release();
      await deliveryResult(h.tw.client, second.event.id);
      await keep(name, second.workflowId as string);
    }

    // Retention, as its schedule runs it (nothing here is 30 days old: one batch that finds nothing).
    const retentionId = `event-retention:replay-${Date.now()}`;
    await h.tw.client.workflow.execute('purgeExpiredEvents', {
      taskQueue: config.temporal.taskQueue,
      workflowId: retentionId,
    });
    await keep('retention', retentionId);

    // Rate limit 1: three events at once, the third waits for its place (in the outbox, or on a throttle timer).
    const limitedAccount = await createAccount(h.tw.pool);
    const limited = await createEndpoint(h.tw.pool, {
      accountId: limitedAccount,
      url: `${h.receiver.url}/replay-limited`,
    });
    await h.tw.pool.query('UPDATE webhook_endpoints SET rate_limit = 1 WHERE id = $1', [limited.id]);
    const burst = [await publish(limitedAccount), await publish(limitedAccount), await publish(limitedAccount)];
    for (const event of burst) await deliveryResult(h.tw.client, event.event.id);
    await keep('throttled', burst[2]!.workflowId as string);

    // A 429 with Retry-After: the retry waits for it rather than the ladder's 10 ms.
    h.receiver.script('/replay-retry-after', (i) =>
      i === 0 ? { status: 429, headers: { 'retry-after': '1' } } : { status: 200 },
    );
    const patient = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId: patient, url: `${h.receiver.url}/replay-retry-after` });
    const retryAfter = await publish(patient);
    await deliveryResult(h.tw.client, retryAfter.event.id);
    await keep('retry-after', retryAfter.workflowId as string);

    // A one-endpoint retry made by the workflow as a regular activity, under the patch marker.
    h.receiver.script('/replay-one-endpoint-retry', (i) => (i === 0 ? { status: 500 } : { status: 200 }));
    const single = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId: single, url: `${h.receiver.url}/replay-one-endpoint-retry` });
    const retried = await publish(single);
    await deliveryResult(h.tw.client, retried.event.id);
    await keep('one-endpoint-retry-activity', retried.workflowId as string);

    // A fan-out with one endpoint paused: its ladder is held (re-checked on timers) while the other delivers, and
    // goes out once resumed.
    const pausing = await createAccount(h.tw.pool);
    await createEndpoint(h.tw.pool, { accountId: pausing, url: `${h.receiver.url}/replay-held-fast` });
    const pausedOne = await createEndpoint(h.tw.pool, { accountId: pausing, url: `${h.receiver.url}/replay-held` });
    const scope = { accountId: pausing, livemode: false };
    await pauseEndpoint({ pool: h.tw.pool, config }, scope, pausedOne.id, CLI_ACTOR);
    const heldEvent = await publish(pausing);
    const heldTimers = async () =>
      ((await h.tw.client.workflow.getHandle(heldEvent.workflowId as string).fetchHistory()).events ?? []).filter((e) =>
        Buffer.from(e.userMetadata?.summary?.data ?? [])
          .toString()
          .includes('held: '),
      ).length;
    await waitFor(async () => (await heldTimers()) >= 2, { what: 'two held re-checks', timeoutMs: 30_000 });
    await resumeEndpoint({ pool: h.tw.pool, config }, scope, pausedOne.id, CLI_ACTOR);
    await deliveryResult(h.tw.client, heldEvent.event.id);
    await keep('fan-out-held', heldEvent.workflowId as string);
    expect(Object.keys(recorded)).toHaveLength(12);
  });

  it('replays the recorded runs', async () => {
    expect(await replayAll(recorded)).toEqual(Object.fromEntries(Object.keys(recorded).map((name) => [name, null])));
    if (process.env.UPDATE_HISTORIES === '1') {
      mkdirSync(HISTORY_DIR, { recursive: true });
      for (const [name, history] of Object.entries(recorded)) {
        const file = path.join(HISTORY_DIR, `${name}.binpb`);
        if (!existsSync(file)) writeFileSync(file, History.encode(history).finish());
      }
    }
  });

  it('replays the committed histories', async () => {
    if (!existsSync(HISTORY_DIR)) return;
    const files = readdirSync(HISTORY_DIR).filter((f) => f.endsWith('.binpb'));
    expect(files.length).toBeGreaterThan(0);
    const histories = Object.fromEntries(
      files.map((f) => [f.replace(/\.binpb$/, ''), History.decode(readFileSync(path.join(HISTORY_DIR, f)))]),
    );
    expect(await replayAll(histories)).toEqual(Object.fromEntries(files.map((f) => [f.replace(/\.binpb$/, ''), null])));
  });
});
