// Parses and validates the run flags before anything starts, so that a typo costs nothing: every
// error names the flag, the value and what is allowed. The flags are the one form a run's settings
// take: `zerodrop run` passes its command line, run() and planRun() the config as flags (configArgs).

import { resolve } from 'node:path';
import { MAX_NODES } from '../providers/netns/address-plan.ts';
import { findProfile, profiles } from '../profiles/index.ts';
import { capabilitiesBeforeOpen, PROVIDER_NAMES, type ProviderName, type ProviderSettings } from '../providers/index.ts';
import { ProfileCannotCarry, type Profile } from '../profiles/profile.ts';
import { catalog, findScenario } from '../scenarios/index.ts';
import type { OptionValues } from '../model/verdict.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { UsageError } from './usage-error.ts';
import { chooseDriver } from './driver.ts';
import type { LoadDriver } from '../load/drivers.ts';
import { parseFlags } from './flags.ts';
import { K3S_IMAGES, KIND_NODE_IMAGES } from '../providers/node-images.ts';
import { controlPlanePin, netnsKubeVersionProblem } from '../providers/netns/control-plane-binary.ts';
import { optionProblem } from '../scenarios/option-kinds.ts';
import { optionsFor } from '../runner/run-matrix.ts';
import { dnsLabelProblem, kubeconfigProblem, kubeVersionProblem, reportDirProblem, reporterProblem } from './checks.ts';
import { isReporterPath, REPORTER_NAMES, type ReporterName } from '../report/reporters/reporter.ts';
import { clusterSystemSettings } from './cluster-system-args.ts';
import { RUN_FLAGS } from './run-flags.ts';
import { gatewayClassProfile } from '../scenarios/gateway-class-profile.ts';

/** The providers, as the provider registry names them (one list). */
export const PROVIDERS = PROVIDER_NAMES;

export interface RunArgs {
  provider: ProviderName;
  /** Where the cluster comes from, for kind, k3s and cluster (--kubeconfig, --context, --kube-version, --cluster-name); kubeVersion is kubeVersions' first. */
  providerSettings: ProviderSettings;
  /**
   * Every Kubernetes version given (--kube-version, repeatable or comma-separated), in order; empty
   * when none is. Several (netns only): the selection runs once on each, one cluster at a time
   * (runVersionsPlan), each named by the release it resolves to (a minor names its pinned patch).
   */
  kubeVersions: string[];
  scenarios: ScenarioDefinition[];
  profiles: Profile[];
  overrides: OptionValues;
  nightly: boolean;
  /** Where the reports go (--report-dir, config reportDir); none are written when undefined. */
  reportDir: string | undefined;
  /** Reports to write into reportDir (--reporter; default all). */
  reporters: ReporterName[];
  /** Reporter modules by absolute path (--reporter ./mine.ts), loaded before the run starts. */
  reporterModules: string[];
  /** Open the HTML report at the end (--open). */
  open: boolean;
  /** Scenario x profile pairs run at once (--workers; default 1), each on a provider of its own. */
  workers: number;
  /** Which client carries out the loads (--driver; default builtin). */
  driver: LoadDriver;
  /** Seed of the local Service balancers' programming lags (--seed): replays a run's. Random per pair when absent. */
  seed?: number;
}

/** `defined`: the profiles a config made with defineProfile, selectable by name like the built-ins. */
export function parseRunArgs(argv: string[], defined: readonly Profile[] = []): RunArgs {
  const { values } = parseFlags('run', argv, RUN_FLAGS);

  const { provider, kubeVersions, providerSettings: settings } = parseProviderArgs(values.provider, values);
  const providerSettings = { ...settings, ...clusterSystemSettings(provider, values) };

  const scenarios = scenariosNamed(values.scenario ?? []);
  // --driver narrows an unnamed selection to the scenarios it can load (src/config/driver.ts).
  const { driver, scenarios: selected } = chooseDriver(values.driver, scenarios.length > 0 ? scenarios : catalog.filter((s) => !s.control), scenarios.length > 0);

  const named = profilesNamed(values.profile ?? ['reference'], defined);
  // The class plays the gateway role as a profile of its own, so that its rows are named for it.
  const gatewayClass = providerSettings.gatewayClass;
  const chosen = gatewayClass ? [...named, gatewayClassProfile(gatewayClass.name)] : named;

  const reportDir = values['report-dir'];
  const reportDirIssue = reportDir === undefined ? undefined : reportDirProblem(reportDir);
  if (reportDirIssue !== undefined) throw new UsageError(`--report-dir ${JSON.stringify(reportDir)}: ${reportDirIssue}`);

  const reporters = (values.reporter ?? [...REPORTER_NAMES]).flatMap((r) => r.split(',')).map((name) => {
    const problem = reporterProblem(name);
    if (problem !== undefined) throw new UsageError(`--reporter ${name}: ${problem}`);
    return name;
  });

  const workers = Number(values.workers);
  if (!Number.isInteger(workers) || workers < 1 || workers > 64) {
    throw new UsageError(`--workers ${values.workers}: expected a whole number of scenarios to run at once, from 1 to 64`);
  }

  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !(/^\d+$/.test(values.seed ?? '') && seed <= 0xffff_ffff)) {
    throw new UsageError(`--seed ${values.seed}: expected a whole number from 0 to 4294967295 (a result's seed)`);
  }

  const overrides = parseOverrides(values.set ?? [], selected);
  // Checked with the values the run will take: a cluster's own defaults where its balancer picks pods
  // at random (the capability runMatrix reads from the opened session).
  const layers = { nightly: values.nightly, randomBalancer: capabilitiesBeforeOpen(provider).roundRobinServices !== true };
  checkCombinations(selected, overrides, layers);
  checkCapacity(selected, chosen, overrides, layers);

  return {
    workers,
    reporters: [...new Set(reporters.filter((r): r is ReporterName => !isReporterPath(r)))],
    reporterModules: [...new Set(reporters.filter(isReporterPath).map((r) => resolve(r)))],
    open: values.open,
    provider,
    providerSettings,
    kubeVersions,
    scenarios: selected,
    profiles: chosen,
    overrides,
    nightly: values.nightly,
    driver,
    reportDir,
    ...(seed !== undefined ? { seed } : {}),
  };
}

