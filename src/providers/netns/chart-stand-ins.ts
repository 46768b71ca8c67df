// The charts the netns cluster installs itself. It has no chart repository and no image registry:
// a chart profile runs on it only where the chart's programs are built from their Go modules and
// the chart's objects are applied from those modules' own manifests (stunner-install.ts). The
// stand-in answers for one chart at one version, the one the modules are pinned to, so a profile
// written for another release of the chart is refused with the profile that does run, never run
// against a different release than it names.

import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HelmChart, HelmProfileSpec } from '../../profiles/helm-charts.ts';
import { helmProfileSpec } from '../../profiles/helm-charts.ts';
import type { helmInstall } from '../kube/helm.ts';
import { isBuilt } from './go-module-build.ts';
import { stunnerModule, stunnerPin } from './stunner-binary.ts';
import { installStunner } from './stunner-install.ts';
import { traefikModule } from './traefik-binary.ts';
import { installTraefik, TRAEFIK_CLASSES } from './traefik-install.ts';

interface ChartStandIn {
  chart: string;
  version: string;
  /** Why it cannot install now (its programs not built), or undefined. */
  missing(): Promise<string | undefined>;
  /** Installs the chart's objects and programs as a release in `namespace` would have them. */
  install(kubectl: readonly string[], namespace: string, log: (line: string) => void): Promise<void>;
}

function standIns(): ChartStandIn[] {
  const stunner = stunnerModule();
  return [
    {
      chart: 'stunner-gateway-operator',
      // The chart's version is the operator's release (l7mp/stunner-helm: version = appVersion).
      version: stunnerPin().slice(1),
      missing: async () => ((await isBuilt(stunner)) ? undefined : `STUNner ${stunner.pin} is not built (run: npm run stunner:build, about 4 minutes once)`),
      install: (kubectl, namespace, log) => installStunner(kubectl, log, namespace),
    },
  ];
}

const standInFor = (all: readonly ChartStandIn[], chart: HelmChart): ChartStandIn | undefined => all.find((s) => s.chart === chart.chart && s.version === chart.version);

/** What a netns session knows of charts: which it installs, why others cannot run, and the install itself. */
export interface NetnsCharts {
  /** Why the netns cluster cannot run this chart profile, or undefined when it can (or it is no chart profile). */
  unsupported(profile: string): string | undefined;
  /**
   * A chart profile's helm requirement is the session's own: it never runs helm, and whether the
   * chart runs is `unsupported`'s to say (with the profile that does), not "helm not found".
   */
  installsWithoutHelm(profile: string): boolean;
  /** KubeProvider's helmInstall. */
  install: typeof helmInstall;
}

/** The netns session's charts: each run's release installed by the stand-in for its chart, into the run's namespace. */
export async function netnsCharts(kubectl: readonly string[], log: (line: string) => void): Promise<NetnsCharts> {
  const all = standIns();
  // Checked once, when the session opens: the cluster's node agents took the builds the cache held then.
  const missing = new Map(await Promise.all(all.map(async (s) => [s, await s.missing()] as const)));
  const unsupported = (profile: string): string | undefined => {
    const spec = helmProfileSpec(profile);
    if (!spec) return undefined;
    const standIn = standInFor(all, spec.chart);
    if (standIn) return missing.get(standIn);
    const runs = all.map((s) => `${s.chart} ${s.version}`).join(', ');
    return (
      `profile ${profile} installs chart ${spec.chart.chart} ${spec.chart.version ?? '(unversioned)'} with helm, and the netns cluster reaches no chart repository or image registry: ` +
      `it installs only the charts it builds from Go modules (${runs}); run this profile with --provider kind or k3s`
    );
  };
  const install = async (spec: HelmProfileSpec, opts: { namespace: string; kubeconfig: string }): Promise<() => Promise<void>> => {
    const standIn = standInFor(all, spec.chart);
    if (!standIn) throw new Error(unsupported(spec.name) ?? `no stand-in for chart ${spec.chart.chart}`);
    await installWith(standIn, kubectl, opts, log);
    // What the release put in its namespace goes with the namespace; what it shares with the
    // cluster (CRDs, cluster roles) stays, as helm leaves a chart's CRDs.
    return async () => {};
  };
  return {
    unsupported,
    installsWithoutHelm: (profile) => helmProfileSpec(profile) !== undefined,
    install,
  };
}

/** Runs the stand-in with the run's kubeconfig (not the cluster's admin one): it acts as the run does. */
async function installWith(standIn: ChartStandIn, kubectl: readonly string[], opts: { namespace: string; kubeconfig: string }, log: (line: string) => void): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-chart-'));
  try {
    const file = join(dir, 'kubeconfig');
    await writeFile(file, opts.kubeconfig, { mode: 0o600 });
    await standIn.install([...kubectl.filter((a) => !a.startsWith('--kubeconfig=')), `--kubeconfig=${file}`], opts.namespace, log);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * A Gateway API implementation the netns cluster installs itself when a run names its class
 * (`--gateway-class`): on kind or an existing cluster the class is installed before the run, but a
 * netns cluster exists only for the run, and nothing could be installed into it beforehand. Only
 * implementations whose programs build from Go modules and serve HTTP themselves qualify (Traefik);
 * any other class name is left for the run to find missing, naming the classes installed.
 */
export interface GatewayClassStandIn {
  /** Why it cannot install now (its program not built), or undefined. */
  missing(): Promise<string | undefined>;
  /** Installs the implementation and the class with the cluster's `kubectl`, once per cluster. */
  install(kubectl: readonly string[], log: (line: string) => void): Promise<void>;
}

export function gatewayClassStandIn(className: string): GatewayClassStandIn | undefined {
  if (TRAEFIK_CLASSES[className] === undefined) return undefined;
  const traefik = traefikModule();
  return {
    missing: async () => ((await isBuilt(traefik)) ? undefined : `--gateway-class ${className}: Traefik ${traefik.pin} is not built (run: npm run traefik:build, 8 to 15 minutes once)`),
    install: (kubectl, log) => installTraefik(kubectl, className, log),
  };
}
