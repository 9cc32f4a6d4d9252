import { faultsAt, type FaultRecord } from './faults';
import type { OperatorPublish } from './operator';
import type { ProcessEvent } from './processes';
import { subscribes, type ReceivedDelivery, type RegisteredEndpoint } from './receivers';
import type { AttemptRow, EndpointHealth, EngineRecords, SettleResult } from './records';
import { at } from './runtime';
import type { PublishCall, PublishResult } from './traffic';

/**
 * Compares what the receivers saw with what the engine recorded, per endpoint. Definitions (E an endpoint,
 * e an event; "accepted" means the API answered 2xx to some publish of e; "meant for E" means E subscribes
 * to e's kind, all endpoints being registered before the first event):
 *
 * - lost: e accepted and meant for E, no success (no 2xx answered in time at the receiver, no succeeded
 *   record) and fewer attempts on record than the ladder has: the event will never reach E.
 * - stored, never attempted: an events row whose fan-out snapshot holds E, with no attempt on record and no
 *   request received for E (accepted or not: a stored event is a promise).
 * - request without record: the receiver got a request whose Service-Delivery id no delivery_attempts row has.
 * - record without request: a row claiming a status code, but the receiver never answered that code in time to
 *   a request with that id.
 * - duplicate 2xx: e answered 2xx in time at E more than once. Explained when the earlier 2xx's record is a
 *   failure and a worker died (killed, or on its own) between just before that request and the moment its
 *   answer would have been recorded: the dead worker could not record it, the workflow timed the attempt out
 *   and posted again. Anything else is unexplained.
 * - signature failure: the receiver's own HMAC check over the raw body failed.
 * - rate limit breach: a clock second (the receiver's) in which E, registered with a rate_limit, got more
 *   requests than that limit.
 * - false failing alarm: a notification (or the failing mark) beyond what the records call for: replaying the
 *   endpoint's ladders in the order they ended (a success resets the streak, an exhausted ladder adds one),
 *   each crossing of the threshold is one episode and one notification.
 * - health out of step: the endpoint's abandoned_streak or status differs from that replay.
 * - posted while paused (an endpoint paused before the first event only): a request that arrived before the
 *   harness asked to resume it. Its held events count as lost and doubled like any other's.
 * - inversion (an endpoint with ordering 'parcel' only): a request for a parcel's event whose `sequence` is
 *   below one the endpoint already received for that parcel, in the receiver's order of arrival.
 */

export interface Finding {
  eventId: string;
  deliveryId?: string;
  detail: string;
}

export interface Duplicate extends Finding {
  explained: boolean;
}

export interface EndpointReport {
  endpoint: string;
  behaviour: string;
  id: string;
  meantFor: number;
  delivered: number;
  abandoned: number;
  requests: number;
  records: number;
  lost: Finding[];
  storedNeverAttempted: Finding[];
  requestsWithoutRecord: Finding[];
  recordsWithoutRequest: Finding[];
  duplicates: Duplicate[];
  signatureFailures: Finding[];
  /** Ordered endpoints only: arrivals below a sequence already seen for the parcel. */
  inversions: Finding[];
  /** Clock seconds in which the receiver got more requests than the endpoint's rate_limit. */
  limitBreaches: Finding[];
  /** A paused endpoint only: requests that arrived before the harness asked to resume it. */
  postedWhilePaused: Finding[];
  health: {
    stored: { status: string; streak: number; notifications: number } | undefined;
    expected: { status: string; streak: number; notifications: number };
    falseAlarms: Finding[];
    outOfStep: Finding[];
  };
}

export interface ApiAnswerGroup {
  outcome: string;
  code: string;
  count: number;
  first: string;
  last: string;
  during: string[];
}

