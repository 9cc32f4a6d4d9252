import { readdirSync } from 'node:fs';
import path from 'node:path';

/**
 * What `npm run test:cluster` runs, apart from the run itself (scripts/test-cluster.ts), so a unit test can
 * check it: the test files are vitest filters, and a filter that matches no file is silently skipped by vitest
 * when another one matches (the old `test/integration/delivery-` ran nothing after the tests moved).
 */

/**
 * Vitest filters (substrings of a test file's path): the delivery tests, the outbox dispatcher (eager start,
 * which a real server may treat differently from the dev server), crash recovery and the replay of recorded
 * histories.
 */
export const DEFAULT_FILES = [
  'test/integration/workflows/delivery-',
  'test/integration/workflows/deliveries.test.ts',
  'test/integration/worker/dispatcher.test.ts',
  'test/e2e/crash-recovery.test.ts',
  'test/integration/workflows/replay.test.ts',
];

export const USAGE = `npm run test:cluster -- [--no-chaos | --chaos-only] [--chaos-seed N] [--chaos-workers N] [vitest filters...]

  Runs the delivery, outbox, crash-recovery and replay tests on the full Temporal server on PostgreSQL,
  then the chaos suite (npm run chaos -- --cluster) on a server and databases of its own.
  --no-chaos         only the vitest files
  --chaos-only       only the chaos suite
  --chaos-seed N     the chaos suite's --seed
  --chaos-workers N  the chaos suite's --workers (N workers and two APIs, a worker killed every 10 s)
  filters            vitest filters replacing the default files (${DEFAULT_FILES.join(', ')})`;

export interface ClusterPlan {
  files: string[];
  vitest: boolean;
  chaos: boolean;
  chaosSeed: number | undefined;
  chaosWorkers: number | undefined;
}

export function parseClusterArgs(argv: string[]): ClusterPlan | 'help' {
  const plan: ClusterPlan = { files: [], vitest: true, chaos: true, chaosSeed: undefined, chaosWorkers: undefined };
  const wholeNumber = (flag: string, raw: string | undefined, min: number) => {
    if (raw === undefined || !/^\d+$/.test(raw) || Number(raw) < min)
      throw new Error(`${flag} needs a whole number >= ${min}, got ${raw ?? 'nothing'}`);
    return Number(raw);
  };
  for (let i = 0; i < argv.length; i += 1) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') return 'help';
    if (arg === '--no-chaos') plan.chaos = false;
    else if (arg === '--chaos-only') plan.vitest = false;
    else if (arg === '--chaos-seed') plan.chaosSeed = wholeNumber(arg, argv[++i], 0);
    else if (arg === '--chaos-workers') plan.chaosWorkers = wholeNumber(arg, argv[++i], 1);
    else if (arg.startsWith('-')) throw new Error(`unknown option ${arg}\n\n${USAGE}`);
    else plan.files.push(arg);
  }
  if (!plan.vitest && !plan.chaos) throw new Error('--no-chaos and --chaos-only leave nothing to run');
  if (!plan.chaos && plan.chaosWorkers !== undefined)
    throw new Error('--no-chaos runs no chaos suite: drop --chaos-workers');
  if (!plan.vitest && plan.files.length > 0) throw new Error('--chaos-only runs no vitest files: drop the filters');
  if (plan.files.length === 0) plan.files = [...DEFAULT_FILES];
  return plan;
}

/** Every *.test.ts under test/, as paths relative to the repository with forward slashes. */
export function testFiles(root: string): string[] {
  return readdirSync(path.join(root, 'test'), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => `test/${file.split(path.sep).join('/')}`)
    .sort();
}

/** The filters no test file matches (vitest matches a filter as a substring of the file's path). */
export function unmatchedFilters(filters: string[], files: string[]): string[] {
  return filters.filter((filter) => !files.some((file) => file.includes(filter)));
}
