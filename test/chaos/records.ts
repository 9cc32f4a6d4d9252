import { Client, Connection, WorkflowNotFoundError } from '@temporalio/client';
import pg from 'pg';
import { log, sleep, within } from './runtime';
import { EVENT_WORKFLOW_TYPE, eventWorkflowId, supervisorWorkflowId } from './wiring';

/**
 * What the engine says happened: the events and delivery_attempts tables (read straight from Postgres, not
 * through the proxy) and the event workflows as Temporal lists them.
 */

export interface StoredEvent {
  id: string;
  type: string;
  endpoint_ids: string[];
}

export interface AttemptRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  succeeded: boolean;
  duration_ms: number;
  created_at: Date;
  /** It ran as a local activity: a local try claims its attempt in attempt_claims before posting. */
  local: boolean;
}

export interface EngineRecords {
  events: StoredEvent[];
  attempts: AttemptRow[];
  /** Event id -> workflow status (COMPLETED, RUNNING, ...); undefined when Temporal could not be listed. */
  workflows: Map<string, string> | undefined;
}

async function readTables(pool: pg.Pool, accountId: string): Promise<Pick<EngineRecords, 'events' | 'attempts'>> {
  const events = await pool.query<StoredEvent>('SELECT id, type, endpoint_ids FROM events WHERE account_id = $1', [
    accountId,
  ]);
  const attempts = await pool.query<AttemptRow>(
    `SELECT a.id, a.endpoint_id, a.event_id, a.attempt, a.status_code, a.error, a.succeeded, a.duration_ms, a.created_at,
            EXISTS (SELECT 1 FROM attempt_claims c WHERE c.attempt_id = a.id) AS local
       FROM delivery_attempts a WHERE a.account_id = $1 ORDER BY a.created_at, a.attempt`,
    [accountId],
  );
  return { events: events.rows, attempts: attempts.rows };
}

export async function connectTemporal(address: string): Promise<Client> {
  const connection = await within(
    Connection.connect({ address, connectTimeout: 5_000 }),
    30_000,
    'connecting to Temporal',
  );
  return new Client({ connection });
}

const EVENT_PREFIX = eventWorkflowId('');

/** Every event workflow of the run and its status (one dev server per run: they are all ours). */
export async function listEventWorkflows(client: Client): Promise<Map<string, string>> {
  const statuses = new Map<string, string>();
  const listing = client.workflow.list({ query: `WorkflowType = '${EVENT_WORKFLOW_TYPE}'` });
  for await (const info of listing) {
    if (info.workflowId.startsWith(EVENT_PREFIX))
      statuses.set(info.workflowId.slice(EVENT_PREFIX.length), info.status.name);
  }
  return statuses;
}

export async function readEngineRecords(pool: pg.Pool, client: Client, accountId: string): Promise<EngineRecords> {
  const tables = await readTables(pool, accountId);
  let workflows: Map<string, string> | undefined;
  try {
    workflows = await within(listEventWorkflows(client), 60_000, 'listing workflows');
  } catch (err) {
    log(`could not list workflows: ${(err as Error).message}`);
  }
  return { ...tables, workflows };
}