export interface ApiReport {
  events: number;
  accepted: number;
  gaveUp: Finding[];
  nonSuccessCalls: number;
  /** 5xx answers, less the promised ones: a 503 with Retry-After while one of our dependencies was down. */
  serverErrors: number;
  /** The promised ones (an outage of ours is a 503), shown but not failures. */
  clearUnavailable: number;
  noAnswer: number;
  connectionErrors: number;
  groups: ApiAnswerGroup[];
}

export interface RunReport {
  endpoints: EndpointReport[];
  api: ApiReport;
  operator: OperatorPublish[];
  processes: { unexpectedExits: ProcessEvent[]; failedStarts: ProcessEvent[] };
  workflows: { byStatus: Record<string, number>; storedWithoutWorkflow: string[]; listed: boolean };
  /** Recorded attempts, and how many of them ran as local activities. */
  attemptsRun: { recorded: number; local: number };
  settle: SettleResult;
  /** Every figure that must be zero, by name; the run passes when all are. */
  failures: Record<string, number>;
  passed: boolean;
}

export interface RunFacts {
  ladderLength: number;
  timeoutMs: number;
  failingThreshold: number;
  endpoints: RegisteredEndpoint[];
  published: PublishResult[];
  operator: OperatorPublish[];
  health: EndpointHealth[];
  received: ReceivedDelivery[];
  records: EngineRecords;
  faults: FaultRecord[];
  processEvents: ProcessEvent[];
  settle: SettleResult;
}

const is2xx = (status: number | null) => status !== null && status >= 200 && status < 300;

function groupBy<T>(items: T[], key: (item: T) => string): Map<string, T[]> {
  const map = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = map.get(k);
    if (list) list.push(item);
    else map.set(k, [item]);
  }
  return map;
}

/** A worker that died around a request it had posted: the cause of a lost record and a second post. */
function crashAround(request: ReceivedDelivery, crashes: ProcessEvent[]): ProcessEvent | undefined {
  const from = request.receivedAt - 2_000;
  const to = request.receivedAt + request.delayMs + 5_000;
  return crashes.find((c) => c.at >= from && c.at <= to);
}

const when = (deltaMs: number) => (deltaMs >= 0 ? `${deltaMs} ms after` : `${-deltaMs} ms before`);

function explainDuplicate(
  earlier: ReceivedDelivery,
  later: ReceivedDelivery,
  record: AttemptRow | undefined,
  crashes: ProcessEvent[],
  faults: FaultRecord[],
): { explained: boolean; detail: string } {
  const attempt = record ? `attempt ${record.attempt}` : 'an attempt';
  const base = `2xx at ${at(earlier.receivedAt)} (${earlier.deliveryId}) and again at ${at(later.receivedAt)} (${later.deliveryId})`;
  if (!record) return { explained: false, detail: `${base}: the first 2xx has no record` };
  if (record.succeeded)
    return { explained: false, detail: `${base}: posted again after ${attempt} was recorded as a success` };
  const crash = crashAround(earlier, crashes);
  if (crash) {
    const how = crash.kind === 'killed' ? 'killed' : 'exited on its own';
    return {
      explained: true,
      detail:
        `${base}: ${crash.instance ?? 'worker'} ${crash.pid ?? '?'} ${how} at ${at(crash.at)}, ${when(crash.at - earlier.receivedAt)} the receiver got ${attempt} ` +
        `(answered ${earlier.status} after ${earlier.delayMs} ms); recorded as ${record.error ?? record.status_code}, so the ladder posted again`,
    };
  }
  const during = faultsAt(faults, earlier.receivedAt);
  return {
    explained: false,
    detail:
      `${base}: ${attempt} answered ${earlier.status} after ${earlier.delayMs} ms but recorded as ${record.error ?? record.status_code}` +
      ` with no worker crash near it${during.length ? ` (during ${during.join(', ')})` : ''}`,
  };
}

interface Accepted {
  type: string;
  acceptedAt: number;
}

