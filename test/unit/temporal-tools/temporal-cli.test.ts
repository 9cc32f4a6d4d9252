import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  cachedCliPath,
  ensureTemporalCli,
  isAtLeast,
  isSourceBuild,
  isUsableVersion,
  parseCliVersion,
  TEMPORAL_CLI_VERSION,
  temporalOnPath,
  type Exec,
} from '../../../temporal-tools/temporal-cli';

describe('the Temporal CLI version check', () => {
  it('reads the version `temporal --version` prints', () => {
    expect(parseCliVersion('temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)\n')).toBe('1.5.1');
    expect(parseCliVersion('temporal version v1.6.0')).toBe('1.6.0');
    expect(parseCliVersion('temporal version 0.0.0-DEV (Server 1.29.1, UI 2.42.1)')).toBe('0.0.0-DEV');
    expect(parseCliVersion('temporal version 1.6.0-rc.1')).toBe('1.6.0-rc.1');
    expect(parseCliVersion('Usage: temporal [command]')).toBeUndefined();
  });

  it('accepts the pinned version and newer ones, part by part as numbers', () => {
    expect(isAtLeast(TEMPORAL_CLI_VERSION, TEMPORAL_CLI_VERSION)).toBe(true);
    expect(isAtLeast('1.5.2', '1.5.1')).toBe(true);
    expect(isAtLeast('1.10.0', '1.5.1')).toBe(true);
    expect(isAtLeast('2.0.0', '1.5.1')).toBe(true);
    expect(isAtLeast('1.5.0', '1.5.1')).toBe(false);
    expect(isAtLeast('1.4.9', '1.5.1')).toBe(false);
    expect(isAtLeast('0.13.2', '1.5.1')).toBe(false);
    expect(isAtLeast('1.6.0-rc.1', '1.5.1')).toBe(true);
  });

  it('takes a source build, which reports 0.0.0-DEV, as it is', () => {
    expect(isSourceBuild('0.0.0-DEV')).toBe(true);
    expect(isUsableVersion('0.0.0-DEV')).toBe(true);
    expect(isUsableVersion('0.0.0')).toBe(false);
    expect(isUsableVersion('1.4.0')).toBe(false);
  });
});

