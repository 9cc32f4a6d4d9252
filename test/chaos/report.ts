import type { FaultRecord } from './faults';
import type { EndpointReport, Finding, RunReport } from './reconcile';
import { at } from './runtime';

/** The printed report: one table per endpoint, the API's answers, processes, workflows, then the verdict. */

function table(headers: string[], rows: string[][], indent = ''): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    indent +
    cells
      .map((c, i) => (i === 0 || i === cells.length - 1 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), indent + widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const SHOWN = 8;

function details(title: string, findings: Finding[]): string[] {
  if (findings.length === 0) return [];
  const lines = findings
    .slice(0, SHOWN)
    .map((f) => `    ${f.eventId}${f.deliveryId ? ` ${f.deliveryId}` : ''}: ${f.detail}`);
  if (findings.length > SHOWN) lines.push(`    ... and ${findings.length - SHOWN} more (--out FILE has them all)`);
  return [`  ${title} (${findings.length}):`, ...lines];
}

const health = (h: { status: string; streak: number; notifications: number } | undefined) =>
  h ? `${h.status} ${h.streak} ${h.notifications}` : '?';

function endpointDetails(r: EndpointReport): string[] {
  const explained = r.duplicates.filter((d) => d.explained);
  const unexplained = r.duplicates.filter((d) => !d.explained);
  const lines = [
    ...details('lost', r.lost),
    ...details('stored, never attempted', r.storedNeverAttempted),
    ...details('requests without a record', r.requestsWithoutRecord),
    ...details('records without a request', r.recordsWithoutRequest),
    ...details('duplicate 2xx, UNEXPLAINED', unexplained),
    ...details('duplicate 2xx, explained', explained),
    ...details('signature failures', r.signatureFailures),
    ...details('inversions (a parcel event below a sequence already received)', r.inversions),
    ...details('rate limit breaches', r.limitBreaches),
    ...details('posted while paused', r.postedWhilePaused),
    ...details('false failing alarms', r.health.falseAlarms),
    ...details('health out of step', r.health.outOfStep),
  ];
  return lines.length ? [`${r.endpoint} (${r.id}, ${r.behaviour}):`, ...lines] : [];
}

export function formatReport(
  report: RunReport,
  context: {
    seed: number;
    faults: FaultRecord[];
    ladder: string;
    timeoutMs: number;
    /** Ticks of the kill schedule of several workers. */ scheduledKills?: number;
  },
): string {
  const out: string[] = [];
  out.push('', `== chaos report, seed ${context.seed} ==`, '');
  out.push('Faults:');
  for (const f of context.faults) out.push(`  ${at(f.startedAt)} .. ${at(f.endedAt)}  ${f.label}`);
  if (context.scheduledKills) {
    const kills = context.faults.filter((f) => f.kind === 'worker_kill').length;
    out.push(
      `  worker kills: ${kills} of ${context.scheduledKills} scheduled ticks (a tick with fewer than two workers up kills nobody)`,
    );
  }
  out.push('');
  out.push(`Per endpoint (ladder: ${context.ladder}, timeout ${context.timeoutMs / 1000} s):`);
  out.push(
    table(
      [
        'endpoint',
        'meant',
        'deliv',
        'aband',
        'reqs',
        'recs',
        'LOST',
        'STORED-NOT-TRIED',
        'REQ-NO-REC',
        'REC-NO-REQ',
        'DUP-2XX (explained)',
        'SIG-FAIL',
        'FALSE-ALARM',
        'health: stored / from records',
      ],
      report.endpoints.map((r) => [
        `${r.endpoint} (${r.behaviour})`,
        String(r.meantFor),
        String(r.delivered),
        String(r.abandoned),
        String(r.requests),
        String(r.records),
        String(r.lost.length),
        String(r.storedNeverAttempted.length),
        String(r.requestsWithoutRecord.length),
        String(r.recordsWithoutRequest.length),
        `${r.duplicates.length} (${r.duplicates.filter((d) => d.explained).length})`,
        String(r.signatureFailures.length),
        String(r.health.falseAlarms.length),
        `${health(r.health.stored)} / ${health(r.health.expected)}`,
      ]),
    ),
  );
  out.push(
    '  meant: accepted events of kinds it subscribes to; deliv: succeeded; aband: every attempt failed;',
    '  reqs: requests the receiver got; recs: delivery_attempts rows; health: status, abandoned streak, notifications',
  );
  const endpointLines = report.endpoints.flatMap(endpointDetails);
  if (endpointLines.length) out.push('', ...endpointLines);

  const api = report.api;
  out.push(
    '',
    `API, POST /internal/v1/events: ${api.events} events, ${api.accepted} accepted, ${api.gaveUp.length} given up;`,
  );
  out.push(
    `  ${api.nonSuccessCalls} answers that were not 2xx: ${api.serverErrors} 5xx (and ${api.clearUnavailable} promised 503s with Retry-After during an outage), ${api.noAnswer} no answer within 10 s, ${api.connectionErrors} connection errors`,
  );
  if (api.groups.length) {
    out.push(
      table(
        ['answer', 'code', 'count', 'first', 'last', 'during'],
        api.groups.map((g) => [g.outcome, g.code.slice(0, 40), String(g.count), g.first, g.last, g.during.join('; ')]),
        '  ',
      ),
    );
  }
  out.push(...details('events given up', api.gaveUp));

  out.push(
    '',
    `Operator, \`events publish\` through the CLI without an id while Temporal is down: ${report.operator.length}`,
  );
  for (const o of report.operator) {
    out.push(
      `  ${at(o.startedAt)} .. ${at(o.endedAt)}  ${o.type}: ${o.eventId ? `published ${o.eventId}` : `FAILED ${o.error ?? ''}`}`,
    );
  }

  out.push('', 'Processes:');
  out.push(
    `  exited on their own: ${report.processes.unexpectedExits.length}; starts that failed: ${report.processes.failedStarts.length}`,
  );
  for (const e of [...report.processes.unexpectedExits, ...report.processes.failedStarts]
    .sort((a, b) => a.at - b.at)
    .slice(0, 12)) {
    out.push(
      `    ${at(e.at)} ${e.instance ?? e.process}${e.pid ? ` ${e.pid}` : ''} ${e.kind}: ${e.detail ?? ''}`.slice(
        0,
        260,
      ),
    );
  }

  const wf = report.workflows;
  out.push('', 'Workflows:');
  out.push(
    wf.listed
      ? `  event workflows by status: ${
          Object.entries(wf.byStatus)
            .map(([s, n]) => `${s} ${n}`)
            .join(', ') || 'none'
        }; ` +
          `stored events without a workflow: ${wf.storedWithoutWorkflow.length}${wf.storedWithoutWorkflow.length ? ` (${wf.storedWithoutWorkflow.slice(0, 5).join(', ')}${wf.storedWithoutWorkflow.length > 5 ? ', ...' : ''})` : ''}`
      : '  could not list workflows',
  );
  out.push(
    `  attempts recorded: ${report.attemptsRun.recorded}, of which ran as local activities: ${report.attemptsRun.local}`,
  );
  out.push(`  settle: ${report.settle.reason} (waited ${Math.round(report.settle.waitedMs / 1000)} s)`);

  out.push('', 'Figures that must be zero:');
  out.push(
    table(
      ['figure', 'value'],
      Object.entries(report.failures).map(([k, v]) => [k, String(v)]),
      '  ',
    ),
  );
  out.push(
    '',
    report.passed
      ? "PASS: every figure is zero (duplicates, if any, are explained by a dead worker or a timeout on the engine's clock)"
      : 'FAIL: see the figures above',
    '',
  );
  return out.join('\n');
}
