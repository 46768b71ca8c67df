// Parses and validates the command line before anything starts, so that a typo costs nothing:
// every error names the flag, the value and what is allowed.

import { parseArgs } from 'node:util';
import { findProfile, profiles } from '../profiles/index.ts';
import type { ProviderName, ProviderSettings } from '../providers/index.ts';
import type { Profile } from '../profiles/profile.ts';
import { catalog, findScenario } from '../scenarios/index.ts';
import type { OptionValues, ScenarioDefinition } from '../scenarios/definition.ts';
import { UsageError } from './usage-error.ts';
import { REPORTER_NAMES, type ReporterName } from '../report/reporters/reporter.ts';

export const PROVIDERS = ['local', 'kind', 'k3s', 'cluster'] as const;

export interface RunArgs {
  provider: ProviderName;
  /** Where the cluster comes from, for kind, k3s and cluster (--kubeconfig, --context, --kube-version, --cluster-name). */
  providerSettings: ProviderSettings;
  scenarios: ScenarioDefinition[];
  profiles: Profile[];
  overrides: OptionValues;
  nightly: boolean;
  reportDir: string;
  /** Reports to write into reportDir (--reporter; default all). */
  reporters: ReporterName[];
  /** Open the HTML report at the end (--open). */
  open: boolean;
}

export function parseRunArgs(argv: string[]): RunArgs {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        provider: { type: 'string', default: 'local' },
        profile: { type: 'string', multiple: true },
        scenario: { type: 'string', multiple: true },
        'report-dir': { type: 'string', default: 'reports' },
        set: { type: 'string', multiple: true },
        nightly: { type: 'boolean', default: false },
        kubeconfig: { type: 'string' },
        context: { type: 'string' },
        'kube-version': { type: 'string' },
        'cluster-name': { type: 'string' },
        // Read before parsing (see config.ts); listed so that strict parsing accepts it.
        config: { type: 'string' },
        reporter: { type: 'string', multiple: true },
        open: { type: 'boolean', default: false },
      },
    }));
  } catch (error) {
    throw new UsageError(`${(error as Error).message}. See \`zerodrop run --help\`.`);
  }

  const provider = values.provider;
  if (!(PROVIDERS as readonly string[]).includes(provider)) {
    throw new UsageError(`--provider ${provider}: unknown provider; use one of ${PROVIDERS.join(', ')}`);
  }
  const providerSettings = providerSettingsOf(provider as ProviderName, values);

  const scenarios = (values.scenario ?? []).map((id) => {
    const def = findScenario(id);
    if (!def) throw new UsageError(`--scenario ${id}: unknown scenario; known: ${catalog.map((s) => s.id).join(', ')}`);
    return def;
  });
  const selected = scenarios.length > 0 ? scenarios : catalog.filter((s) => !s.control);

  const chosen = (values.profile ?? ['reference']).map((name) => {
    const profile = findProfile(name);
    if (!profile) throw new UsageError(`--profile ${name}: unknown profile; known: ${profiles.map((p) => p.name).join(', ')}`);
    return profile;
  });

  const reportDir = values['report-dir'];
  if (reportDir.trim() === '') throw new UsageError('--report-dir: must not be empty');

  const reporters = (values.reporter ?? [...REPORTER_NAMES]).flatMap((r) => r.split(',')).map((name) => {
    if (!(REPORTER_NAMES as readonly string[]).includes(name)) {
      throw new UsageError(`--reporter ${name}: unknown reporter; use one or more of ${REPORTER_NAMES.join(', ')}`);
    }
    return name as ReporterName;
  });

  return {
    reporters: [...new Set(reporters)],
    open: values.open,
    provider: provider as ProviderName,
    providerSettings,
    scenarios: selected,
    profiles: chosen,
    overrides: parseOverrides(values.set ?? [], selected),
    nightly: values.nightly,
    reportDir,
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
    const value = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(value) || value < 0) {
      throw new UsageError(`--set ${key}=${raw}: must be a non-negative number`);
    }
    overrides[key] = value;
  }
  return overrides;
}

/** --kubeconfig/--context belong to --provider cluster, --kube-version to kind and k3s, --cluster-name to kind. */
function providerSettingsOf(
  name: ProviderName,
  values: { kubeconfig?: string; context?: string; 'kube-version'?: string; 'cluster-name'?: string },
): ProviderSettings {
  const allowed: Record<ProviderName, string[]> = {
    local: [],
    kind: ['kube-version', 'cluster-name'],
    k3s: ['kube-version'],
    cluster: ['kubeconfig', 'context'],
  };
  for (const flag of ['kubeconfig', 'context', 'kube-version', 'cluster-name'] as const) {
    if (values[flag] !== undefined && !allowed[name].includes(flag)) {
      throw new UsageError(`--${flag}: not used by --provider ${name}`);
    }
    if (values[flag] !== undefined && values[flag].trim() === '') throw new UsageError(`--${flag}: must not be empty`);
  }
  const kubeVersion = values['kube-version'];
  if (kubeVersion !== undefined && !/^v?\d+\.\d+(\.\d+)?$/.test(kubeVersion)) {
    throw new UsageError(`--kube-version ${kubeVersion}: expected a Kubernetes version such as 1.36`);
  }
  return {
    name,
    ...(values.kubeconfig !== undefined ? { kubeconfig: values.kubeconfig } : {}),
    ...(values.context !== undefined ? { context: values.context } : {}),
    ...(kubeVersion !== undefined ? { kubeVersion } : {}),
    ...(values['cluster-name'] !== undefined ? { clusterName: values['cluster-name'] } : {}),
  };
}