/** Replays the endpoint's ended ladders in the order they ended: the health the supervisor should have kept. */
function expectedHealth(attempts: AttemptRow[], ladderLength: number, threshold: number) {
  const ladders = [...groupBy(attempts, (a) => a.event_id).values()]
    .map((rows) => ({
      endedAt: Math.max(...rows.map((r) => r.created_at.getTime())),
      succeeded: rows.some((r) => r.succeeded),
      exhausted: new Set(rows.map((r) => r.attempt)).size >= ladderLength,
    }))
    .filter((l) => l.succeeded || l.exhausted)
    .sort((a, b) => a.endedAt - b.endedAt);
  let streak = 0;
  let failing = false;
  let notifications = 0;
  for (const ladder of ladders) {
    if (ladder.succeeded) {
      streak = 0;
      failing = false;
      continue;
    }
    streak += 1;
    if (!failing && streak >= threshold) {
      failing = true;
      notifications += 1;
    }
  }
  return { status: failing ? 'failing' : 'enabled', streak, notifications };
}

/** In arrival order: each request whose sequence is below the highest its parcel had reached. */
function inversionsOf(received: ReceivedDelivery[]): Finding[] {
  const highest = new Map<string, { sequence: number; eventId: string }>();
  const found: Finding[] = [];
  for (const r of [...received].sort((a, b) => a.receivedAt - b.receivedAt)) {
    if (r.parcelId === null || r.sequence === null) continue;
    const seen = highest.get(r.parcelId);
    if (seen && r.sequence < seen.sequence) {
      found.push({
        eventId: r.eventId ?? '?',
        deliveryId: r.deliveryId ?? undefined,
        detail: `parcel ${r.parcelId} sequence ${r.sequence} arrived at ${at(r.receivedAt)}, after sequence ${seen.sequence} (${seen.eventId})`,
      });
    } else if (!seen || r.sequence > seen.sequence) {
      highest.set(r.parcelId, { sequence: r.sequence, eventId: r.eventId ?? '?' });
    }
  }
  return found;
}

/** Every clock second of the receiver's with more requests than the endpoint's rate_limit; none without a limit. */
function limitBreaches(endpoint: RegisteredEndpoint, received: ReceivedDelivery[]): Finding[] {
  const limit = endpoint.profile.rateLimit;
  if (limit === undefined) return [];
  const bySecond = groupBy(received, (r) => String(Math.floor(r.receivedAt / 1000)));
  return [...bySecond]
    .filter(([, requests]) => requests.length > limit)
    .map(([second, requests]) => ({
      eventId: requests[0]?.eventId ?? '?',
      detail: `${requests.length} requests in the second from ${new Date(Number(second) * 1000).toISOString()}, limit ${limit}`,
    }));
}

/** Requests a paused endpoint got before its resume was asked for: a held delivery went out anyway. */
function postedWhilePaused(endpoint: RegisteredEndpoint, received: ReceivedDelivery[]): Finding[] {
  if (endpoint.profile.pausedForMs === undefined) return [];
  const resumeAskedAt = endpoint.resumeAskedAt ?? Number.POSITIVE_INFINITY;
  return received
    .filter((r) => r.receivedAt < resumeAskedAt)
    .map((r) => ({
      eventId: r.eventId ?? '?',
      detail: `received at ${new Date(r.receivedAt).toISOString()}, before the resume was asked for`,
    }));
}

