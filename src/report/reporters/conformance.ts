// conformance.yaml, shaped like the Gateway API ConformanceReport
// (https://gateway-api.sigs.k8s.io/concepts/conformance/, GEP-1709 "Conformance Profiles"): one
// YAML document per system under test (zerodrop profile), with `implementation`, `date`, `mode` and
// conformance `profiles`, each with `core` and `extended` results, statistics, failed and skipped
// tests. zerodrop's conformance profiles are the drain roles: DRAIN-BACKEND and DRAIN-GATEWAY.
// Control scenarios are left out: they fail by design.

import { stringify } from 'yaml';
import { findScenario } from '../../scenarios/index.ts';
import type { RunResult, ScenarioResult } from '../results.ts';
import { REPORTER_FILES, type FileReporter } from './reporter.ts';

/** Features every drain-capable system is expected to have; a scenario needing any other is Extended. */
export const CORE_FEATURES: ReadonlySet<string> = new Set<string>(['http', 'http-keepalive', 'http-no-keepalive', 'backend', 'gateway', 'idle']);

export interface Statistics {
  Failed: number;
  Passed: number;
  Skipped: number;
}

export interface ConformanceResult {
  result: 'success' | 'partial' | 'failure';
  statistics: Statistics;
  failedTests?: string[];
  skippedTests?: string[];
  supportedFeatures?: string[];
  unsupportedFeatures?: string[];
}

export interface ConformanceProfile {
  name: string;
  core: ConformanceResult;
  extended?: ConformanceResult;
  summary: string;
}

export interface ConformanceReport {
  apiVersion: 'zerodrop.dev/v1alpha1';
  kind: 'ConformanceReport';
  date: string;
  zerodropVersion: string;
  provider: string;
  /** The release the cluster's API server reported at /version (results.json's); absent when it did not say, or locally. */
  kubernetesVersion?: string;
  mode: string;
  implementation: { organization: string; project: string; url?: string; version?: string; contact: string[] };
  profiles: ConformanceProfile[];
}

function levelOf(r: ScenarioResult): 'core' | 'extended' {
  const def = findScenario(r.id);
  return def && def.features.some((f) => !CORE_FEATURES.has(f)) ? 'extended' : 'core';
}

function resultOf(results: readonly ScenarioResult[], extended: boolean): ConformanceResult {
  // Inconclusive is not a pass: it counts as Failed and is listed with the failed tests.
  const failed = results.filter((r) => r.verdict === 'fail' || r.verdict === 'inconclusive');
  const skipped = results.filter((r) => r.verdict === 'skipped');
  const passed = results.filter((r) => r.verdict === 'pass');
  const out: ConformanceResult = {
    result: failed.length > 0 ? 'failure' : skipped.length > 0 ? 'partial' : 'success',
    statistics: { Failed: failed.length, Passed: passed.length, Skipped: skipped.length },
  };
  if (failed.length > 0) out.failedTests = failed.map((r) => (r.verdict === 'inconclusive' ? `${r.id} (inconclusive)` : r.id));
  if (skipped.length > 0) out.skippedTests = skipped.map((r) => r.id);
  if (extended) {
    const features = (rs: readonly ScenarioResult[]) =>
      new Set(rs.flatMap((r) => findScenario(r.id)?.features ?? []).filter((f) => !CORE_FEATURES.has(f)));
    const supported = features(passed);
    const unsupported = [...features([...failed, ...skipped])].filter((f) => !supported.has(f));
    if (supported.size > 0) out.supportedFeatures = [...supported].sort();
    if (unsupported.length > 0) out.unsupportedFeatures = unsupported.sort();
  }
  return out;
}

function summaryOf(core: ConformanceResult, extended: ConformanceResult | undefined): string {
  const say = (what: string, r: ConformanceResult) => {
    const s = r.statistics;
    if (r.result === 'success') return `${what} tests succeeded.`;
    if (r.result === 'partial') return `${what} tests partially succeeded with ${s.Skipped} test skip${s.Skipped === 1 ? '' : 's'}.`;
    return `${what} tests failed with ${s.Failed} test failure${s.Failed === 1 ? '' : 's'}.`;
  };
  return [say('Core', core), extended ? say('Extended', extended) : ''].filter(Boolean).join(' ');
}

export function conformanceReports(run: RunResult): ConformanceReport[] {
  const systems = [...new Set(run.scenarios.map((s) => s.profile))];
  return systems.map((system) => {
    const results = run.scenarios.filter((s) => s.profile === system && !findScenario(s.id)?.control);
    const roles = [...new Set(results.map((r) => findScenario(r.id)?.role ?? 'backend'))].sort();
    const profiles = roles.map((role): ConformanceProfile => {
      const ofRole = results.filter((r) => (findScenario(r.id)?.role ?? 'backend') === role);
      const core = resultOf(ofRole.filter((r) => levelOf(r) === 'core'), false);
      const ext = ofRole.filter((r) => levelOf(r) === 'extended');
      const extended = ext.length > 0 ? resultOf(ext, true) : undefined;
      return { name: `DRAIN-${role.toUpperCase()}`, core, ...(extended ? { extended } : {}), summary: summaryOf(core, extended) };
    });
    const impl = run.implementation ?? {};
    return {
      apiVersion: 'zerodrop.dev/v1alpha1',
      kind: 'ConformanceReport',
      date: run.startedAt,
      zerodropVersion: run.tool.version,
      provider: run.provider,
      ...(run.kubernetesVersion !== undefined ? { kubernetesVersion: run.kubernetesVersion } : {}),
      mode: run.mode ?? 'default',
      implementation: {
        organization: impl.organization ?? 'unknown',
        // A run of several systems names each by its profile; a single-system run may name itself.
        project: systems.length === 1 && impl.project !== undefined ? impl.project : system,
        ...(impl.url !== undefined ? { url: impl.url } : {}),
        ...(impl.version !== undefined ? { version: impl.version } : {}),
        contact: impl.contact ?? [],
      },
      profiles,
    };
  });
}

export function renderConformance(run: RunResult): string {
  return conformanceReports(run)
    .map((doc) => stringify(doc, { lineWidth: 0 }))
    .join('---\n');
}

export const conformanceReporter: FileReporter = {
  name: 'conformance',
  ...REPORTER_FILES.conformance,
  render: renderConformance,
};
