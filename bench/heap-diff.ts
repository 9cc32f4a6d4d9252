/**
 * What grew between two V8 heap snapshots (e.g. the backlog scenario's, BENCH_HEAP_SNAPSHOTS): objects grouped by
 * constructor (or node type for strings, code, arrays), with their count and shallow size in each, largest growth
 * first.
 *   npx tsx bench/heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [top=25]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

type Groups = Map<string, { count: number; bytes: number }>;

export function groupHeap(file: string): { groups: Groups; totalBytes: number } {
  const heap = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = heap.snapshot.meta.node_fields;
  const types = heap.snapshot.meta.node_types[0];
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ['type', 'name', 'self_size'].map((f) => fields.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const groups: Groups = new Map();
  let totalBytes = 0;
  for (let i = 0; i < heap.nodes.length; i += width) {
    const type = types[heap.nodes[i + typeAt] as number] as string;
    const bytes = heap.nodes[i + sizeAt] as number;
    // Objects by constructor; strings, code, arrays and the like by their kind (their names are their contents).
    const key =
      type === 'object' || type === 'closure'
        ? `${type} ${heap.strings[heap.nodes[i + nameAt] as number]}`
        : `(${type})`;
    const group = groups.get(key) ?? { count: 0, bytes: 0 };
    group.count += 1;
    group.bytes += bytes;
    groups.set(key, group);
    totalBytes += bytes;
  }
  return { groups, totalBytes };
}

function main(): void {
  const [beforeFile, afterFile, topArg] = process.argv.slice(2);
  if (!beforeFile || !afterFile)
    throw new Error('usage: heap-diff.ts <before.heapsnapshot> <after.heapsnapshot> [top]');
  const before = groupHeap(beforeFile);
  const after = groupHeap(afterFile);
  const mb = (bytes: number) => (bytes / 2 ** 20).toFixed(1);
  const rows = [...after.groups].map(([key, a]) => {
    const b = before.groups.get(key) ?? { count: 0, bytes: 0 };
    return { key, count: a.count - b.count, bytes: a.bytes - b.bytes, after: a.bytes };
  });
  rows.sort((x, y) => y.bytes - x.bytes);
  process.stdout.write(`shallow total: ${mb(before.totalBytes)} MB -> ${mb(after.totalBytes)} MB\n`);
  for (const row of rows.slice(0, Number(topArg ?? 25))) {
    process.stdout.write(`${mb(row.bytes).padStart(8)} MB  ${String(row.count).padStart(9)}  ${row.key}\n`);
  }
}

main();
