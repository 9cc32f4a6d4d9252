/**
 * Persistence requests of the Temporal server, read from its Prometheus endpoint before and after a phase.
 * The counter is per persistence-manager call (one UpdateWorkflowExecution may be several SQL statements), so
 * these are requests to the store, the unit Temporal's own capacity planning uses, not rows written.
 */

export type OperationCounts = Record<string, number>;

const LINE = /^(visibility_)?persistence_requests\{([^}]*)\}\s+([0-9.eE+-]+)$/;

// Reads and the server's own housekeeping polls; everything else changes the store.
const READ = /^(Get|List|Read|Scan|Count|Describe|Assert|Is)/;

/** The persistence requests counted on a page of the server's metrics, by operation (visibility's prefixed). */
export function parsePersistenceRequests(text: string): OperationCounts {
  const counts: OperationCounts = {};
  for (const line of text.split('\n')) {
    const match = LINE.exec(line);
    if (!match) continue;
    const labels = Object.fromEntries([...(match[2] as string).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    // temporal_system runs the server's own internal workflows; they are not our deliveries.
    if (labels.namespace === 'temporal_system') continue;
    const key = `${match[1] ? 'visibility:' : ''}${labels.operation}`;
    counts[key] = (counts[key] ?? 0) + Number(match[3]);
  }
  return counts;
}

export interface PersistencePerDelivery {
  writes: number;
  reads: number;
  writesByOperation: Record<string, number>;
}

export function persistencePerDelivery(
  before: OperationCounts,
  after: OperationCounts,
  deliveries: number,
): PersistencePerDelivery {
  const per = (n: number) => Math.round((n / Math.max(1, deliveries)) * 100) / 100;
  const writesByOperation: Record<string, number> = {};
  let writes = 0;
  let reads = 0;
  for (const [op, value] of Object.entries(after)) {
    const delta = value - (before[op] ?? 0);
    if (delta <= 0) continue;
    const name = op.replace(/^visibility:/, '');
    if (READ.test(name)) reads += delta;
    else {
      writes += delta;
      writesByOperation[op] = per(delta);
    }
  }
  return { writes: per(writes), reads: per(reads), writesByOperation };
}
