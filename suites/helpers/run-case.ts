// Runs one scenario x profile through the same path as `zerodrop run`, for the suites.

import { expect } from 'vitest';
import { openRun, planRun } from '../../src/api/run.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { collectResult } from './collect.ts';
import type { OptionValues } from '../../src/model/verdict.ts';
import type { Profile } from '../../src/profiles/profile.ts';

/**
 * Runs the case; when the harness itself says the run could not be measured (inconclusive through
 * `harnessResponsive` or `loadHeld` alone, e.g. a GC pause of the test process), runs the whole case
 * again, at most twice. This repeats a run that gave no verdict, never one that gave a verdict: a
 * fail is returned as it is, and nothing in the measuring path retries anything.
 */
export async function runCase(scenarioId: string, profile: string | Profile, overrides: OptionValues = {}): Promise<ScenarioResult> {
  return repeatUnmeasured(() => runCaseOnce(scenarioId, profile, overrides));
}

/** Runs `once` again, at most twice more, while its result is unmeasured (see runCase). */
export async function repeatUnmeasured(once: () => Promise<ScenarioResult>): Promise<ScenarioResult> {
  for (let attempt = 1; ; attempt++) {
    const result = await once();
    if (attempt === UNMEASURED_RUNS_ALLOWED || !unmeasured(result)) return result;
    console.warn(`${result.id} [${result.profile}] gave no verdict (harness): running it again\n${describeResult(result)}`);
  }
}

const UNMEASURED_RUNS_ALLOWED = 3;
const VALIDITY_CHECKS = new Set(['harnessResponsive', 'loadHeld']);

/** Inconclusive through the harness's own validity checks alone: the run gave no verdict (not a false one). */
export function unmeasured(r: ScenarioResult): boolean {
  if (r.verdict !== 'inconclusive' || r.assertions.some((a) => a.verdict === 'fail')) return false;
  const inconclusive = r.assertions.filter((a) => a.verdict === 'inconclusive');
  return inconclusive.length > 0 && inconclusive.every((a) => VALIDITY_CHECKS.has(a.name));
}

/**
 * Through the public API, as `zerodrop run` and `zerodrop/vitest` go: the run has its state record,
 * so pods left by a killed test worker are found by `zerodrop clean`.
 */
async function runCaseOnce(scenarioId: string, profile: string | Profile, overrides: OptionValues): Promise<ScenarioResult> {
  // A profile object is one defined as a team would in its config (defineProfile), not in the catalog.
  await using open = await openRun(planRun({ provider: 'local', scenarios: [scenarioId], profiles: [profile], set: overrides }));
  const run = await open.runPairs(undefined, { signal: AbortSignal.timeout(110_000) });
  const [result] = run.scenarios;
  if (!result) throw new Error('no result');
  await collectResult(result);
  return result;
}

/** Explains a result in the test output when an expectation about it does not hold. */
/**
 * The result as a failed expectation prints it: the assertions that passed first, the others last,
 * then the verdict again, so that a log cut to its head and tail (a CI excerpt) still shows what
 * decided it.
 */
export function describeResult(r: Pick<ScenarioResult, 'id' | 'profile' | 'verdict' | 'reason' | 'assertions'>): string {
  const heading = `${r.id} [${r.profile}] ${r.verdict}${r.reason ? ` (${r.reason})` : ''}`;
  const passed = r.assertions.filter((a) => a.verdict === 'pass');
  const deciding = r.assertions.filter((a) => a.verdict !== 'pass');
  const lines = [heading, ...[...passed, ...deciding].map((a) => `  ${a.verdict} ${a.name}: ${a.message}`)];
  if (deciding.length > 0) lines.push(`${heading}: ${deciding.map((a) => `${a.name} ${a.verdict}`).join(', ')}`);
  return lines.join('\n');
}

export function expectPass(r: ScenarioResult): void {
  expect(r.verdict, describeResult(r)).toBe('pass');
}

/** The scenario failed, and each named assertion is among the failed ones. */
export function expectFailedBy(r: ScenarioResult, ...names: string[]): void {
  expect(r.verdict, describeResult(r)).toBe('fail');
  const failed = r.assertions.filter((a) => a.verdict === 'fail').map((a) => a.name);
  for (const name of names) expect(failed, describeResult(r)).toContain(name);
}