function endpointReport(
  endpoint: RegisteredEndpoint,
  facts: RunFacts,
  crashes: ProcessEvent[],
  accepted: Map<string, Accepted>,
): EndpointReport {
  const { records, ladderLength } = facts;
  const received = facts.received.filter((r) => r.endpoint === endpoint.profile.name);
  const attempts = records.attempts.filter((a) => a.endpoint_id === endpoint.id);
  const attemptsById = new Map(records.attempts.map((a) => [a.id, a]));
  const requestsById = groupBy(
    received.filter((r) => r.deliveryId !== null),
    (r) => r.deliveryId as string,
  );
  const attemptsByEvent = groupBy(attempts, (a) => a.event_id);
  const requestsByEvent = groupBy(received, (r) => r.eventId ?? '');
  const storedById = new Map(records.events.map((e) => [e.id, e]));
  const workflowOf = (eventId: string) =>
    records.workflows ? (records.workflows.get(eventId)?.toLowerCase() ?? 'no workflow') : 'workflow unknown';

  const report: EndpointReport = {
    endpoint: endpoint.profile.name,
    behaviour: endpoint.profile.behaviour,
    id: endpoint.id,
    meantFor: 0,
    delivered: 0,
    abandoned: 0,
    requests: received.length,
    records: attempts.length,
    lost: [],
    storedNeverAttempted: [],
    requestsWithoutRecord: [],
    recordsWithoutRequest: [],
    duplicates: [],
    signatureFailures: [],
    inversions: endpoint.profile.ordering === 'parcel' ? inversionsOf(received) : [],
    limitBreaches: limitBreaches(endpoint, received),
    postedWhilePaused: postedWhilePaused(endpoint, received),
    health: {
      stored: undefined,
      expected: expectedHealth(attempts, ladderLength, facts.failingThreshold),
      falseAlarms: [],
      outOfStep: [],
    },
  };

  for (const [eventId, result] of accepted) {
    if (!subscribes(endpoint.profile, result.type)) continue;
    report.meantFor++;
    const mine = attemptsByEvent.get(eventId) ?? [];
    const requests = requestsByEvent.get(eventId) ?? [];
    const succeeded = mine.some((a) => a.succeeded) || requests.some((r) => is2xx(r.status) && r.inTime);
    const attemptCount = new Set(mine.map((a) => a.attempt)).size;
    if (succeeded) report.delivered++;
    else if (attemptCount >= ladderLength) report.abandoned++;
    else {
      const stored = storedById.get(eventId);
      const where = !stored
        ? 'no events row'
        : stored.endpoint_ids.includes(endpoint.id)
          ? 'stored'
          : 'stored without this endpoint in its snapshot';
      report.lost.push({
        eventId,
        detail:
          `accepted at ${at(result.acceptedAt)}; ${where}; ${attemptCount}/${ladderLength} attempts on record, ` +
          `${requests.length} requests received; ${workflowOf(eventId)}`,
      });
    }
  }

  for (const event of records.events) {
    if (!event.endpoint_ids.includes(endpoint.id)) continue;
    if ((attemptsByEvent.get(event.id)?.length ?? 0) > 0 || (requestsByEvent.get(event.id)?.length ?? 0) > 0) continue;
    const result = accepted.get(event.id);
    report.storedNeverAttempted.push({
      eventId: event.id,
      detail: `${result ? `accepted at ${at(result.acceptedAt)}` : 'never accepted (the publisher got no 2xx)'}; ${workflowOf(event.id)}`,
    });
  }

  for (const request of received) {
    if (request.signature !== 'ok') {
      report.signatureFailures.push({
        eventId: request.eventId ?? '?',
        deliveryId: request.deliveryId ?? undefined,
        detail: request.signature,
      });
    }
    if (request.deliveryId === null || !attemptsById.has(request.deliveryId)) {
      report.requestsWithoutRecord.push({
        eventId: request.eventId ?? '?',
        deliveryId: request.deliveryId ?? undefined,
        detail:
          `received at ${at(request.receivedAt)}, answered ${request.status}${request.inTime ? '' : ' (late)'}` +
          `${faultsAt(facts.faults, request.receivedAt)
            .map((f) => `, during ${f}`)
            .join('')}`,
      });
    }
  }

  for (const row of attempts) {
    if (row.status_code === null) continue;
    const matching = requestsById.get(row.id) ?? [];
    const answered = matching.find((r) => r.status === row.status_code && r.inTime);
    if (answered) continue;
    const seen = matching[0];
    report.recordsWithoutRequest.push({
      eventId: row.event_id,
      deliveryId: row.id,
      detail: seen
        ? `record says ${row.status_code}, the receiver answered ${seen.status}${seen.inTime ? '' : ' after the timeout'}`
        : `record says ${row.status_code} (attempt ${row.attempt}), the receiver never got this delivery id`,
    });
  }

  for (const [eventId, requests] of requestsByEvent) {
    const successes = requests.filter((r) => is2xx(r.status) && r.inTime).sort((a, b) => a.receivedAt - b.receivedAt);
    for (let i = 1; i < successes.length; i++) {
      const earlier = successes[i - 1] as ReceivedDelivery;
      const later = successes[i] as ReceivedDelivery;
      const record = earlier.deliveryId ? attemptsById.get(earlier.deliveryId) : undefined;
      report.duplicates.push({
        eventId,
        deliveryId: later.deliveryId ?? undefined,
        ...explainDuplicate(earlier, later, record, crashes, facts.faults),
      });
    }
  }

  const stored = facts.health.find((h) => h.id === endpoint.id);
  const { health } = report;
  if (stored) {
    health.stored = { status: stored.status, streak: stored.abandoned_streak, notifications: stored.notifications };
    const { expected } = health;
    if (stored.notifications > expected.notifications) {
      health.falseAlarms.push({
        eventId: '-',
        detail: `${stored.notifications} failing notifications; the records call for ${expected.notifications}`,
      });
    }
    if (stored.status === 'failing' && expected.status !== 'failing') {
      health.falseAlarms.push({
        eventId: '-',
        detail: `marked failing; the records end with streak ${expected.streak}`,
      });
    }
    if (
      stored.abandoned_streak !== expected.streak ||
      stored.status !== expected.status ||
      stored.notifications < expected.notifications
    ) {
      health.outOfStep.push({
        eventId: '-',
        detail:
          `stored ${stored.status}, streak ${stored.abandoned_streak}, ${stored.notifications} notifications; ` +
          `records call for ${expected.status}, streak ${expected.streak}, ${expected.notifications} notifications`,
      });
    }
  }
  return report;
}

