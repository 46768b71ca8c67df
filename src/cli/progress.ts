// Plain progress lines: one per phase change and one per result. (A redrawing TTY view can build on
// the same callbacks.)

import type { ScenarioResult } from '../report/results.ts';
import type { ScenarioProgress } from '../runner/run-scenario.ts';

const ICON: Record<ScenarioResult['verdict'], string> = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE', skipped: 'SKIP' };

export function printProgress(p: ScenarioProgress, out: (line: string) => void = console.log): void {
  out(`  ${p.scenario} [${p.profile}] ${p.phase}${p.message ? `: ${p.message}` : ''}`);
}

export function printResult(r: ScenarioResult, out: (line: string) => void = console.log): void {
  const seconds = (r.durationMs / 1000).toFixed(1);
  const counts = r.counts.requests > 0 ? `, ${r.counts.requests} requests, ${r.counts.failed} failed` : '';
  out(`${ICON[r.verdict]} ${r.id} [${r.profile}] ${seconds} s${counts}`);
  if (r.reason) out(`    ${r.reason}`);
  for (const a of r.assertions) {
    if (a.verdict !== 'pass') out(`    ${a.verdict}: ${a.name}: ${a.message}`);
  }
}

export function printSummary(results: readonly ScenarioResult[], out: (line: string) => void = console.log): void {
  const by = (v: ScenarioResult['verdict']) => results.filter((r) => r.verdict === v).length;
  out(`\n${by('pass')} passed, ${by('fail')} failed, ${by('inconclusive')} inconclusive, ${by('skipped')} skipped`);
}