/** A ladder is over once an attempt succeeded or every attempt of it is recorded. */
export function openLadders(
  tables: Pick<EngineRecords, 'events' | 'attempts'>,
  expected: Map<string, string[]>,
  ladderLength: number,
): number {
  const done = new Set<string>();
  const counts = new Map<string, number>();
  for (const a of tables.attempts) {
    const key = `${a.event_id}/${a.endpoint_id}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
    if (a.succeeded || (counts.get(key) ?? 0) >= ladderLength) done.add(key);
  }
  let open = 0;
  for (const [eventId, endpointIds] of expected)
    for (const endpointId of endpointIds) if (!done.has(`${eventId}/${endpointId}`)) open++;
  return open;
}

export interface SettleResult {
  finished: boolean;
  reason: string;
  waitedMs: number;
  openLadders: number;
  runningWorkflows: number | undefined;
}

/**
 * Waits (bounded) until every expected ladder has ended on record and no event workflow runs. Gives up early
 * when nothing runs and nothing changes for `quietMs`: what is still open then will never move by itself.
 */
export async function waitUntilFinished(options: {
  pool: pg.Pool;
  client: Client;
  accountId: string;
  expected: Map<string, string[]>;
  ladderLength: number;
  timeoutMs: number;
  quietMs: number;
}): Promise<SettleResult> {
  const started = Date.now();
  let lastOpen = -1;
  let lastChange = Date.now();
  let lastLog = 0;
  for (;;) {
    const open = openLadders(await readTables(options.pool, options.accountId), options.expected, options.ladderLength);
    let running: number | undefined;
    try {
      const count = await within(
        options.client.workflow.count(`WorkflowType = '${EVENT_WORKFLOW_TYPE}' AND ExecutionStatus = 'Running'`),
        10_000,
        'counting workflows',
      );
      running = count.count;
    } catch {
      running = undefined;
    }
    if (open !== lastOpen) {
      lastOpen = open;
      lastChange = Date.now();
    }
    const result = (finished: boolean, reason: string): SettleResult => ({
      finished,
      reason,
      waitedMs: Date.now() - started,
      openLadders: open,
      runningWorkflows: running,
    });
    if (open === 0 && running === 0) return result(true, 'every ladder ended and no event workflow runs');
    if (running === 0 && Date.now() - lastChange > options.quietMs) {
      return result(
        false,
        `${open} ladders still open, no event workflow running, nothing changed for ${options.quietMs / 1000} s`,
      );
    }
    if (Date.now() - started > options.timeoutMs) {
      return result(
        false,
        `gave up after ${options.timeoutMs / 1000} s: ${open} ladders open, ${running ?? '?'} workflows running`,
      );
    }
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(`settling: ${open} ladders open, ${running ?? '?'} event workflows running`);
    }
    await sleep(2_000);
  }
}

/** The endpoint health the engine keeps: the failing mark, the abandoned streak and the notifications sent. */
export interface EndpointHealth {
  id: string;
  status: string;
  abandoned_streak: number;
  notifications: number;
}

export async function readHealth(pool: pg.Pool, accountId: string): Promise<EndpointHealth[]> {
  const { rows } = await pool.query<EndpointHealth>(
    `SELECT e.id, e.status, e.abandoned_streak,
            (SELECT count(*)::int FROM notifications n WHERE n.endpoint_id = e.id) AS notifications
       FROM webhook_endpoints e WHERE e.account_id = $1 ORDER BY e.id`,
    [accountId],
  );
  return rows;
}

/**
 * Supervisors with an activity still pending: an activity on a worker that was killed waits out its start-to-close
 * timeout (30 s) before its retry, and the supervisor's queued signals wait behind it, so quiet columns alone do
 * not mean the supervisors are done. A supervisor that ended (idle, or its endpoint gone) has nothing pending.
 */
async function supervisorsBusy(client: Client, endpointIds: string[]): Promise<string[]> {
  const busy: string[] = [];
  for (const id of endpointIds) {
    try {
      const description = await within(
        client.workflow.getHandle(supervisorWorkflowId(id)).describe(),
        10_000,
        'describing a supervisor',
      );
      if (description.status.name === 'RUNNING' && (description.raw.pendingActivities?.length ?? 0) > 0) busy.push(id);
    } catch (err) {
      // Never started (no abandonment and no success yet on this endpoint): nothing pending.
      if (err instanceof WorkflowNotFoundError) continue;
      busy.push(id);
    }
  }
  return busy;
}

/**
 * Supervisors work after the event workflows end: wait (bounded) until none has an activity pending and the
 * health columns have not moved for `quietMs`. The bound covers one lost activity's timeout and its retry.
 */
export async function waitForQuietHealth(
  pool: pg.Pool,
  client: Client,
  accountId: string,
  endpointIds: string[],
  quietMs = 6_000,
  timeoutMs = 120_000,
): Promise<EndpointHealth[]> {
  const started = Date.now();
  let last = JSON.stringify(await readHealth(pool, accountId));
  let since = Date.now();
  let lastLog = Date.now();
  while (Date.now() - started < timeoutMs) {
    await sleep(1_000);
    const now = JSON.stringify(await readHealth(pool, accountId));
    if (now !== last) {
      last = now;
      since = Date.now();
    }
    if (Date.now() - since < quietMs) continue;
    const busy = await supervisorsBusy(client, endpointIds);
    if (busy.length === 0) break;
    if (Date.now() - lastLog > 10_000) {
      lastLog = Date.now();
      log(`health: supervisors with an activity pending: ${busy.join(', ')}`);
    }
  }
  return JSON.parse(last) as EndpointHealth[];
}