function apiReport(published: PublishResult[], faults: FaultRecord[]): ApiReport {
  const calls = published.flatMap((p) => p.calls);
  const kind = (c: PublishCall) => (typeof c.outcome === 'number' ? String(c.outcome) : c.outcome);
  const groups = [...groupBy(calls, (c) => `${kind(c)}\u0000${c.code ?? ''}`).values()].map((list) => {
    const sorted = [...list].sort((a, b) => a.startedAt - b.startedAt);
    const first = sorted[0] as PublishCall;
    const last = sorted[sorted.length - 1] as PublishCall;
    const during = new Set(
      sorted.flatMap((c) => {
        const labels = faultsAt(faults, c.startedAt, 0);
        return labels.length ? labels : ['no fault under way'];
      }),
    );
    return {
      outcome: kind(first),
      code: first.code ?? '',
      count: list.length,
      first: at(first.startedAt),
      last: at(last.endedAt),
      during: [...during],
    };
  });
  return {
    events: published.length,
    accepted: published.filter((p) => p.acceptedAt !== undefined).length,
    gaveUp: published.filter((p) => p.gaveUp).map((p) => ({ eventId: p.event.id, detail: p.gaveUp as string })),
    nonSuccessCalls: calls.length,
    serverErrors: calls.filter(
      (c) => typeof c.outcome === 'number' && c.outcome >= 500 && !promisedUnavailable(c, faults),
    ).length,
    clearUnavailable: calls.filter((c) => promisedUnavailable(c, faults)).length,
    noAnswer: calls.filter((c) => c.outcome === 'timeout').length,
    connectionErrors: calls.filter((c) => c.outcome === 'connection_error').length,
    groups: groups.sort((a, b) => b.count - a.count),
  };
}

