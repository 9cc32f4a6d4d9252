import type { Pool } from '../src/db/pool';

/**
 * The query plans of a read, captured from the statements it really sends: a pool wrapper records each statement
 * (text and values) while a read runs, and each is then explained with the same values. A plan's shape is its tree
 * of node types with the tables and indexes they read, without costs or row estimates, so the shapes of one read
 * for a tiny, a median and the biggest account can be compared: the planner must pick the same plan for each.
 */

export interface RecordedQuery {
  text: string;
  values: unknown[];
}

/** A full scan of a table with more rows than this is a defect; below it, a full scan can be the best plan. */
export const FULL_SCAN_ROWS = 10_000;

export interface QueryRecorder {
  /** Runs `read` and returns every statement it sent through the pool. */
  record(read: () => Promise<unknown>): Promise<RecordedQuery[]>;
  /** Milliseconds spent waiting for the database so far, over every statement (reads one at a time: theirs). */
  databaseMs(): number;
}

/** Wraps `pool.query` in place so that statements can be recorded; reads outside record() pass through. */
export function recordQueries(pool: Pool): QueryRecorder {
  let recording: RecordedQuery[] | undefined;
  let waited = 0;
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  (pool as unknown as { query: (...args: unknown[]) => Promise<unknown> }).query = (...args: unknown[]) => {
    if (recording) {
      const [first, second] = args;
      // A prepared statement (src/db/pool.ts) comes as a config object with its text and values.
      const config =
        typeof first === 'string' ? { text: first, values: second } : (first as { text?: string; values?: unknown[] });
      if (typeof config.text === 'string')
        recording.push({ text: config.text, values: Array.isArray(config.values) ? config.values : [] });
    }
    const t0 = performance.now();
    return query(...args).finally(() => {
      waited += performance.now() - t0;
    });
  };
  return {
    databaseMs: () => waited,
    async record(read) {
      const mine: RecordedQuery[] = [];
      recording = mine;
      try {
        await read();
      } finally {
        recording = undefined;
      }
      return mine;
    },
  };
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

/** Nodes that only pass their input on (a sort of the few rows an index range gave, a projection). */
const PASS_THROUGH = new Set(['Sort', 'Incremental Sort', 'Result', 'Materialize', 'Memoize']);

/**
 * The plan as the tables it reads, each with the index that finds its rows, in join order: what makes a plan
 * good or bad at any size. Details the planner picks from its row estimates are left out: an index read as a
 * bitmap or in order, an index-only scan (that depends on the visibility map at that moment), a sort of the
 * rows of that index range.
 */
export function planShape(node: PlanNode): string {
  const n = normalized(node);
  const on = n['Index Name'] ?? n['Relation Name'];
  const inner = (n.Plans ?? []).map(planShape);
  return `${n['Node Type']}${on ? `(${on})` : ''}${inner.length > 0 ? `[${inner.join(', ')}]` : ''}`;
}

/** A pass-through node becomes its input, with the subplans it computes (its other inputs) added to that input's. */
function normalized(node: PlanNode): PlanNode {
  const [first, ...rest] = node.Plans ?? [];
  if (PASS_THROUGH.has(node['Node Type']) && first) {
    const input = normalized(first);
    return { ...input, Plans: [...(input.Plans ?? []), ...rest] };
  }
  if (node['Node Type'] === 'Bitmap Heap Scan' && first?.['Node Type'] === 'Bitmap Index Scan') {
    return { 'Node Type': 'Index Scan', 'Index Name': first['Index Name'], Plans: rest };
  }
  return node['Node Type'] === 'Index Only Scan' ? { ...node, 'Node Type': 'Index Scan' } : node;
}

/** Full scans in a plan of the tables in `big`. */
export function seqScans(node: PlanNode, big: ReadonlySet<string>): string[] {
  const own =
    node['Node Type'] === 'Seq Scan' && big.has(node['Relation Name'] ?? '') ? [node['Relation Name'] as string] : [];
  return [...own, ...(node.Plans ?? []).flatMap((child) => seqScans(child, big))];
}

const EXPLAINABLE = /^\s*(WITH|SELECT)\b/i;

/** Each recorded read-only statement's plan, explained on `pool` with its own values. */
export async function explainAll(
  pool: Pool,
  queries: RecordedQuery[],
): Promise<{ text: string; shape: string; seqScans: string[] }[]> {
  const { rows: tables } = await pool.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class WHERE relkind = 'r' AND relnamespace = 'public'::regnamespace AND reltuples > $1`,
    [FULL_SCAN_ROWS],
  );
  const big = new Set(tables.map((t) => t.name));
  const plans = [];
  for (const q of queries) {
    if (!EXPLAINABLE.test(q.text) || /\b(INSERT|UPDATE|DELETE)\b/i.test(q.text)) continue;
    const { rows } = await pool.query<{ 'QUERY PLAN': { Plan: PlanNode }[] }>(
      `EXPLAIN (FORMAT JSON) ${q.text}`,
      q.values,
    );
    const plan = rows[0]?.['QUERY PLAN'][0]?.Plan;
    if (plan)
      plans.push({ text: q.text.replace(/\s+/g, ' ').trim(), shape: planShape(plan), seqScans: seqScans(plan, big) });
  }
  return plans;
}

/**
 * Compares a read's plans across sizes: the same statements with the same shapes, and no full scan of a table of
 * more than FULL_SCAN_ROWS rows.
 * Returns the problems found, empty when the plans agree.
 */
export function comparePlans(
  read: string,
  bySize: Record<string, { text: string; shape: string; seqScans: string[] }[]>,
): string[] {
  const problems: string[] = [];
  const sizes = Object.keys(bySize);
  const reference = bySize[sizes[0] as string] ?? [];
  for (const size of sizes) {
    const plans = bySize[size] ?? [];
    for (const plan of plans) {
      if (plan.seqScans.length > 0)
        problems.push(`${read} (${size}): full scan of ${plan.seqScans.join(', ')} in ${plan.text.slice(0, 160)}`);
    }
    const shapes = plans.map((p) => p.shape).join(' | ');
    const expected = reference.map((p) => p.shape).join(' | ');
    if (shapes !== expected) problems.push(`${read}: ${size} plans ${shapes} differ from ${sizes[0]}'s ${expected}`);
  }
  return problems;
}