function parseOverrides(sets: string[], selected: readonly ScenarioDefinition[]): OptionValues {
  const overrides: OptionValues = {};
  for (const set of sets) {
    const match = /^([A-Za-z][A-Za-z0-9]*)=(.*)$/.exec(set);
    if (!match) throw new UsageError(`--set ${set}: expected key=value, for example --set graceSeconds=30`);
    const [, key = '', raw = ''] = match;
    const known = selected.filter((s) => key in s.defaults);
    if (known.length === 0) {
      const keys = [...new Set(selected.flatMap((s) => Object.keys(s.defaults)))].sort();
      throw new UsageError(`--set ${key}: no selected scenario has this option; options: ${keys.join(', ')}`);
    }
    const value = raw.trim() === '' ? NaN : Number(raw);
    const problem = optionProblem(key, value);
    if (problem !== undefined) {
      const ids = known.map((s) => s.id);
      const which = ids.length > 3 ? `${ids.slice(0, 3).join(', ')} and ${ids.length - 3} more` : ids.join(', ');
      throw new UsageError(`--set ${key}=${raw}: ${problem} (scenario${ids.length > 1 ? 's' : ''} ${which})`);
    }
    overrides[key] = value;
  }
  return overrides;
}

/** Which of a scenario's option layers a run takes (optionsFor). */
interface OptionLayers {
  nightly: boolean;
  randomBalancer?: boolean;
}

/** Each selected scenario's options as it would run with them, held to its own constraints between options. */
function checkCombinations(selected: readonly ScenarioDefinition[], overrides: OptionValues, { nightly, randomBalancer }: OptionLayers): void {
  for (const def of selected) {
    const problem = def.checkOptions?.(optionsFor(def, overrides, nightly, { randomBalancer }));
    if (problem === undefined) continue;
    const given = Object.entries(overrides).filter(([key]) => key in def.defaults).map(([key, value]) => `--set ${key}=${value}`);
    throw new UsageError(`${given.length > 0 ? given.join(' ') : nightly ? '--nightly' : 'defaults'}: ${problem} (scenario ${def.id})`);
  }
}

/**
 * Each selected scenario x profile built as it would run: options asking more than a profile can
 * carry (ProfileCannotCarry: coturn's relay ports, nginx's worker_connections, the harness's open
 * files) are bad usage, refused before anything starts, never a verdict. Building runs nothing.
 */
export function checkCapacity(selected: readonly ScenarioDefinition[], profiles: readonly Profile[], overrides: OptionValues, { nightly, randomBalancer = false }: OptionLayers): void {
  for (const def of selected) {
    for (const profile of profiles) {
      try {
        def.build(profile, optionsFor(def, overrides, nightly, { randomBalancer }));
      } catch (error) {
        if (!(error instanceof ProfileCannotCarry)) continue; // the runner reports it, or skips the pair
        const given = Object.entries(overrides).filter(([key]) => key in def.defaults).map(([key, value]) => `--set ${key}=${value}`);
        throw new UsageError(`${given.length > 0 ? given.join(' ') : nightly ? '--nightly' : 'defaults'}: ${error.message} (scenario ${def.id}, profile ${profile.name})`);
      }
    }
  }
}

/**
 * The versions --kube-version names (repeated, or comma-separated), each checked as one is. Several
 * run one after another on netns, which builds each pinned release; a netns version is named by the
 * release it resolves to (`1.36` is `v1.36.3`), so that its report directory says which ran, and one
 * given twice is refused.
 */
