import { XMLParser } from 'fast-xml-parser';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import type { RunResult, ScenarioResult } from '../results.ts';
import { conformanceReports, renderConformance } from './conformance.ts';
import { renderJunit } from './junit.ts';

const counts = { requests: 10, ok: 10, failed: 0, byOutcome: { ok: 10 }, connections: 2 };
const result = (id: string, profile: string, verdict: ScenarioResult['verdict'], extra: Partial<ScenarioResult> = {}): ScenarioResult => ({
  id,
  profile,
  verdict,
  durationMs: 1234,
  assertions: verdict === 'skipped' ? [] : [{ name: 'noFailedRequests', verdict, message: `saw <${verdict}> & "more"\u0007` }],
  counts,
  ...extra,
});

const run: RunResult = {
  tool: { name: 'zerodrop', version: '0.1.0', node: 'v24.0.0' },
  provider: 'local',
  mode: 'nightly',
  implementation: { organization: 'acme', project: 'edge', version: 'v1.2.3', contact: ['@acme/gw'] },
  startedAt: '2026-11-21T20:00:00.000Z',
  durationMs: 9000,
  scenarios: [
    result('backend-delete-http', 'reference', 'pass'),
    result('backend-rollout-http', 'reference', 'skipped', { reason: 'no <rollout> here' }),
    result('backend-idle-exit', 'reference', 'inconclusive', { reason: 'load not held' }),
    result('backend-sigterm-keeps-accepting', 'reference', 'fail'),
    result('force-delete', 'reference', 'fail'),
  ],
};

describe('junit.xml', () => {
  const parse = (xml: string) =>
    new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (n) => n === 'testsuite' || n === 'testcase' }).parse(xml);

  it('has one testcase per scenario x profile: failure, error (inconclusive) and skipped, with escaped messages', () => {
    const doc = parse(renderJunit(run));
    expect(doc.testsuites).toMatchObject({ tests: '5', failures: '2', errors: '1', skipped: '1', time: '9.000' });
    const cases = doc.testsuites.testsuite[0].testcase;
    expect(cases.map((c: { name: string }) => c.name)).toEqual(run.scenarios.map((s) => `${s.id} [reference]`));
    expect(cases[0].failure).toBeUndefined();
    expect(cases[1].skipped).toEqual({ message: 'no <rollout> here' });
    expect(cases[2].error.message).toBe('inconclusive: load not held; noFailedRequests: saw <inconclusive> & "more"');
    expect(cases[3].failure.message).toBe('noFailedRequests: saw <fail> & "more"');
    expect(cases[3].failure.type).toBe('noFailedRequests');
    expect(cases[3]['system-out']).toContain('10 requests, 0 failed');
  });

  it('names the run in each testsuite\'s properties, with the Kubernetes release the cluster reported when it did', () => {
    const props = (r: RunResult) => parse(renderJunit(r)).testsuites.testsuite[0].properties.property.map((p: { name: string; value: string }) => [p.name, p.value]);
    expect(props(run)).toEqual([
      ['provider', 'local'],
      ['profile', 'reference'],
      ['zerodrop', '0.1.0'],
    ]);
    expect(props({ ...run, provider: 'netns', kubernetesVersion: 'v1.36.3' })).toEqual([
      ['provider', 'netns'],
      ['kubernetesVersion', 'v1.36.3'],
      ['profile', 'reference'],
      ['zerodrop', '0.1.0'],
    ]);
  });
});

describe('conformance.yaml', () => {
  it('is shaped like the Gateway API ConformanceReport, core and extended per drain profile, controls left out', () => {
    const [report] = conformanceReports(run);
    expect(report).toMatchObject({
      kind: 'ConformanceReport',
      date: run.startedAt,
      mode: 'nightly',
      implementation: { organization: 'acme', project: 'edge', version: 'v1.2.3', contact: ['@acme/gw'] },
    });
    expect(report?.profiles).toHaveLength(1);
    const profile = report!.profiles[0]!;
    expect(profile.name).toBe('DRAIN-BACKEND');
    // backend-delete-http and backend-idle-exit are core; rollout and slow-lb make the others extended.
    expect(profile.core).toEqual({ result: 'failure', statistics: { Failed: 1, Passed: 1, Skipped: 0 }, failedTests: ['backend-idle-exit (inconclusive)'] });
    expect(profile.extended).toEqual({
      result: 'failure',
      statistics: { Failed: 1, Passed: 0, Skipped: 1 },
      failedTests: ['backend-sigterm-keeps-accepting'],
      skippedTests: ['backend-rollout-http'],
      unsupportedFeatures: ['rollout', 'slow-lb'],
    });
    expect(profile.summary).toBe('Core tests failed with 1 test failure. Extended tests failed with 1 test failure.');
  });

  it('records the Kubernetes release the cluster reported next to the provider, and leaves it out when there is none', () => {
    const text = renderConformance({ ...run, provider: 'netns', kubernetesVersion: 'v1.37.2' });
    expect(text).toMatch(/\nprovider: netns\nkubernetesVersion: v1\.37\.2\nmode: nightly\n/);
    expect(parseAllDocuments(text)[0]!.toJS()).toMatchObject({ provider: 'netns', kubernetesVersion: 'v1.37.2' });
    expect(renderConformance(run)).not.toContain('kubernetesVersion');
  });

  it('writes one YAML document per system; statistics add up to the results', () => {
    const two: RunResult = { ...run, implementation: undefined, scenarios: [...run.scenarios, result('backend-delete-http', 'nginx', 'pass')] };
    const docs = parseAllDocuments(renderConformance(two)).map((d) => d.toJS());
    expect(docs.map((d) => d.implementation.project)).toEqual(['reference', 'nginx']);
    expect(docs[1].profiles[0].core).toEqual({ result: 'success', statistics: { Failed: 0, Passed: 1, Skipped: 0 } });
    const stats = docs[0].profiles[0];
    const total = (k: string) => stats.core.statistics[k] + stats.extended.statistics[k];
    expect(total('Passed') + total('Failed') + total('Skipped')).toBe(4); // five results, minus the control
  });
});
