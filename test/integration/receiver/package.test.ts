import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleEvent } from '../../../src/core/event-schemas';

/**
 * The receiver kit as a merchant gets it: `npm pack` in src/receiver/ (which builds it), the tarball installed into
 * a scratch project with no network, then used from CommonJS and from an ES module, and type-checked there.
 */

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..', '..');
const KIT = path.join(ROOT, 'src', 'receiver');
const TSC = path.join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const SECRET = 'whsec_package_test';
const LIMIT = { timeout: 120_000, maxBuffer: 10 * 1024 * 1024 };

let scratch: string;
let tarball: string;

async function npm(args: string[], cwd: string): Promise<string> {
  // A private cache: nothing is read from or written to the machine's, and --offline means no registry either.
  const env = {
    ...process.env,
    npm_config_cache: path.join(scratch, '.npm-cache'),
    npm_config_update_notifier: 'false',
  };
  const { stdout } = await run('npm', args, { cwd, env, ...LIMIT });
  return stdout;
}

function signed(body: string, now: number): string {
  return `t=${now},v1=${createHmac('sha256', SECRET).update(`${now}.${body}`).digest('hex')}`;
}

async function typecheck(files: string[]): Promise<{ code: number; output: string }> {
  const args = [
    TSC,
    '--noEmit',
    '--strict',
    '--module',
    'nodenext',
    '--moduleResolution',
    'nodenext',
    '--target',
    'es2022',
  ];
  args.push('--types', 'node', '--typeRoots', path.join(ROOT, 'node_modules', '@types'), ...files);
  try {
    const { stdout } = await run(process.execPath, args, { cwd: scratch, ...LIMIT });
    return { code: 0, output: stdout };
  } catch (err) {
    const failure = err as { code?: number; stdout?: string };
    return { code: failure.code ?? 1, output: failure.stdout ?? String(err) };
  }
}

describe('@parcel-webhooks/receiver as a package', () => {
  beforeAll(async () => {
    scratch = mkdtempSync(path.join(os.tmpdir(), 'receiver-kit-'));
    const packed = JSON.parse(await npm(['pack', '--json', '--pack-destination', scratch], KIT)) as Array<{
      filename: string;
      files: { path: string }[];
    }>;
    const [info] = packed;
    if (!info) throw new Error('npm pack reported no tarball');
    tarball = path.join(scratch, info.filename);
    writeFileSync(
      path.join(scratch, 'package.json'),
      JSON.stringify({ name: 'merchant-scratch', version: '1.0.0', private: true }),
    );
    await npm(['install', '--offline', '--no-audit', '--no-fund', tarball], scratch);
  }, 240_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('ships the two builds, their types and the README, nothing else, and depends on nothing', async () => {
    const installed = path.join(scratch, 'node_modules', '@parcel-webhooks', 'receiver');
    const manifest = JSON.parse(readFileSync(path.join(installed, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest).toMatchObject({ name: '@parcel-webhooks/receiver', version: '0.1.0' });
    expect(manifest.dependencies).toBeUndefined();
    expect(manifest.peerDependencies).toBeUndefined();
    expect(readdirSync(installed).sort()).toEqual(['README.md', 'dist', 'package.json']);
    expect(readdirSync(path.join(installed, 'dist')).sort()).toEqual(['cjs', 'esm']);
    const built = readdirSync(path.join(installed, 'dist', 'esm'));
    expect(built).toEqual(
      expect.arrayContaining(['index.js', 'index.d.ts', 'verify.js', 'construct-event.js', 'package.json']),
    );
    expect(built.some((file) => file.includes('example'))).toBe(false);
    // Only the kit itself came in: nothing else was installed beside it.
    expect(readdirSync(path.join(scratch, 'node_modules')).filter((name) => !name.startsWith('.'))).toEqual([
      '@parcel-webhooks',
    ]);
  });

  it('verifies a signed delivery from require and from import', async () => {
    const body = JSON.stringify(exampleEvent('cod.settled'));
    const now = Math.floor(Date.now() / 1000);
    const script = (load: string) => `${load}
const event = constructEvent(${JSON.stringify(body)}, ${JSON.stringify(signed(body, now))}, ${JSON.stringify(SECRET)});
let refused = 'accepted';
try { constructEvent(${JSON.stringify(body)}, ${JSON.stringify(signed(body, now))}, 'whsec_other'); } catch (err) {
  refused = err instanceof WebhookVerificationError ? err.reason : 'wrong error';
}
console.log(JSON.stringify({ type: event.type, amount: event.data.cod_settlement.amount, refused }));
`;
    writeFileSync(
      path.join(scratch, 'check.cjs'),
      script("const { constructEvent, WebhookVerificationError } = require('@parcel-webhooks/receiver');"),
    );
    writeFileSync(
      path.join(scratch, 'check.mjs'),
      script("import { constructEvent, WebhookVerificationError } from '@parcel-webhooks/receiver';"),
    );
    for (const file of ['check.cjs', 'check.mjs']) {
      const { stdout } = await run(process.execPath, [file], { cwd: scratch, ...LIMIT });
      expect(JSON.parse(stdout), file).toEqual({ type: 'cod.settled', amount: 350, refused: 'signature_mismatch' });
    }
  });

  it('types ParcelEvent as a union on type: a narrowing compiles, a wrong field does not', async () => {
    const narrowing = (load: string, field: string) => `${load}
export function amountOf(raw: Buffer, header: string): number | undefined {
  const event: ParcelEvent = constructEvent(raw, header, 'whsec_x');
  if (event.type === 'cod.settled') return event.data.cod_settlement.${field};
  if (event.type === 'parcel.delivered') return event.data.parcel.total_fee;
  return undefined;
}
`;
    const load = "import { constructEvent, type ParcelEvent } from '@parcel-webhooks/receiver';";
    // .cts resolves the package's require condition, .mts its import condition: both builds' types are checked.
    for (const ext of ['cts', 'mts']) {
      writeFileSync(path.join(scratch, `narrow.${ext}`), narrowing(load, 'amount'));
      writeFileSync(path.join(scratch, `wrong.${ext}`), narrowing(load, 'total_fee'));
    }
    const good = await typecheck(['narrow.cts', 'narrow.mts']);
    expect(good, good.output).toEqual({ code: 0, output: '' });
    const bad = await typecheck(['wrong.cts', 'wrong.mts']);
    expect(bad.code).not.toBe(0);
    for (const ext of ['cts', 'mts']) {
      expect(bad.output).toMatch(
        new RegExp(
          `wrong\\.${ext}\\(4,\\d+\\): error TS2339: Property 'total_fee' does not exist on type 'CodSettlement'`,
        ),
      );
    }
  }, 180_000);
});
