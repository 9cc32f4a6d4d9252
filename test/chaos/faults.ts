import type { Supervisor } from './processes';
import type { Rng } from './rng';
import type { ChaosTemporal } from './temporal';
import { at, log, sleep } from './runtime';
import type { TcpProxy } from './wiring';

/**
 * The fault timeline: planned from the seed before the run (slots spread over the traffic, with jitter, never
 * overlapping), then played in order while events flow. Each fault is recorded with when it really started
 * and when the system was whole again, to explain what the receivers and the records show.
 */

export type FaultKind = 'worker_kill' | 'postgres_outage' | 'temporal_outage';

export interface PlannedFault {
  kind: FaultKind;
  /** ms after the traffic starts. */
  offsetMs: number;
  /** Outage length; for a kill, how long before a new worker is started. */
  holdMs: number;
  /** Temporal outage only: SIGKILL the worker this long into it; its supervisor restarts it at once, as systemd would. */
  workerKillAfterMs?: number;
}

export interface FaultRecord {
  kind: FaultKind;
  label: string;
  startedAt: number;
  /** The process is back (worker polling, Temporal serving) or the proxy passes connections again. */
  endedAt: number;
  /** For a kill: the worker's pid. */
  pid?: number;
}

export const POSTGRES_OUTAGE_MS = 10_000;
export const TEMPORAL_OUTAGE_MS = 18_000;

/** Where each fault falls, as a share of the traffic's span; jitter moves each by up to +-3 s. */
const SLOTS: Array<{ kind: FaultKind; share: number }> = [
  { kind: 'worker_kill', share: 0.1 },
  { kind: 'postgres_outage', share: 0.22 },
  { kind: 'worker_kill', share: 0.42 },
  { kind: 'temporal_outage', share: 0.52 },
  { kind: 'worker_kill', share: 0.8 },
  { kind: 'worker_kill', share: 0.93 },
];

export function planFaults(rng: Rng, spanMs: number): PlannedFault[] {
  return SLOTS.map(({ kind, share }) => ({
    kind,
    offsetMs: Math.max(0, Math.round(share * spanMs + (rng.next() * 6_000 - 3_000))),
    holdMs: kind === 'postgres_outage' ? POSTGRES_OUTAGE_MS : kind === 'temporal_outage' ? TEMPORAL_OUTAGE_MS : rng.int(500, 3_000),
    ...(kind === 'temporal_outage' ? { workerKillAfterMs: rng.int(3_000, 8_000) } : {}),
  }));
}

export function describePlan(plan: PlannedFault[]): string {
  return plan
    .map((f) => {
      const inner = f.workerKillAfterMs === undefined ? '' : `, worker killed ${(f.workerKillAfterMs / 1000).toFixed(1)} s in`;
      return `${f.kind} at +${(f.offsetMs / 1000).toFixed(1)}s (${(f.holdMs / 1000).toFixed(1)} s${inner})`;
    })
    .join(', ');
}

export interface FaultTargets {
  worker: Supervisor;
  temporal: ChaosTemporal;
  proxy: TcpProxy;
  /** Runs while Temporal is down (the operator's publishes). */
  duringTemporalOutage?: () => Promise<void>;
}

async function play(fault: PlannedFault, targets: FaultTargets, nextKill: () => number): Promise<FaultRecord[]> {
  switch (fault.kind) {
    case 'worker_kill': {
      await targets.worker.ensureRunning();
      const pid = targets.worker.pid;
      const startedAt = Date.now();
      await targets.worker.kill();
      await sleep(fault.holdMs);
      await targets.worker.ensureRunning();
      return [{ kind: fault.kind, label: `worker kill #${nextKill()} (pid ${pid ?? '?'})`, startedAt, endedAt: Date.now(), pid }];
    }
    case 'postgres_outage': {
      const startedAt = Date.now();
      await targets.proxy.cut();
      log(`postgres: unreachable through the proxy (connections reset, new ones refused) for ${fault.holdMs / 1000} s`);
      await sleep(fault.holdMs);
      await targets.proxy.restore();
      log('postgres: reachable again');
      return [{ kind: fault.kind, label: 'postgres outage', startedAt, endedAt: Date.now() }];
    }
    case 'temporal_outage': {
      const startedAt = Date.now();
      await targets.temporal.stop();
      log(`temporal: down for ${fault.holdMs / 1000} s`);
      let kill: { pid: number | undefined; at: number; n: number } | undefined;
      const killWorker = async (afterMs: number) => {
        await sleep(afterMs);
        kill = { pid: targets.worker.pid, at: Date.now(), n: nextKill() };
        await targets.worker.kill();
        void targets.worker.ensureRunning();
      };
      // Runs beside the outage and may outlast it (a command waiting for Temporal): it never delays the restart.
      const beside = targets.duringTemporalOutage?.();
      await Promise.all([sleep(fault.holdMs), fault.workerKillAfterMs === undefined ? undefined : killWorker(fault.workerKillAfterMs)]);
      await targets.temporal.start();
      await beside;
      const records: FaultRecord[] = [{ kind: fault.kind, label: 'temporal outage', startedAt, endedAt: Date.now() }];
      if (kill) {
        await targets.worker.ensureRunning();
        records.push({
          kind: 'worker_kill',
          label: `worker kill #${kill.n} during the temporal outage (pid ${kill.pid ?? '?'})`,
          startedAt: kill.at,
          endedAt: Date.now(),
          pid: kill.pid,
        });
      }
      return records;
    }
  }
}

/**
 * Plays the timeline from `trafficStartedAt`; a fault that is due while the previous one still runs waits for it.
 * `stopped()` true (the run is being torn down) ends it before the next fault.
 */
export async function runFaults(
  plan: PlannedFault[],
  targets: FaultTargets,
  trafficStartedAt: number,
  stopped: () => boolean,
): Promise<FaultRecord[]> {
  const records: FaultRecord[] = [];
  let kills = 0;
  const nextKill = () => ++kills;
  for (const fault of plan) {
    await sleep(Math.max(0, trafficStartedAt + fault.offsetMs - Date.now()));
    if (stopped()) break;
    for (const record of await play(fault, targets, nextKill)) {
      log(`fault done: ${record.label} from ${at(record.startedAt)} to ${at(record.endedAt)}`);
      records.push(record);
    }
  }
  return records.sort((a, b) => a.startedAt - b.startedAt);
}

/** Labels of the faults under way at `t` (or ended less than `graceMs` before it). */
export function faultsAt(records: FaultRecord[], t: number, graceMs = 5_000): string[] {
  return records.filter((r) => t >= r.startedAt && t <= r.endedAt + graceMs).map((r) => r.label);
}
