// The charts a netns cluster installs. It reaches no chart repository and no image registry, so a
// chart profile runs on it in two ways only:
// - a chart from a directory, installed by helm built from its Go module (helm-binary.ts) into the
//   run's namespace, exactly as on kind: its images must be ones the node agent runs
//   (node-agent/images.ts);
// - a repository chart whose programs are built from their Go modules and whose objects are applied
//   from those modules' own manifests (stunner-install.ts): a stand-in, for one chart at one
//   version, the one the modules are pinned to, so a profile written for another release of the
//   chart is refused with the profile that does run, never run against a different release than
//   it names.

import { writeFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import type { HelmChart } from '../../profiles/helm-charts.ts';
import { helmProfileSpec } from '../../profiles/helm-charts.ts';
import { helmCli, helmInstall } from '../kube/helm.ts';
import { isBuilt } from './go-module-build.ts';
import { helmModule } from './helm-binary.ts';
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

/** A chart in a directory or .tgz (defineHelmProfile made its path absolute): nothing to fetch. */
const fromDirectory = (chart: HelmChart): boolean => isAbsolute(chart.chart);

/** The helm build command and its cost, for the skip reason when the cache has none. */
export const HELM_BUILD_HINT = 'run: npm run helm:build, about 2.5 minutes once';

/** What a netns session knows of charts: which it installs, why others cannot run, and the install itself. */
export interface NetnsCharts {
  /** Why the netns cluster cannot run this chart profile, or undefined when it can (or it is no chart profile). */
  unsupported(profile: string): string | undefined;
  /**
   * A chart profile's helm requirement is the session's own: it runs its own helm build or a
   * stand-in, never the helm on PATH, and whether the chart runs is `unsupported`'s to say (with
   * what to build, or the profile that does run), not "helm not found on PATH".
   */
  answersForHelm(profile: string): boolean;
  /** KubeProvider's helmInstall. */
  install: typeof helmInstall;
}

/**
 * The netns session's charts: each run's release, into the run's namespace, installed by the helm
 * build (`helm`, the cache's build when the session opens; none when it has none) for a chart from
 * a directory, or by the stand-in for its chart.
 */
export async function netnsCharts(kubectl: readonly string[], log: (line: string) => void, helm?: string): Promise<NetnsCharts> {
  const all = standIns();
  // Checked once, when the session opens: the cluster's node agents took the builds the cache held then.
  const missing = new Map(await Promise.all(all.map(async (s) => [s, await s.missing()] as const)));
  const unsupported = (profile: string): string | undefined => {
    const spec = helmProfileSpec(profile);
    if (!spec) return undefined;
    const standIn = standInFor(all, spec.chart);
    if (standIn) return missing.get(standIn);
    if (fromDirectory(spec.chart)) return helm ? undefined : `profile ${profile} installs its chart from ${spec.chart.chart} with helm ${helmModule().pin}, which is not built (${HELM_BUILD_HINT})`;
    const runs = all.map((s) => `${s.chart} ${s.version}`).join(', ');
    return (
      `profile ${profile} installs chart ${spec.chart.chart} ${spec.chart.version ?? '(unversioned)'} from ${spec.chart.repo ?? 'its registry'} with helm, and the netns cluster reaches no chart repository or image registry: ` +
      `it installs charts from a directory, and of the repositories' charts only those it builds from Go modules (${runs}); run this profile with --provider kind or k3s`
    );
  };
  const install: typeof helmInstall = async (spec, opts) => {
    const standIn = standInFor(all, spec.chart);
    if (!standIn) {
      if (!fromDirectory(spec.chart) || !helm) throw new Error(unsupported(spec.name) ?? `no way to install chart ${spec.chart.chart}`);
      return helmInstall(spec, opts, helmCli(helm).run);
    }
    await installWith(standIn, kubectl, opts, log);
    // What the release put in its namespace goes with the namespace; what it shares with the
    // cluster (CRDs, cluster roles) stays, as helm leaves a chart's CRDs.
    return async () => {};
  };
  return {
    unsupported,
    answersForHelm: (profile) => helmProfileSpec(profile) !== undefined,
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
