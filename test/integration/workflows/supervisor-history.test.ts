import { Client, Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { abandonedSignal, deliverySucceededSignal, type SupervisorInput } from '../../../src/core/delivery-contract';
import { SUPERVISOR_SIGNALS_PER_RUN } from '../../../src/core/delivery-policy';
import { createPool, type Pool } from '../../../src/db/pool';
import { createEndpoint } from '../../helpers/delivery';
import { testConfig } from '../../helpers/env';
import { createAccount } from '../../helpers/fixtures';
import { startTestWorker, type TestWorker } from '../../helpers/temporal';
import { waitFor } from '../../helpers/wait';

/**
 * A supervisor's history stays bounded whatever the signal rate (it continues as new once a run is full, carrying
 * what is still queued), and a supervisor ends when its endpoint is removed or stays quiet.
 */
describe('endpoint supervisor: bounded history, and an end', () => {
  const config = testConfig({ ENDPOINT_FAILING_THRESHOLD: '1' });
  let pool: Pool;
  let connection: Connection;
  let client: Client;
  let worker: TestWorker | undefined;

  beforeAll(async () => {
    pool = createPool(config.databaseUrl);
    connection = await Connection.connect({ address: config.temporal.address as string });
    client = new Client({ connection, namespace: config.temporal.namespace });
  });
  afterAll(async () => {
    await worker?.stop();
    await connection?.close();
    await pool?.end();
  });

  const supervisorOf = (endpointId: string, extra: Partial<SupervisorInput> = {}) => ({
    workflowId: `endpoint-supervisor:${endpointId}`,
    taskQueue: config.temporal.taskQueue,
    args: [{ endpointId, failingThreshold: 1, ...extra }],
  });
  const statusOf = async (workflowId: string, runId?: string) =>
    (await client.workflow.getHandle(workflowId, runId).describe()).status.name;

  it('continues as new once a run is full even while signals are still queued, carrying them', async () => {
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: 'https://example.invalid/burst' });
    const start = supervisorOf(endpoint.id);
    // Every signal lands before any worker polls: the first run wakes with all of them queued at once.
    const total = SUPERVISOR_SIGNALS_PER_RUN + 100;
    const first = await client.workflow.signalWithStart('endpointSupervisor', {
      ...start,
      signal: deliverySucceededSignal,
      signalArgs: [{ eventId: 'evt_burst_0' }],
    });
    for (let sent = 1; sent < total; sent += 50) {
      await Promise.all(
        Array.from({ length: Math.min(50, total - sent) }, (_, i) =>
          first.signal(deliverySucceededSignal, { eventId: `evt_burst_${sent + i}` }),
        ),
      );
    }
    worker = await startTestWorker(config);
    const history = await waitFor(
      async () => {
        const events =
          (await client.workflow.getHandle(start.workflowId, first.signaledRunId).fetchHistory()).events ?? [];
        return events.find((e) => e.workflowExecutionContinuedAsNewEventAttributes) ? events : undefined;
      },
      { what: 'the first run to continue as new', timeoutMs: 60_000 },
    );
    const continued = history.find((e) => e.workflowExecutionContinuedAsNewEventAttributes)!;
    const payload = continued.workflowExecutionContinuedAsNewEventAttributes!.input!.payloads![0]!;
    const carried = JSON.parse(Buffer.from(payload.data!).toString()) as SupervisorInput;
    // The first run handled its budget and handed the rest over, instead of handling all of them.
    expect(carried.inbox).toHaveLength(total - SUPERVISOR_SIGNALS_PER_RUN);
    expect(history.filter((e) => e.workflowExecutionSignaledEventAttributes)).toHaveLength(total);
    await client.workflow.getHandle(start.workflowId).terminate('test done');
  }, 120_000);

  it('ends when its endpoint is removed', async () => {
    worker ??= await startTestWorker(config);
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: 'https://example.invalid/removed' });
    await pool.query('UPDATE webhook_endpoints SET deleted_at = now() WHERE id = $1', [endpoint.id]);
    const started = await client.workflow.signalWithStart('endpointSupervisor', {
      ...supervisorOf(endpoint.id),
      signal: abandonedSignal,
      signalArgs: [{ eventId: 'evt_removed_1', attemptCount: 6, failingThreshold: 1 }],
    });
    await waitFor(async () => (await statusOf(started.workflowId, started.signaledRunId)) === 'COMPLETED', {
      what: 'the supervisor of a removed endpoint to end',
    });
  });

  it('ends after a quiet period even while its endpoint is failing (the database keeps the mark)', async () => {
    worker ??= await startTestWorker(config);
    const accountId = await createAccount(pool);
    const endpoint = await createEndpoint(pool, { accountId, url: 'https://example.invalid/quiet' });
    const started = await client.workflow.signalWithStart('endpointSupervisor', {
      ...supervisorOf(endpoint.id, { idleTimeoutMs: 2_000 }),
      signal: abandonedSignal,
      signalArgs: [{ eventId: 'evt_quiet_1', attemptCount: 6, failingThreshold: 1 }],
    });
    await waitFor(async () => (await statusOf(started.workflowId, started.signaledRunId)) === 'COMPLETED', {
      what: 'the quiet supervisor to end',
      timeoutMs: 30_000,
    });
    expect(await client.workflow.getHandle(started.workflowId, started.signaledRunId).result()).toMatchObject({
      failing: true,
    });
    const { rows } = await pool.query('SELECT status FROM webhook_endpoints WHERE id = $1', [endpoint.id]);
    expect(rows).toEqual([{ status: 'failing' }]);
  });
});