function kubeVersionsOf(provider: ProviderName, given: readonly string[] | undefined): string[] {
  if (given === undefined) return [];
  const versions = given.flatMap((v) => v.split(',')).map((v) => v.trim());
  if (versions.length <= 1) return versions; // checked with the other provider settings
  if (provider !== 'netns') throw new UsageError(`--kube-version ${versions.join(',')}: several versions run only on --provider netns; ${provider} takes one`);
  const seen = new Map<string, string>();
  return versions.map((v) => {
    if (v === '') throw new UsageError('--kube-version: must not be empty');
    const problem = netnsKubeVersionProblem(v);
    if (problem !== undefined) throw new UsageError(`--kube-version ${v}: ${problem}`);
    const release = controlPlanePin(v)!.version;
    const before = seen.get(release);
    if (before !== undefined) throw new UsageError(`--kube-version ${v}: ${before === v ? 'given twice' : `names ${release}, as ${before} does`}; give each version once`);
    seen.set(release, v);
    return release;
  });
}

/** The flags that say where a provider's cluster comes from (PROVIDER_FLAGS but --provider), as parsed. */
export interface ProviderFlagValues {
  kubeconfig?: string;
  context?: string;
  'kube-version'?: string[];
  'cluster-name'?: string;
  nodes?: string;
}

/** --kubeconfig/--context belong to --provider cluster, --kube-version to kind, k3s and netns, --cluster-name to kind, --nodes to netns. */
export const PROVIDER_SETTING_FLAGS: Record<ProviderName, readonly (keyof ProviderFlagValues)[]> = {
  local: [],
  netns: ['nodes', 'kube-version'],
  kind: ['kube-version', 'cluster-name'],
  k3s: ['kube-version'],
  cluster: ['kubeconfig', 'context'],
};

/**
 * --provider and the flags of its cluster, checked as `zerodrop run` and `zerodrop campaign` both
 * take them: an unknown provider, a flag it does not use, or a value it cannot take is a UsageError
 * naming the flag. kubeVersions is every version given; providerSettings holds the first.
 */
export function parseProviderArgs(name: string, values: ProviderFlagValues): { provider: ProviderName; providerSettings: ProviderSettings; kubeVersions: string[] } {
  if (!(PROVIDERS as readonly string[]).includes(name)) {
    throw new UsageError(`--provider ${name}: unknown provider; use one of ${PROVIDERS.join(', ')}`);
  }
  const provider = name as ProviderName;
  const kubeVersions = kubeVersionsOf(provider, values['kube-version']);
  return { provider, kubeVersions, providerSettings: providerSettingsOf(provider, { ...values, 'kube-version': kubeVersions[0] }) };
}

function providerSettingsOf(
  name: ProviderName,
  values: { kubeconfig?: string; context?: string; 'kube-version'?: string; 'cluster-name'?: string; nodes?: string },
): ProviderSettings {
  for (const flag of ['kubeconfig', 'context', 'kube-version', 'cluster-name', 'nodes'] as const) {
    if (values[flag] !== undefined && !PROVIDER_SETTING_FLAGS[name].includes(flag)) {
      throw new UsageError(`--${flag}: not used by --provider ${name}`);
    }
    if (values[flag] !== undefined && values[flag].trim() === '') throw new UsageError(`--${flag}: must not be empty`);
  }
  const kubeVersion = values['kube-version'];
  const checks = [
    ['kube-version', (v: string) => (name === 'netns' ? netnsKubeVersionProblem(v) : kubeVersionProblem(v, name === 'k3s' ? { provider: 'k3s', table: K3S_IMAGES } : { provider: 'kind', table: KIND_NODE_IMAGES }))],
    ['cluster-name', dnsLabelProblem],
    ['nodes', (v: string) => (/^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= MAX_NODES ? undefined : `expected a whole number of nodes from 1 to ${MAX_NODES}`)],
    ['kubeconfig', (v: string) => kubeconfigProblem(v)],
  ] as const;
  for (const [flag, check] of checks) {
    const value = values[flag];
    const problem = value === undefined ? undefined : check(value);
    if (problem !== undefined) throw new UsageError(`--${flag} ${value}: ${problem}`);
  }
  return {
    name,
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(kubeVersion !== undefined ? { kubeVersion } : {}),
    ...(values['cluster-name'] !== undefined ? { clusterName: values['cluster-name'] } : {}),
    ...(values.nodes !== undefined ? { nodes: Number(values.nodes) } : {}),
  };
}

/** The scenarios `--scenario` names, in the order given; an unknown id is bad usage naming the known ones. */
export function scenariosNamed(ids: readonly string[]): ScenarioDefinition[] {
  return ids.map((id) => {
    const def = findScenario(id);
    if (!def) throw new UsageError(`--scenario ${id}: unknown scenario; known: ${catalog.map((s) => s.id).join(', ')}`);
    return def;
  });
}

/** The profiles `--profile` names, in the order given; an unknown name is bad usage naming the known ones. */
export function profilesNamed(names: readonly string[], defined: readonly Profile[] = []): Profile[] {
  return names.map((name) => {
    const profile = defined.find((p) => p.name === name) ?? findProfile(name);
    if (!profile) throw new UsageError(`--profile ${name}: unknown profile; known: ${[...defined, ...profiles].map((p) => p.name).join(', ')}`);
    return profile;
  });
}
