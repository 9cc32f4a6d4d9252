import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The shape of the code: arrows point one way, edges -> Temporal / domain -> db, infra -> core, no folder imports
 * one above it, and no import circle between folders or between files. Read from the import graph, so a change
 * that breaks the shape fails here instead of waiting for a reviewer.
 */

const ROOT = path.join(__dirname, '..', '..');
/** What ships: the folders under src/ (each one a layer, named by its folder), and the tooling at the root. */
const SHIPPED = readdirSync(path.join(ROOT, 'src'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
/** A layer's folder in the repository: src/<layer> for shipped code, <layer> for the tooling at the root. */
const dirOf = (layer: string) => (SHIPPED.includes(layer) ? `src/${layer}` : layer);
/** The receiver kit is its own package with no imports of ours: read for import circles only. */
const FOLDERS = [...SHIPPED.filter((dir) => dir !== 'receiver'), 'bench', 'temporal-tools'];
/** Read for import circles only: no layer rule, but a circle through them is as much a knot. */
const UNLAYERED = ['receiver', 'scripts', 'test'];

/** db/ files an edge may open for process wiring; everything else in db/ is reached through domain/. */
const WIRING = ['src/db/pool.ts', 'src/db/migrate.ts'];
const EDGE = ['domain', 'infra', 'core'];

/** Which folders each folder may import from (its own always). `wiring` marks db/ as WIRING files only. */
const ALLOWED: Record<string, { folders: string[]; wiring?: boolean }> = {
  api: { folders: EDGE, wiring: true },
  dashboard: { folders: EDGE, wiring: true },
  cli: { folders: EDGE, wiring: true },
  worker: { folders: ['activities', 'attempt', 'workflows', ...EDGE], wiring: true },
  workflows: { folders: ['core'] },
  activities: { folders: ['attempt', 'domain', 'infra', 'core'] },
  // The delivery attempt end to end (src/attempt/index.ts): its claim and record SQL are its own repositories.
  attempt: { folders: ['domain', 'db', 'infra', 'core'] },
  domain: { folders: ['db', 'infra', 'core'] },
  db: { folders: ['core'] },
  infra: { folders: ['core'] },
  core: { folders: [] },
  // A tool like the edges; it may drive the worker and the API, never test code or scripts.
  bench: { folders: ['api', 'worker', 'activities', 'attempt', 'workflows', 'temporal-tools', ...EDGE], wiring: true },
  // Building and running Temporal locally; not shipped. Besides bench, scripts/ and test/ import it, and the
  // CLI's `start` and `temporal-server` load it by path through src/cli/temporal-tooling.ts (never an import, which
  // would compile it into dist).
  'temporal-tools': { folders: ['infra', 'core'] },
};

/**
 * Named exceptions, each with its reason. `cli start` runs the whole stack in one process, so it composes the
 * two other edges' entry points.
 */
const EXCEPTIONS: Array<{ from: string; to: string; why: string }> = [
  { from: 'src/cli/commands/start-all.ts', to: 'src/api/server.ts', why: '`start` runs the API in-process' },
  { from: 'src/cli/commands/start-all.ts', to: 'src/worker/worker.ts', why: '`start` runs a worker in-process' },
  { from: 'src/api/app.ts', to: 'src/dashboard/plugin.ts', why: 'the API process serves the developers page' },
  {
    from: 'src/cli/local-receiver.ts',
    to: 'src/receiver/index.ts',
    why: '`listen` verifies deliveries with the kit merchants use',
  },
];

/** Packages workflow code may load: it runs in Temporal's deterministic sandbox. */
const WORKFLOW_PACKAGES = ['@temporalio/workflow', '@temporalio/common'];
/** What core/ may use: computation only, never I/O (no fs, net, http, pg, undici...); typebox declares the event shapes. */
const CORE_PACKAGES = ['node:crypto', 'typebox', ...WORKFLOW_PACKAGES];

interface Edge {
  /** Repo-relative file, e.g. `src/api/routes/towns.ts`. */
  from: string;
  /** Repo-relative file for a relative import, else the package name. */
  to: string;
}

/** The layer a repo-relative file belongs to: `src/api/app.ts` -> `api`, `bench/engine.ts` -> `bench`. */
const topFolder = (file: string) => {
  const parts = file.split('/');
  return (parts[0] === 'src' ? parts[1] : parts[0]) as string;
};
const isFile = (to: string) => to.includes('/') && to.endsWith('.ts') && !to.startsWith('@');

function listFiles(dir: string): string[] {
  if (!existsSync(path.join(ROOT, dir))) return []; // a folder that does not exist (yet)
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = `${dir}/${entry.name}`;
    if (entry.isDirectory()) return listFiles(rel);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [rel] : [];
  });
}

