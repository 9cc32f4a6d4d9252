import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_FILES, parseClusterArgs, testFiles, unmatchedFilters } from '../../../scripts/test-cluster-plan';

const root = path.join(__dirname, '..', '..', '..');

describe('npm run test:cluster: what it runs', () => {
  it('every default filter matches a test file (vitest skips one that matches nothing without a word)', () => {
    expect(unmatchedFilters(DEFAULT_FILES, testFiles(root))).toEqual([]);
  });

  it('the defaults take in every delivery test, crash recovery and replay', () => {
    const files = testFiles(root).filter((file) => DEFAULT_FILES.some((filter) => file.includes(filter)));
    expect(files).toEqual(
      expect.arrayContaining([
        'test/integration/workflows/delivery-basic.test.ts',
        'test/integration/workflows/delivery-db-outage.test.ts',
        'test/e2e/crash-recovery.test.ts',
        'test/integration/workflows/replay.test.ts',
        'test/integration/worker/dispatcher.test.ts',
      ]),
    );
  });

  it('finds a stale filter', () => {
    expect(unmatchedFilters(['test/integration/delivery-', 'delivery-basic'], testFiles(root))).toEqual([
      'test/integration/delivery-',
    ]);
  });

  it('runs the files and the chaos suite unless told otherwise', () => {
    expect(parseClusterArgs([])).toEqual({
      files: DEFAULT_FILES,
      vitest: true,
      chaos: true,
      chaosSeed: undefined,
      chaosWorkers: undefined,
    });
    expect(parseClusterArgs(['delivery-basic', '--no-chaos'])).toEqual({
      files: ['delivery-basic'],
      vitest: true,
      chaos: false,
      chaosSeed: undefined,
      chaosWorkers: undefined,
    });
    expect(parseClusterArgs(['--chaos-only', '--chaos-seed', '42'])).toMatchObject({
      vitest: false,
      chaos: true,
      chaosSeed: 42,
    });
    expect(parseClusterArgs(['--chaos-only', '--chaos-workers', '3'])).toMatchObject({
      vitest: false,
      chaos: true,
      chaosWorkers: 3,
    });
    expect(parseClusterArgs(['--help'])).toBe('help');
  });

  it('refuses what would run nothing or what it does not know', () => {
    expect(() => parseClusterArgs(['--no-chaos', '--chaos-only'])).toThrow(/nothing to run/);
    expect(() => parseClusterArgs(['--chaos-only', 'delivery-basic'])).toThrow(/no vitest files/);
    expect(() => parseClusterArgs(['--chaos-seed', 'x'])).toThrow(/whole number/);
    expect(() => parseClusterArgs(['--chaos-workers', '0'])).toThrow(/--chaos-workers needs a whole number >= 1/);
    expect(() => parseClusterArgs(['--no-chaos', '--chaos-workers', '3'])).toThrow(/no chaos suite/);
    expect(() => parseClusterArgs(['--bail'])).toThrow(/unknown option --bail/);
  });
});