describe('choosing the Temporal CLI', () => {
  let dir: string;
  let lines: string[];
  let ran: string[][];
  /** What each fake binary answers to --version; `go install` writes the binary into GOBIN. */
  let versions: Record<string, string>;
  const exec: Exec = async (file, args, options) => {
    ran.push([file, ...args]);
    if (file === 'go') {
      writeFileSync(path.join(options.env!.GOBIN!, 'temporal'), '');
      return { stdout: '' };
    }
    const answer = versions[file];
    if (answer === undefined) throw Object.assign(new Error('exec failed'), { stderr: 'cannot run' });
    return { stdout: answer };
  };
  const binary = (folder: string, mode = 0o755) => {
    const file = path.join(dir, folder, 'temporal');
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, '');
    chmodSync(file, mode);
    return file;
  };
  const env = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
    XDG_CACHE_HOME: path.join(dir, 'cache'),
    PATH: '',
    ...extra,
  });
  const choose = (given: NodeJS.ProcessEnv, cliPath?: string) =>
    ensureTemporalCli({ env: given, exec, log: (line) => lines.push(line), ...(cliPath ? { cliPath } : {}) });

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'pw-temporal-cli-'));
    lines = [];
    ran = [];
    versions = {};
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('uses a `temporal` on PATH of the pinned version or newer, and says so', async () => {
    const installed = binary('bin');
    versions[installed] = 'temporal version 1.6.0 (Server 1.30.0, UI 2.44.0)';
    const given = env({ PATH: [path.join(dir, 'empty'), path.join(dir, 'bin')].join(path.delimiter) });
    expect(temporalOnPath(given)).toBe(installed);
    expect(await choose(given)).toBe(installed);
    expect(lines).toEqual([`Temporal CLI ${installed} (v1.6.0, from PATH)`]);
    expect(ran).toEqual([[installed, '--version']]);
  });

  it('passes over a non-executable file on PATH', () => {
    binary('bin', 0o644);
    expect(temporalOnPath(env({ PATH: path.join(dir, 'bin') }))).toBeUndefined();
  });

  it('builds the pinned CLI when the one on PATH is older, and says why', async () => {
    const old = binary('bin');
    versions[old] = 'temporal version 1.4.0 (Server 1.28.0, UI 2.40.0)';
    const given = env({ PATH: path.join(dir, 'bin') });
    const built = await choose(given);
    expect(built).toBe(cachedCliPath(given));
    expect(existsSync(built)).toBe(true);
    expect(ran[1]).toEqual(['go', 'install', `github.com/temporalio/cli/cmd/temporal@v${TEMPORAL_CLI_VERSION}`]);
    expect(lines[0]).toMatch(
      /^building Temporal CLI v1\.5\.1 .*\(.*bin\/temporal is v1\.4\.0, older than needed\)\.\.\.$/,
    );
    expect(lines[1]).toMatch(/^Temporal CLI built in \d+ s: /);
  });

  it('builds when there is no CLI anywhere, and reuses that build next time without asking its version', async () => {
    const given = env();
    const built = await choose(given);
    expect(ran.map((call) => call[0])).toEqual(['go']);
    expect(lines[0]).toMatch(/^building Temporal CLI v1\.5\.1 from the Go module proxy/);

    lines = [];
    ran = [];
    expect(await choose(given)).toBe(built);
    expect(ran).toEqual([]);
    expect(lines).toEqual([`Temporal CLI ${built} (v${TEMPORAL_CLI_VERSION}, built earlier)`]);
  });

  it('says what failed when the build fails, and leaves no partial binary', async () => {
    const failing: Exec = async () => {
      throw Object.assign(new Error('go: not found'), { stderr: 'go: command not found\n' });
    };
    const given = env();
    await expect(ensureTemporalCli({ env: given, exec: failing })).rejects.toThrow(
      'building the Temporal CLI failed (is Go installed?): go: command not found',
    );
    expect(existsSync(cachedCliPath(given))).toBe(false);
  });

  it('uses TEMPORAL_CLI when it is new enough, before anything on PATH', async () => {
    const onPath = binary('bin');
    const explicit = binary('explicit');
    versions[onPath] = 'temporal version 1.6.0';
    versions[explicit] = 'temporal version 1.5.1 (Server 1.29.1, UI 2.42.1)';
    const given = env({ PATH: path.join(dir, 'bin'), TEMPORAL_CLI: explicit });
    expect(await choose(given)).toBe(explicit);
    expect(lines).toEqual([`Temporal CLI ${explicit} (v1.5.1, from TEMPORAL_CLI)`]);
    // The configured path (src/infra/config.ts reads TEMPORAL_CLI) comes as cliPath and counts the same.
    expect(await choose(env(), explicit)).toBe(explicit);
  });

  it('refuses a TEMPORAL_CLI that is missing, too old, or does not say its version', async () => {
    await expect(choose(env({ TEMPORAL_CLI: path.join(dir, 'nowhere') }))).rejects.toThrow(
      'TEMPORAL_CLI names a file that does not exist',
    );
    const old = binary('old');
    versions[old] = 'temporal version 1.4.0';
    await expect(choose(env({ TEMPORAL_CLI: old }))).rejects.toThrow(
      `TEMPORAL_CLI ${old} is v1.4.0; the dev server needs v1.5.1 or newer`,
    );
    const silent = binary('silent');
    await expect(choose(env({ TEMPORAL_CLI: silent }))).rejects.toThrow('does not answer `--version` with a version');
    expect(ran.some((call) => call[0] === 'go')).toBe(false);
  });
});