/** Every import, export-from, require() and import() of a file, resolved to a repo file or a package name. */
function importsOf(file: string): Edge[] {
  const info = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
  return info.importedFiles.map(({ fileName: spec }) => {
    if (!spec.startsWith('.')) {
      const parts = spec.split('/');
      return { from: file, to: spec.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] as string) };
    }
    const target = path
      .relative(ROOT, path.resolve(ROOT, path.dirname(file), spec))
      .split(path.sep)
      .join('/');
    const found = [`${target}.ts`, `${target}/index.ts`, target].find((candidate) =>
      existsSync(path.join(ROOT, candidate)),
    );
    return { from: file, to: found ?? target };
  });
}

function importGraph(): Edge[] {
  return FOLDERS.map(dirOf).flatMap(listFiles).flatMap(importsOf);
}

/** core/ files workflow code may load: no node: module, only sandbox-safe packages, and only such core files. */
function workflowSafe(edges: Edge[]): Set<string> {
  const safe = new Set(listFiles(dirOf('core')));
  for (let changed = true; changed;) {
    changed = false;
    for (const file of [...safe]) {
      if (edges.some((e) => e.from === file && (isFile(e.to) ? !safe.has(e.to) : !WORKFLOW_PACKAGES.includes(e.to)))) {
        safe.delete(file);
        changed = true;
      }
    }
  }
  return safe;
}

/** Every edge the layering forbids, as `from -> to: why`. */
function violations(edges: Edge[]): string[] {
  const safe = workflowSafe(edges);
  const found: string[] = [];
  for (const { from, to } of edges) {
    const source = topFolder(from);
    const rule = ALLOWED[source];
    if (!rule) continue;
    if (!isFile(to)) {
      if (source === 'workflows' && !WORKFLOW_PACKAGES.includes(to))
        found.push(`${from} -> ${to}: workflow code loads only ${WORKFLOW_PACKAGES.join(', ')}`);
      if (source === 'core' && !CORE_PACKAGES.includes(to))
        found.push(`${from} -> ${to}: core/ is pure (${CORE_PACKAGES.join(', ')})`);
      continue;
    }
    const target = topFolder(to);
    if (EXCEPTIONS.some((x) => x.from === from && x.to === to)) continue;
    if (target === 'test' || target === 'scripts') {
      found.push(`${from} -> ${to}: nothing ships or measures with ${target}/ code`);
    } else if (source === 'workflows' && target === 'core' && !safe.has(to)) {
      found.push(`${from} -> ${to}: workflow code imports only pure core/ files`);
    } else if (target === source) {
      continue;
    } else if (target === 'db' && rule.wiring && WIRING.includes(to)) {
      continue;
    } else if (target === 'temporal-tools' && !rule.folders.includes(target)) {
      found.push(
        `${from} -> ${to}: temporal-tools/ is not shipped; the CLI loads it through src/cli/temporal-tooling.ts`,
      );
    } else if (!rule.folders.includes(target)) {
      found.push(
        `${from} -> ${to}: ${source}/ may import ${[...rule.folders, ...(rule.wiring ? WIRING : [])].join(', ') || 'nothing of ours'}`,
      );
    }
  }
  return found;
}

/** Folder-level cycles (a -> b -> a), each shown as its path of folders. */
function folderCycles(edges: Edge[]): string[] {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!isFile(to) || topFolder(from) === topFolder(to)) continue;
    const set = next.get(topFolder(from)) ?? new Set<string>();
    set.add(topFolder(to));
    next.set(topFolder(from), set);
  }
  const cycles: string[] = [];
  const visit = (node: string, trail: string[]) => {
    for (const to of next.get(node) ?? []) {
      if (to === trail[0]) cycles.push([...trail, to].join(' -> '));
      else if (!trail.includes(to) && to > (trail[0] as string)) visit(to, [...trail, to]);
    }
  };
  for (const start of next.keys()) visit(start, [start]);
  return cycles;
}

/** The files each file imports (repo files only, each once). */
function fileGraph(edges: Edge[]): Map<string, string[]> {
  const next = new Map<string, Set<string>>();
  for (const { from, to } of edges) {
    if (!isFile(to)) continue;
    const set = next.get(from) ?? new Set<string>();
    set.add(to);
    next.set(from, set);
  }
  return new Map([...next].map(([file, targets]) => [file, [...targets].sort()]));
}

/** Strongly connected components (Tarjan): files that all reach each other through imports. */
function components(next: Map<string, string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (file: string) => {
    index.set(file, index.size);
    low.set(file, index.get(file) as number);
    stack.push(file);
    onStack.add(file);
    for (const to of next.get(file) ?? []) {
      if (!index.has(to)) {
        connect(to);
        low.set(file, Math.min(low.get(file) as number, low.get(to) as number));
      } else if (onStack.has(to)) {
        low.set(file, Math.min(low.get(file) as number, index.get(to) as number));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(member);
      if (member === file) break;
    }
    found.push(component.sort());
  };
  for (const file of [...next.keys()].sort()) if (!index.has(file)) connect(file);
  return found;
}

/** One import path from a file of a component back to itself, inside the component (breadth first: a shortest). */
function cyclePath(component: string[], next: Map<string, string[]>): string[] {
  const start = component[0] as string;
  const members = new Set(component);
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
    for (const to of next.get(file) ?? []) {
      if (to === start) {
        const trail: string[] = [];
        for (let at = file; at !== start; at = cameFrom.get(at) as string) trail.unshift(at);
        return [start, ...trail, start];
      }
      if (members.has(to) && !cameFrom.has(to)) {
        cameFrom.set(to, file);
        queue.push(to);
      }
    }
  }
  return [start, start];
}

