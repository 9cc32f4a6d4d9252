import { readFileSync } from 'node:fs';
import type { Pool } from '../src/db/pool';

/**
 * CPU time of the processes a delivery passes through, from /proc/<pid>/stat (utime + stime, all threads),
 * read before and after a phase. Postgres backends come and go with pool connections, so they are polled
 * while the phase runs: a backend first seen mid-phase counts from zero (its whole life is inside the phase).
 * Postgres's shared processes (WAL writer, checkpointer) serve every database on the machine and are left out.
 */

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

export function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name may hold spaces and parentheses: fields are counted after its closing parenthesis.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined; // exited
  }
}

async function backendPids(pool: Pool): Promise<number[]> {
  const { rows } = await pool.query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE datname = current_database()',
  );
  return rows.map((r) => r.pid);
}

export interface CpuReading {
  benchMs: number;
  temporalMs: number;
  postgresMs: number;
}

export interface CpuMeter {
  stop(): Promise<CpuReading>;
}

/** Starts measuring the bench process itself, the Temporal server process and our database's backends. */
export async function startCpuMeter(temporalPid: number | undefined, pool: Pool, pollMs = 500): Promise<CpuMeter> {
  const self = cpuMsOf(process.pid) ?? 0;
  // A server we did not start (the full server) is not metered: its figure is NaN, not zero.
  const temporal = temporalPid === undefined ? NaN : (cpuMsOf(temporalPid) ?? 0);
  const backends = new Map<number, { first: number; last: number }>();
  const poll = async (initial: boolean) => {
    for (const pid of await backendPids(pool)) {
      const now = cpuMsOf(pid);
      if (now === undefined) continue;
      const seen = backends.get(pid);
      if (seen) seen.last = now;
      else backends.set(pid, { first: initial ? now : 0, last: now });
    }
  };
  await poll(true);
  let polling = Promise.resolve();
  const timer = setInterval(() => {
    polling = polling.then(() => poll(false)).catch(() => undefined);
  }, pollMs);
  return {
    async stop() {
      clearInterval(timer);
      await polling;
      // The last reading of each backend: still alive ones are read now, exited ones keep their last poll.
      for (const [pid, seen] of backends) seen.last = cpuMsOf(pid) ?? seen.last;
      await poll(false);
      let postgresMs = 0;
      for (const { first, last } of backends.values()) postgresMs += last - first;
      return {
        benchMs: (cpuMsOf(process.pid) ?? 0) - self,
        temporalMs: temporalPid === undefined ? NaN : (cpuMsOf(temporalPid) ?? 0) - temporal,
        postgresMs,
      };
    },
  };
}

/** Milliseconds of CPU per delivery for each process, and their sum. */
export function cpuPerDelivery(reading: CpuReading, deliveries: number): Record<keyof CpuReading | 'totalMs', number> {
  const per = (ms: number) => Math.round((ms / Math.max(1, deliveries)) * 100) / 100;
  return {
    benchMs: per(reading.benchMs),
    temporalMs: per(reading.temporalMs),
    postgresMs: per(reading.postgresMs),
    totalMs: per(reading.benchMs + reading.temporalMs + reading.postgresMs),
  };
}
