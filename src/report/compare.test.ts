// Runs side by side: a column per run headed by the release its API server reported, a row per
// scenario x profile, the rows whose verdicts differ marked.

import { mkdtemp, readFile, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compare, comparisonHtml, comparisonMarkdown, readRuns, writeComparison, type ComparedRun } from './compare.ts';
import type { RunResult, ScenarioResult } from './results.ts';

const counts = { requests: 100, ok: 100, failed: 0, byOutcome: { ok: 100 }, connections: 10 };
const result = (id: string, profile: string, verdict: ScenarioResult['verdict']): ScenarioResult => ({ id, profile, verdict, durationMs: 1000, assertions: [], counts });
const run = (kubernetesVersion: string | undefined, scenarios: ScenarioResult[]): RunResult => ({
  tool: { name: 'zerodrop', version: '0.1.0', node: 'v24.0.0' },
  provider: 'netns',
  ...(kubernetesVersion ? { kubernetesVersion } : {}),
  startedAt: '2026-11-26T00:00:00.000Z',
  durationMs: 1000,
  scenarios,
});

describe('zerodrop report --compare', () => {
  const runs: ComparedRun[] = [
    { dir: 'reports/v1.35', run: run('v1.35.4', [result('backend-delete-http', 'reference', 'pass'), result('backend-delete-http', 'mutant-exit-on-sigterm', 'fail')]) },
    { dir: 'reports/v1.37', run: run('v1.37.2', [result('backend-delete-http', 'reference', 'inconclusive'), result('gateway-delete-http', 'reference', 'pass')]) },
  ];

  it('has a column per run, headed by its Kubernetes version, and a row per scenario x profile', () => {
    const c = compare(runs);
    expect(c.columns).toEqual(['Kubernetes v1.35.4', 'Kubernetes v1.37.2']);
    expect(c.rows.map((r) => [r.scenario, r.profile, r.cells.map((cell) => cell?.verdict)])).toEqual([
      ['backend-delete-http', 'reference', ['pass', 'inconclusive']],
      ['backend-delete-http', 'mutant-exit-on-sigterm', ['fail', undefined]],
      ['gateway-delete-http', 'reference', [undefined, 'pass']],
    ]);
  });

  it('names a run without a version by its provider and directory, and two runs of one version by their directories', () => {
    expect(compare([{ dir: 'out/local-a', run: { ...run(undefined, []), provider: 'local' } }, ...runs]).columns[0]).toBe('local (local-a)');
    expect(compare([runs[0]!, { ...runs[0]!, dir: 'reports/again' }]).columns).toEqual(['Kubernetes v1.35.4 (v1.35)', 'Kubernetes v1.35.4 (again)']);
  });

  it('writes markdown with what was expected of a mutant, the differing rows marked', () => {
    const md = comparisonMarkdown(compare(runs));
    expect(md.split('\n').slice(0, 5)).toEqual([
      '| scenario | profile | Kubernetes v1.35.4 | Kubernetes v1.37.2 |',
      '| --- | --- | --- | --- |',
      '| backend-delete-http | reference | pass | inconclusive | differs',
      '| backend-delete-http | mutant-exit-on-sigterm | fail (expected to fail) | — | differs',
      '| gateway-delete-http | reference | — | pass | differs',
    ]);
    expect(md).toContain('3 of 3 rows differ between runs.');
    expect(comparisonMarkdown(compare([runs[0]!, { ...runs[0]!, dir: 'b' }]))).toContain('Every run gave the same verdicts.');
  });

  it('writes a self-contained page', () => {
    const html = comparisonHtml(compare(runs));
    expect(html).toContain('<th>Kubernetes v1.35.4</th><th>Kubernetes v1.37.2</th>');
    expect(html).toContain('<tr class="differs"><th>backend-delete-http</th><td>reference</td>');
    expect(html).not.toMatch(/<script|https?:\/\//);
  });

  const scratch = mkdtemp(join(tmpdir(), 'zerodrop-compare-'));
  afterAll(async () => rm(await scratch, { recursive: true, force: true }));

  it('reads each directory\'s results.json and writes compare.html and compare.md', async () => {
    const dir = await scratch;
    for (const [i, r] of runs.entries()) {
      await mkdir(join(dir, `run${i}`));
      await writeFile(join(dir, `run${i}`, 'results.json'), JSON.stringify(r.run));
    }
    const read = await readRuns([join(dir, 'run0'), join(dir, 'run1')]);
    expect(read.map((r) => r.run.kubernetesVersion)).toEqual(['v1.35.4', 'v1.37.2']);
    const written = await writeComparison(read, join(dir, 'out'));
    expect(await readFile(written.markdown, 'utf8')).toContain('| Kubernetes v1.35.4 | Kubernetes v1.37.2 |');
    await expect(readRuns([join(dir, 'none')])).rejects.toThrow(/none\/results\.json: not found$/);
    await writeFile(join(dir, 'run0', 'results.json'), '{}');
    await expect(readRuns([join(dir, 'run0')])).rejects.toThrow(/not a zerodrop results\.json/);
  });
});
