import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.join(__dirname, '..', '..', '..');
const doc = readFileSync(path.join(ROOT, 'docs', 'performance.md'), 'utf8');
const results = readdirSync(path.join(ROOT, 'bench', 'results')).filter((f) => f.endsWith('.json'));

describe('bench/results: the files the performance docs cite, and only those', () => {
  it('holds every file the docs name', () => {
    const named = [...doc.matchAll(/([\w-]+\.json)/g)].map((m) => m[1] as string);
    expect(named.length).toBeGreaterThan(0);
    for (const file of named) expect(results, `${file} is named in docs/performance.md`).toContain(file);
  });

  it('holds no file the docs do not name, at most eight', () => {
    for (const file of results) expect(doc, `bench/results/${file} is not cited`).toContain(file);
    expect(results.length).toBeLessThanOrEqual(8);
  });

  it('keeps the baseline tables the docs quote where the table script regenerates them', () => {
    expect(doc).toContain('<!-- baseline tables: npx tsx bench/baseline-table.ts bench/results/baseline.json -->');
    expect(doc).toContain('<!-- end of baseline tables -->');
  });
});
