import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * What ships is src/ and the build's output: package.json's `files` lists them, the image copies exactly them, and
 * the build compiles src/ into dist/ (rootDir src, so `dist/api/server.js` is built from `src/api/server.ts`). The
 * image's file set is rebuilt here from the Dockerfile's own COPY lines, and every command the image runs (compose's
 * commands, the Dockerfile's CMD, package.json's bin and exports) and every CLI command's module must load from
 * that set alone.
 */

const root = path.join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
  files: string[];
  bin: Record<string, string>;
  exports: Record<string, string | { default: string }>;
};
/** Compiled by the build stage: not in a checkout. */
const BUILT = 'dist';
/** The one folder of shipped source. */
const SOURCE = 'src';

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

/** The runtime stage's CMD, as its argument list. */
function dockerfileCommand(): string[] {
  const cmd = /^CMD (\[.*\])$/m.exec(readFileSync(path.join(root, 'Dockerfile'), 'utf8'));
  expect(cmd, 'the Dockerfile has an exec-form CMD').not.toBeNull();
  return JSON.parse((cmd as RegExpExecArray)[1] as string) as string[];
}

/** The source file a command's entry runs: a dist/ file from the src/ file it is compiled from. */
function sourceOf(entry: string): string {
  return entry.startsWith(`${BUILT}/`) ? `${SOURCE}/${entry.slice(BUILT.length + 1).replace(/\.js$/, '.ts')}` : entry;
}

describe('what ships', () => {
  it('the Dockerfile copies exactly the shipped list into the image, and it is dist/, src/ and the tsconfig', () => {
    const shipped = pkg.files.map((entry) => entry.replace(/\/$/, ''));
    expect([...runtimeCopies()].sort()).toEqual([...shipped].sort());
    expect([...shipped].sort()).toEqual([BUILT, SOURCE, 'tsconfig.json']);
  });

  it('the build compiles src/ alone into dist/, keeping its folders', () => {
    const build = JSON.parse(readFileSync(path.join(root, 'tsconfig.build.json'), 'utf8')) as {
      include: string[];
      compilerOptions: { rootDir: string; outDir: string };
    };
    expect(build.include).toEqual([SOURCE]);
    expect(build.compilerOptions).toMatchObject({ rootDir: SOURCE, outDir: BUILT });
  });

  it('the root holds no shipped code: every folder beside src/ is tooling', () => {
    // What a checkout makes and keeps out of git (node_modules/, dist/, secrets/...) is not part of the layout.
    const ignored = readFileSync(path.join(root, '.gitignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim().replace(/\/$/, ''))
      .filter((line) => line !== '' && !line.startsWith('#'));
    const folders = readdirSync(root, { withFileTypes: true })
      .filter((entry) => entry.isDirectory() && !entry.name.startsWith('.') && !ignored.includes(entry.name))
      .map((entry) => entry.name)
      .filter((name) => name !== BUILT && name !== SOURCE);
    expect(folders.sort()).toEqual(['bench', 'deploy', 'docs', 'scripts', 'temporal-tools', 'test']);
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

  /** Every command the image runs: compose's services built from it, the Dockerfile's CMD, package.json's bin. */
  function imageEntries(): string[] {
    const compose = parse(readFileSync(path.join(root, 'docker-compose.yml'), 'utf8'), { merge: true }) as {
      services: Record<string, { build?: string; command?: string[] }>;
    };
    const composed = Object.values(compose.services)
      .filter((service) => service.build === '.')
      .map((service) => (service.command ?? [])[1] as string);
    expect(composed.length).toBeGreaterThanOrEqual(3);
    const exported = Object.values(pkg.exports)
      .map((target) => (typeof target === 'string' ? target : target.default))
      .filter((target) => target.startsWith(`./${BUILT}/`))
      .map((target) => target.slice(2));
    return [...new Set([...composed, dockerfileCommand()[1] as string, ...Object.values(pkg.bin), ...exported])];
  }

  it("every command the image runs finds every module it imports (dist's entries from their sources)", () => {
    const entries = imageEntries();
    expect(entries).toEqual(
      expect.arrayContaining(['dist/api/server.js', 'dist/worker/main.js', 'src/cli/bin.js', 'dist/receiver/index.js']),
    );
    for (const entry of entries) {
      const source = sourceOf(entry);
      expect(existsSync(path.join(image, source)), `${entry} (${source}) is in the image`).toBe(true);
      expect(unresolvedFrom(source), entry).toEqual([]);
    }
  });

  it('every CLI command module loads from the image alone', () => {
    const commands = readdirSync(path.join(image, SOURCE, 'cli', 'commands')).filter((f) => f.endsWith('.ts'));
    expect(commands).toContain('start-all.ts');
    for (const command of commands)
      expect(unresolvedFrom(path.join(SOURCE, 'cli', 'commands', command)), command).toEqual([]);
    // And for real: Node loads the CLI and each command module (start-all is the one `start` loads on demand).
    const script = commands
      .map((command) => `require(${JSON.stringify(path.join(image, SOURCE, 'cli', 'commands', command))});`)
      .join('');
    execFileSync(process.execPath, ['-e', `require('tsx/cjs');${script}`], { cwd: image, timeout: 120_000 });
    const help = execFileSync(process.execPath, ['src/cli/bin.js', '--help'], { cwd: image, encoding: 'utf8' });
    expect(help).toContain('migrate');
  });
});