/** Index reads of a plan: the indexes it finds rows through, each once, in plan order. */
export function indexesRead(node: PlanNode): string[] {
  const own = node['Index Name'] ? [node['Index Name']] : [];
  return [...new Set([...own, ...(node.Plans ?? []).flatMap(indexesRead)])];
}

/** A pool that only records the statements a write would send, running none of them. */
export function statementsOf(write: (pool: Pool) => Promise<unknown>): Promise<RecordedQuery[]> {
  const recorded: RecordedQuery[] = [];
  const pool = {
    query: (first: string | { text: string; values?: unknown[] }, second?: unknown[]) => {
      const config = typeof first === 'string' ? { text: first, values: second } : first;
      recorded.push({ text: config.text, values: config.values ?? [] });
      return Promise.resolve({ rows: [], rowCount: 0 });
    },
  } as unknown as Pool;
  return write(pool).then(() => recorded);
}

/**
 * A writing statement's plan, run for real (EXPLAIN ANALYZE) inside a transaction that is rolled back: its shape,
 * its full scans of tables in `big`, the indexes it reads, whether any sort spilled to disk, and how long it took.
 */
export async function explainWrite(
  pool: Pool,
  query: RecordedQuery,
  big: ReadonlySet<string>,
): Promise<{ shape: string; seqScans: string[]; indexes: string[]; spilled: boolean; ms: number }> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    const { rows } = await client.query<{ 'QUERY PLAN': { Plan: PlanNode; 'Execution Time': number }[] }>(
      `EXPLAIN (ANALYZE, FORMAT JSON) ${query.text}`,
      query.values,
    );
    const explained = rows[0]?.['QUERY PLAN'][0];
    if (!explained) throw new Error('large-tables: EXPLAIN gave no plan');
    const spilled = JSON.stringify(explained.Plan).includes('"Sort Space Type":"Disk"');
    return {
      shape: planShape(explained.Plan),
      seqScans: seqScans(explained.Plan, big),
      indexes: indexesRead(explained.Plan),
      spilled,
      ms: explained['Execution Time'],
    };
  } finally {
    await client.query('ROLLBACK');
    client.release();
  }
}
