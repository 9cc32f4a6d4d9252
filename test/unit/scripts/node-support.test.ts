import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.join(__dirname, '..', '..', '..');
const { SUPPORTED_LINES, ENDED_LINES, nodeLineNotice } = createRequire(__filename)(
  '../../../scripts/node-support.js',
) as {
  SUPPORTED_LINES: { major: number }[];
  ENDED_LINES: { major: number; endOfLife: string }[];
  nodeLineNotice: (version: string) => string | undefined;
};
const engines = (JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { engines: { node: string } })
  .engines.node;

/** Whether `version` meets one of the engines' `^major.minor.patch` ranges, the only form the field uses. */
function admitted(version: string): boolean {
  const [major, minor, patch] = version.split('.').map(Number) as [number, number, number];
  return engines.split('||').some((range) => {
    const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(range.trim());
    if (!match) throw new Error(`engines range ${range} is not of the ^x.y.z form`);
    const [, m, n, p] = match.map(Number) as [number, number, number, number];
    return major === m && (minor > n || (minor === n && patch >= p));
  });
}

describe('the Node lines in support', () => {
  it('are 22 and 24; 20 has ended', () => {
    expect(SUPPORTED_LINES.map((line) => line.major)).toEqual([22, 24]);
    expect(ENDED_LINES.map((line) => line.major)).toEqual([20]);
  });

  it('npm start says nothing on a supported line, and one line naming the end and what to install on 20', () => {
    expect(nodeLineNotice('v22.12.0')).toBeUndefined();
    expect(nodeLineNotice('v24.21.0')).toBeUndefined();
    const notice = nodeLineNotice('v20.20.2');
    expect(notice).toContain('Node 20 reached its end of life on 2026-04-30');
    expect(notice).toContain('install Node 24 LTS');
    expect(notice).not.toContain('\n');
    expect(nodeLineNotice('v18.20.0')).toContain('not a line this service is tested on');
  });

  it("package.json's engines admit every supported line and the ended one that still runs, nothing older", () => {
    for (const version of ['22.12.0', '24.0.0', '24.21.0', '20.19.0']) expect(admitted(version), version).toBe(true);
    expect(admitted('18.20.0')).toBe(false);
    expect(admitted('23.0.0')).toBe(false);
    expect(admitted('20.18.0')).toBe(false);
  });

  it('the README names the supported lines', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    expect(readme).toMatch(/Node 22 or 24/);
  });
});