/** A 503 with Retry-After while Postgres or Temporal was down (or coming back) is what we promise, not a failure. */
function promisedUnavailable(call: PublishCall, faults: FaultRecord[]): boolean {
  if (call.outcome !== 503 || !call.retryAfter) return false;
  return faultsAt(faults, call.startedAt, OUTAGE_RECOVERY_MS).some((label) => /postgres|temporal/.test(label));
}

/** After an outage ends, connections are re-established: answers this soon after still belong to it. */
const OUTAGE_RECOVERY_MS = 10_000;

export function reconcile(facts: RunFacts): RunReport {
  const accepted = new Map<string, Accepted>();
  for (const p of facts.published)
    if (p.acceptedAt !== undefined) accepted.set(p.event.id, { type: p.event.type, acceptedAt: p.acceptedAt });
  for (const o of facts.operator) if (o.eventId) accepted.set(o.eventId, { type: o.type, acceptedAt: o.endedAt });
  const crashes = facts.processEvents.filter(
    (e) => e.process === 'worker' && (e.kind === 'killed' || e.kind === 'exited'),
  );
  const endpoints = facts.endpoints.map((endpoint) => endpointReport(endpoint, facts, crashes, accepted));
  const api = apiReport(facts.published, facts.faults);
  const unexpectedExits = facts.processEvents.filter((e) => e.kind === 'exited' && !e.byChaos);
  const failedStarts = facts.processEvents.filter((e) => e.kind === 'start_failed');

  const byStatus: Record<string, number> = {};
  for (const status of facts.records.workflows?.values() ?? []) byStatus[status] = (byStatus[status] ?? 0) + 1;
  const storedWithoutWorkflow = facts.records.workflows
    ? facts.records.events
        .filter((e) => e.endpoint_ids.length > 0 && !facts.records.workflows?.has(e.id))
        .map((e) => e.id)
    : [];

  const sum = (pick: (r: EndpointReport) => number) => endpoints.reduce((n, r) => n + pick(r), 0);
  const failures: Record<string, number> = {
    'events lost': sum((r) => r.lost.length),
    'stored events never attempted': sum((r) => r.storedNeverAttempted.length),
    'requests without a record': sum((r) => r.requestsWithoutRecord.length),
    'records without a request': sum((r) => r.recordsWithoutRequest.length),
    'unexplained duplicate 2xx': sum((r) => r.duplicates.filter((d) => !d.explained).length),
    'signature failures': sum((r) => r.signatureFailures.length),
    'inversions at ordered endpoints': sum((r) => r.inversions.length),
    'rate limit breaches': sum((r) => r.limitBreaches.length),
    'posted while paused': sum((r) => r.postedWhilePaused.length),
    'false failing alarms': sum((r) => r.health.falseAlarms.length),
    'endpoint health out of step': sum((r) => r.health.outOfStep.length),
    'API 5xx answers': api.serverErrors,
    'API publishes with no answer in 10 s': api.noAnswer,
    'API connection errors': api.connectionErrors,
    'events the publisher gave up on': api.gaveUp.length,
    'operator publishes that failed': facts.operator.filter((o) => !o.eventId).length,
    'stored events without a workflow': storedWithoutWorkflow.length,
    'workflows not completed': Object.entries(byStatus)
      .filter(([s]) => s !== 'COMPLETED')
      .reduce((n, [, c]) => n + c, 0),
    'processes that exited on their own': unexpectedExits.length,
    'process starts that failed': failedStarts.length,
    'run did not settle': facts.settle.finished ? 0 : 1,
  };
  return {
    endpoints,
    api,
    operator: facts.operator,
    processes: { unexpectedExits, failedStarts },
    workflows: { byStatus, storedWithoutWorkflow, listed: facts.records.workflows !== undefined },
    attemptsRun: {
      recorded: facts.records.attempts.length,
      local: facts.records.attempts.filter((a) => a.local).length,
    },
    settle: facts.settle,
    failures,
    passed: Object.values(failures).every((n) => n === 0),
  };
}
