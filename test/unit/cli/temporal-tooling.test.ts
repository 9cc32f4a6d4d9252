import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CliError } from '../../../src/cli/context';
import {
  DEFAULT_SERVER_SHARDS,
  loadTemporalTooling,
  TEMPORAL_TOOLING_DIR,
  type TemporalToolingModules,
} from '../../../src/cli/temporal-tooling';
import * as devServer from '../../../temporal-tools/dev-server';
import * as temporalCli from '../../../temporal-tools/temporal-cli';
import * as temporalServer from '../../../temporal-tools/temporal-server';
import { DEFAULT_NUM_HISTORY_SHARDS } from '../../../temporal-tools/temporal-server-config';

/**
 * The CLI loads temporal-tools/ by path, so the compiler does not check the modules against what the CLI calls:
 * this assignment does (the typecheck fails when a tooling module no longer fits the CLI's interfaces).
 */
const modules: TemporalToolingModules = {
  'temporal-cli': temporalCli,
  'dev-server': devServer,
  'temporal-server': temporalServer,
};

describe('the CLI loads the Temporal tooling on demand', () => {
  it('finds every module it loads in the checkout', () => {
    expect(TEMPORAL_TOOLING_DIR).toBe(path.join(__dirname, '..', '..', '..', 'temporal-tools'));
    for (const name of Object.keys(modules))
      expect(existsSync(path.join(TEMPORAL_TOOLING_DIR, `${name}.ts`))).toBe(true);
  });

  it('shows the full server default shard count in `temporal-server --help` without loading it', () => {
    expect(DEFAULT_SERVER_SHARDS).toBe(DEFAULT_NUM_HISTORY_SHARDS);
  });

  it('fails with one line saying what to do when the install has no tooling', () => {
    const need = { command: '`temporal-server`', otherwise: 'run it from a checkout' };
    const missing = path.join(__dirname, 'no-such-folder');
    let thrown: unknown;
    try {
      loadTemporalTooling('temporal-server', need, missing);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(CliError);
    const message = (thrown as CliError).message;
    expect(message).not.toContain('\n');
    expect(message).toMatch(/^`temporal-server` needs the Temporal tooling .*: run it from a checkout$/);
  });
});