/** File-level import circles, each shown as one path through it: `a.ts -> b.ts -> a.ts`. */
function fileCycles(edges: Edge[]): string[] {
  const next = fileGraph(edges);
  return components(next)
    .filter(
      (component) => component.length > 1 || (next.get(component[0] as string) ?? []).includes(component[0] as string),
    )
    .map((component) => cyclePath(component, next).join(' -> '));
}

describe('layering: the arrows point one way', () => {
  const edges = importGraph();

  it('reads the real import graph', () => {
    expect(edges.some((e) => e.from === 'src/api/server.ts' && e.to === 'src/api/app.ts')).toBe(true);
    expect(
      edges.some((e) => e.from === 'src/workflows/deliver-event.ts' && e.to === 'src/core/delivery-contract.ts'),
    ).toBe(true);
  });

  it('has a rule for every folder under src/ (the receiver kit, its own package, imports nothing of ours)', () => {
    expect(SHIPPED).toContain('api');
    expect(SHIPPED.filter((dir) => dir !== 'receiver' && !ALLOWED[dir])).toEqual([]);
  });

  it('has no edge a layer does not allow', () => {
    expect(violations(edges)).toEqual([]);
  });

  it('has no cycle between folders', () => {
    expect(folderCycles(edges)).toEqual([]);
  });

  it('has no cycle between files, anywhere', () => {
    expect(fileCycles([...edges, ...UNLAYERED.map(dirOf).flatMap(listFiles).flatMap(importsOf)])).toEqual([]);
  });

  it('fails on a bad edge: the check itself works', () => {
    expect(violations([{ from: 'src/api/routes/towns.ts', to: 'src/db/towns.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'src/api/routes/towns.ts', to: 'src/db/pool.ts' }])).toEqual([]);
    expect(violations([{ from: 'src/db/accounts.ts', to: 'src/domain/accounts.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'src/core/ids.ts', to: 'src/infra/config.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'src/core/ids.ts', to: 'pg' }])).toHaveLength(1);
    expect(violations([{ from: 'src/activities/index.ts', to: 'src/db/pool.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'bench/delivery.ts', to: 'test/helpers/receiver.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'src/cli/commands/accounts.ts', to: 'src/api/server.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'src/workflows/deliver-event.ts', to: '@temporalio/activity' }])).toHaveLength(1);
    // src/core/secrets.ts loads node:crypto: fine for core, not for the workflow sandbox.
    expect(violations([...edges, { from: 'src/workflows/deliver-event.ts', to: 'src/core/secrets.ts' }])).toHaveLength(
      1,
    );
    expect(violations([{ from: 'src/cli/commands/start-all.ts', to: 'temporal-tools/dev-server.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'temporal-tools/dev-server.ts', to: 'src/api/server.ts' }])).toHaveLength(1);
    expect(violations([{ from: 'bench/dev-server.ts', to: 'temporal-tools/dev-server.ts' }])).toEqual([]);
    expect(
      folderCycles([
        { from: 'db/a.ts', to: 'core/b.ts' },
        { from: 'core/b.ts', to: 'db/a.ts' },
      ]),
    ).toEqual(['core -> db -> core']);
  });

  it('fails on a file circle and shows its path: the check itself works', () => {
    const circle = [
      { from: 'src/dashboard/plugin.ts', to: 'src/dashboard/routes/keys.ts' },
      { from: 'src/dashboard/routes/keys.ts', to: 'src/dashboard/views/keys.ts' },
      { from: 'src/dashboard/views/keys.ts', to: 'src/dashboard/plugin.ts' },
      { from: 'src/dashboard/routes/keys.ts', to: 'src/dashboard/forms.ts' },
      { from: 'src/api/app.ts', to: 'src/dashboard/plugin.ts' },
    ];
    expect(fileCycles(circle)).toEqual([
      'src/dashboard/plugin.ts -> src/dashboard/routes/keys.ts -> src/dashboard/views/keys.ts -> src/dashboard/plugin.ts',
    ]);
    expect(fileCycles([{ from: 'core/a.ts', to: 'core/a.ts' }])).toEqual(['core/a.ts -> core/a.ts']);
    expect(fileCycles(circle.slice(1))).toEqual([]);
  });
});
