import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What ships is one list, package.json's `files`: the image copies exactly it, the build compiles its source
 * folders, and the layering test reads it. The image's file set is rebuilt here from the Dockerfile's own lines,
 * and every command compose runs and every CLI command's module must load from that set alone.
 */

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { files: string[] };
const shipped = pkg.files.map((entry) => entry.replace(/\/$/, ''));
/** Compiled by the build stage: not in a checkout. */
const BUILT = 'dist';
const sourceFolders = shipped.filter((entry) => entry !== BUILT && !entry.includes('.'));

/** The runtime stage's `COPY --from=build /app/<x> ./<x>` lines, and the files it copies from the context. */
function runtimeCopies(): string[] {
  const runtime =
    readFileSync(path.join(root, 'Dockerfile'), 'utf8')
      .split(/^FROM /m)
      .at(-1) ?? '';
  return [...runtime.matchAll(/^COPY --from=build \/app\/(\S+) \.\/(\S*)$/gm)].map((m) => {
    // A folder keeps its path; a file may land in ./ under its own name.
    expect([m[1], ''], `COPY of ${m[1]} keeps its path`).toContain(m[2]);
    return m[1] as string;
  });
}

describe('what ships', () => {
  it('the Dockerfile copies exactly the shipped list into the image', () => {
    expect([...runtimeCopies()].sort()).toEqual([...shipped].sort());
  });

  it('the build compiles exactly the shipped source folders', () => {
    const build = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    expect([...build.include].sort()).toEqual([...sourceFolders].sort());
  });

  it('every shipped entry exists in a checkout', () => {
    for (const entry of shipped.filter((e) => e !== BUILT))
      expect(existsSync(path.join(root, entry)), entry).toBe(true);
  });
});

describe("the image's file set", () => {
  let image: string;

  beforeAll(() => {
    image = mkdtempSync(path.join(os.tmpdir(), 'pw-image-'));
    cpSync(path.join(root, 'package.json'), path.join(image, 'package.json'));
    for (const entry of runtimeCopies()) {
      if (entry === BUILT) continue;
      cpSync(path.join(root, entry), path.join(image, entry), {
        recursive: true,
        filter: (from) => !from.endsWith('.test.ts') && !from.includes(`${path.sep}node_modules`),
      });
    }
    // The image installs the production dependencies; the checkout's serve here (a superset).
    symlinkSync(path.join(root, 'node_modules'), path.join(image, 'node_modules'), 'dir');
  });

  afterAll(() => {
    if (image) rmSync(image, { recursive: true, force: true });
  });

  /** Every relative import of `file`, resolved as Node and tsx do (`x.ts`, `x/index.ts`, `x.js` naming `x.ts`). */
  function importsOf(file: string): { spec: string; resolved: string | undefined }[] {
    const source = readFileSync(file, 'utf8');
    const specs = [
      ...source.matchAll(/^(?:import|export) (?!type )[^;]*? from '(\.[^']+)'|require\('(\.[^']+)'\)/gm),
    ].map((m) => (m[1] ?? m[2]) as string);
    return specs.map((spec) => {
      const base = path.resolve(path.dirname(file), spec);
      const candidates = [
        base,
        base.replace(/\.js$/, '.ts'),
        `${base}.ts`,
        `${base}.js`,
        path.join(base, 'index.ts'),
        path.join(base, 'index.js'),
      ];
      return { spec, resolved: candidates.find((c) => existsSync(c) && !readdirSyncSafe(c)) };
    });
  }

  function readdirSyncSafe(candidate: string): boolean {
    try {
      readdirSync(candidate);
      return true;
    } catch {
      return false;
    }
  }

  /** Walks the import graph from `entry` inside the image; answers the imports that resolve to nothing there. */
  function unresolvedFrom(entry: string): string[] {
    const missing: string[] = [];
    const seen = new Set<string>();
    const queue = [path.join(image, entry)];
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) {
      if (seen.has(file)) continue;
      seen.add(file);
      for (const { spec, resolved } of importsOf(file)) {
        if (resolved === undefined) missing.push(`${spec} (from ${path.relative(image, file)})`);
        else if (/\.(ts|js)$/.test(resolved)) queue.push(resolved);
      }
    }
    return missing;
  }

  it("every command compose runs finds every module it imports (dist's entries from their sources)", () => {
    const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { build?: string; command?: string[] }>;
    };
    const entries = Object.values(compose.services)
      .filter((service) => service.build === '.')
      .map((service) => (service.command ?? [])[1] as string);
    expect(entries.length).toBeGreaterThanOrEqual(3);
    for (const entry of entries) {
      const source = entry.startsWith(`${BUILT}/`) ? entry.slice(BUILT.length + 1).replace(/\.js$/, '.ts') : entry;
      expect(existsSync(path.join(image, source)), `${entry} (${source}) is in the image`).toBe(true);
      expect(unresolvedFrom(source), entry).toEqual([]);
    }
  });

  it('every CLI command module loads from the image alone', () => {
    const commands = readdirSync(path.join(image, 'cli', 'commands')).filter((f) => f.endsWith('.ts'));
    expect(commands).toContain('start-all.ts');
    for (const command of commands) expect(unresolvedFrom(path.join('cli', 'commands', command)), command).toEqual([]);
    // And for real: Node loads the CLI and each command module (start-all is the one `start` loads on demand).
    const script = commands
      .map((command) => `require(${JSON.stringify(path.join(image, 'cli', 'commands', command))});`)
      .join('');
    execFileSync(process.execPath, ['-e', `require('tsx/cjs');${script}`], { cwd: image, timeout: 120_000 });
    const help = execFileSync(process.execPath, ['src/cli/bin.js', '--help'], { cwd: image, encoding: 'utf8' });
    expect(help).toContain('migrate');
  });
});
