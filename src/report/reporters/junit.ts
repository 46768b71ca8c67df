// JUnit XML, the format every CI test reporter reads (GitLab, Jenkins, GitHub Actions reporters,
// Buildkite): one <testsuite> per profile, one <testcase> per scenario x profile. A failed
// assertion is a <failure>, an inconclusive run an <error> (the run could not measure: not a
// verdict on the system, but not a pass either), a skipped one <skipped> with its reason.
// Schema followed: https://github.com/testmoapp/junitxml (the de-facto superset CI tools accept).

import type { AssertionResult } from '../../model/verdict.ts';
import { describeCounts, type RunResult, type ScenarioResult } from '../results.ts';
import { REPORTER_FILES, type FileReporter } from './reporter.ts';

/** Escapes text for XML content and attributes; drops characters XML 1.0 cannot carry. */
export function xml(text: string): string {
  return text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&apos;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function assertionLines(assertions: readonly AssertionResult[]): string {
  return assertions.map((a) => `${a.verdict.toUpperCase()} ${a.name}: ${a.message}`).join('\n');
}

function testcase(r: ScenarioResult): string {
  const attrs = `name="${xml(`${r.id} [${r.profile}]`)}" classname="${xml(`zerodrop.${r.profile}`)}" time="${seconds(r.durationMs)}"`;
  const failed = r.assertions.filter((a) => a.verdict === 'fail');
  const inconclusive = r.assertions.filter((a) => a.verdict === 'inconclusive');
  let inner = '';
  if (r.verdict === 'skipped') {
    inner = `<skipped message="${xml(r.reason ?? 'skipped')}"/>`;
  } else if (r.verdict === 'fail') {
    const headline = failed.map((a) => `${a.name}: ${a.message}`).join('; ') || (r.reason ?? 'failed');
    inner = `<failure message="${xml(headline)}" type="${xml(failed.map((a) => a.name).join(',') || 'fail')}">${xml(assertionLines(r.assertions))}</failure>`;
  } else if (r.verdict === 'inconclusive') {
    const headline = [r.reason, ...inconclusive.map((a) => `${a.name}: ${a.message}`)].filter(Boolean).join('; ') || 'inconclusive';
    inner = `<error message="${xml(`inconclusive: ${headline}`)}" type="inconclusive">${xml(assertionLines(r.assertions))}</error>`;
  }
  const described = describeCounts(r.counts);
  const counts = described ? `${described}\n` : '';
  const out = r.verdict === 'skipped' ? '' : `<system-out>${xml(counts + assertionLines(r.assertions))}</system-out>`;
  return `    <testcase ${attrs}>${inner}${out}</testcase>`;
}

function totals(results: readonly ScenarioResult[]) {
  return {
    tests: results.length,
    failures: results.filter((r) => r.verdict === 'fail').length,
    errors: results.filter((r) => r.verdict === 'inconclusive').length,
    skipped: results.filter((r) => r.verdict === 'skipped').length,
    time: seconds(results.reduce((a, r) => a + r.durationMs, 0)),
  };
}

/** The run's metadata on each testsuite: the Kubernetes release the cluster's API server reported, when it did. */
function properties(run: RunResult, profile: string): string {
  const props: [string, string][] = [
    ['provider', run.provider],
    ...(run.kubernetesVersion !== undefined ? [['kubernetesVersion', run.kubernetesVersion] as [string, string]] : []),
    ['profile', profile],
    ['zerodrop', run.tool.version],
  ];
  return props.map(([name, value]) => `<property name="${xml(name)}" value="${xml(value)}"/>`).join('');
}

export function renderJunit(run: RunResult): string {
  const profiles = [...new Set(run.scenarios.map((s) => s.profile))];
  const all = totals(run.scenarios);
  const suites = profiles.map((profile) => {
    const results = run.scenarios.filter((s) => s.profile === profile);
    const t = totals(results);
    return (
      `  <testsuite name="${xml(`zerodrop ${profile}`)}" tests="${t.tests}" failures="${t.failures}" errors="${t.errors}" skipped="${t.skipped}" time="${t.time}" timestamp="${xml(run.startedAt)}">\n` +
      `    <properties>${properties(run, profile)}</properties>\n` +
      `${results.map(testcase).join('\n')}\n  </testsuite>`
    );
  });
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<testsuites name="zerodrop" tests="${all.tests}" failures="${all.failures}" errors="${all.errors}" skipped="${all.skipped}" time="${seconds(run.durationMs)}" timestamp="${xml(run.startedAt)}">\n` +
    `${suites.join('\n')}\n</testsuites>\n`
  );
}

export const junitReporter: FileReporter = {
  name: 'junit',
  ...REPORTER_FILES.junit,
  render: renderJunit,
};
