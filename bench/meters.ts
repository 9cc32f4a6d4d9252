import type { Pool } from '../src/db/pool';
import { cpuPerDelivery, startCpuMeter, type CpuMeter } from './proc-cpu';
import {
  parsePersistenceRequests,
  persistencePerDelivery,
  type OperationCounts,
  type PersistencePerDelivery,
} from './temporal-metrics';
import { p50p99, type Window } from './stats';
import { actionsPerDelivery, parseActionCounts, type ActionCounts, type ActionsPerDelivery } from './temporal-actions';

/** The Temporal server a phase measures: its process (for CPU) and its Prometheus page, when it serves one. */
export interface MeteredServer {
  pid?: number;
  metricsUrl?: string;
}

export interface Costs {
  /** CPU ms per delivery of the bench process (worker + client + receiver), the Temporal server and Postgres. */
  cpuMsPerDelivery: ReturnType<typeof cpuPerDelivery>;
  persistencePerDelivery: PersistencePerDelivery;
  /** Temporal Cloud's billable actions per delivery, from the server's `action` counter (bench/temporal-actions.ts). */
  actionsPerDelivery: ActionsPerDelivery;
  /**
   * How long the workflows that finished inside the window lived, from their start to their function's return
   * (bench/completions.ts); absent for a phase without workflows. Under load this is where deliveries queue
   * after their start, and a workflow that outlives the server's visibility poll costs a started record.
   */
  workflowLifeMs?: { p50Ms: number; p99Ms: number };
}

/** The server's persistence requests and billable actions, both from one read of its metrics page. */
async function readServerCounts(
  metricsUrl: string | undefined,
): Promise<{ persistence: OperationCounts; actions: ActionCounts }> {
  if (metricsUrl === undefined) return { persistence: {}, actions: {} };
  const text = await (await fetch(metricsUrl)).text();
  return { persistence: parsePersistenceRequests(text), actions: parseActionCounts(text) };
}

/**
 * Meters bracketing a measured window: CPU of each process, the server's persistence requests and its billable
 * actions, read when the window opens and when it closes, divided by the deliveries completed inside it
 * (`deliveriesPerTask` of them per completed task: a fan-out's event is that many deliveries).
 */
export function costMeters(
  server: MeteredServer,
  pool: Pool,
  deliveriesPerTask = 1,
): Window & { costs(): Costs; workflowLived(ms: number): void } {
  let cpu: CpuMeter | undefined;
  let before = { persistence: {} as OperationCounts, actions: {} as ActionCounts };
  let costs: Costs | undefined;
  let open = false;
  const lives: number[] = [];
  return {
    async onStart() {
      [cpu, before] = await Promise.all([startCpuMeter(server.pid, pool), readServerCounts(server.metricsUrl)]);
      open = true;
    },
    async onEnd(completedTasks) {
      open = false;
      const completed = completedTasks * deliveriesPerTask;
      const [reading, after] = await Promise.all([(cpu as CpuMeter).stop(), readServerCounts(server.metricsUrl)]);
      costs = {
        cpuMsPerDelivery: cpuPerDelivery(reading, completed),
        persistencePerDelivery: persistencePerDelivery(before.persistence, after.persistence, completed),
        // A server without metrics (the full server here) counted nothing: not a delivery at no action.
        actionsPerDelivery:
          server.metricsUrl === undefined
            ? { total: NaN, byType: {} }
            : actionsPerDelivery(before.actions, after.actions, completed),
      };
      if (lives.length > 0) costs.workflowLifeMs = p50p99(lives);
    },
    /** A workflow's life, counted if it finished while the window was open. */
    workflowLived(ms: number) {
      if (open) lives.push(ms);
    },
    costs() {
      if (!costs) throw new Error('bench: the measured window never closed');
      return costs;
    },
  };
}
