import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { plotResults } from '../../../bench/plot';

const stat = (median: number, min: number, max: number) => ({ median, min, max });

describe('bench/plot: a result file as an SVG', () => {
  it('draws one bar per phase at its median, with a whisker from min to max', () => {
    const svg = plotResults({
      startedAt: '2026-01-02T00:00:00.000Z',
      machine: { cores: 2, cpuModel: 'Test CPU' },
      server: { kind: 'temporal server start-dev' },
      settings: { reps: 3, phaseMs: 30_000 },
      steady: {
        'plain-post': { median: { summary: { perSecond: stat(7000, 6000, 8000) } } },
        'bare-load': { median: { summary: { perSecond: stat(60, 50, 70) } } },
        'engine-load/all': { median: { summary: { perSecond: stat(120, 100, 140) } } },
        'engine-idle/all': { median: { summary: { p50Ms: stat(3.2, 3, 3.7), p99Ms: stat(9.7, 8.3, 10.1) } } },
      },
    });
    expect(svg.startsWith('<svg')).toBe(true);
    expect(svg).toContain('dev server (SQLite): 2 cores (Test CPU), 3 repetitions of 30 s');
    expect(svg).toContain('plain signed POST loop: 7000/s, not drawn');
    expect(svg).toContain('>bare Temporal<');
    expect(svg).toContain('>engine<');
    expect(svg).toContain('>120<');
    expect(svg).toContain('>3.2<');
    expect(svg).toContain('>9.7<');
    expect(svg).not.toMatch(/NaN|undefined|Infinity/);
    // Under load the axis ends at 150 over 440 px from x = 250: the bar of 120/s is 352 px long, its whisker runs
    // from 100/s to 140/s.
    const afterLabel = svg.slice(svg.indexOf('>engine<'));
    expect(afterLabel).toMatch(/^[^]*?<rect x="250" y="[\d.]+" width="352"/);
    expect(afterLabel).toMatch(/<line x1="543\.3+\d*" y1="([\d.]+)" x2="660\.6+\d*" y2="\1"/);
  });

  it('draws every result file the docs cite', () => {
    for (const file of ['baseline.json']) {
      const result = JSON.parse(readFileSync(path.join(__dirname, '..', '..', '..', 'bench', 'results', file), 'utf8'));
      const svg = plotResults(result);
      expect(svg).toContain('>engine, fan-out<');
      expect(svg).not.toMatch(/NaN|undefined|Infinity/);
    }
  });
});
