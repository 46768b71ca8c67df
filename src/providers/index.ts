// Which provider runs a matrix. A cluster provider holds one cluster for the whole matrix (a
// `ProviderSession`, opened once) and gives each scenario a fresh KubeProvider in its own namespace;
// the local provider needs no session. Prerequisites are checked before anything is created.
//
// The cluster providers are imported only when one is chosen (kube-session.ts): the Kubernetes client,
// the manifest models and testcontainers hold about 50 MB of heap, and a local run that carries them
// pays for it in the full garbage collections of its first scenario (pauses of 50-250 ms, which made
// that scenario inconclusive through harnessResponsive).

import { randomBytes } from 'node:crypto';
import type { Recorder } from '../observe/recorder.ts';
import { dockerMissing, kindMissing, kindVersionProblem, kubeconfigMissing } from './kube/prerequisites.ts';
import { LOCAL_CAPABILITIES, LocalProvider } from './local/local-provider.ts';
import type { Provider, ProviderCapabilities } from './provider.ts';
import type { LeftoverTracker } from '../state/run-record.ts';
import type { ClusterSystemSettings } from './cluster-system.ts';
import type { Requirement } from '../profiles/profile.ts';

export const PROVIDER_NAMES = ['local', 'netns', 'kind', 'k3s', 'cluster'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** ClusterSystemSettings: --gateway-class and the run namespace's labels and annotations (cluster-system.ts). */
export interface ProviderSettings extends ClusterSystemSettings {
  name: ProviderName;
  /** cluster: the kubeconfig file (default $KUBECONFIG or ~/.kube/config). */
  kubeconfig?: string;
  /** cluster: the context to use (default: the kubeconfig's current context). */
  context?: string;
  /** kind, k3s: Kubernetes minor version of the nodes, e.g. 1.36; netns: a release kubernetes/ pins (v1.36.3, or its minor). */
  kubeVersion?: string;
  /** kind: cluster name to reuse or create (default zerodrop). */
  clusterName?: string;
  /** netns: number of nodes (default 2). */
  nodes?: number;
}

/** Every missing prerequisite of the provider, one line each with its install hint; empty when ready. */
export async function missingPrerequisites(settings: ProviderSettings, warn: (line: string) => void = () => {}): Promise<string[]> {
  const missing: (string | undefined)[] = [];
  switch (settings.name) {
    case 'local':
      break;
    case 'kind': {
      const absent = kindMissing();
      missing.push(absent, await dockerMissing());
      if (!absent) {
        const version = await kindVersionProblem();
        missing.push(version.refuse);
        if (version.warn) warn(version.warn);
      }
      break;
    }
    case 'k3s':
      missing.push(await dockerMissing());
      break;
    case 'cluster':
      missing.push(kubeconfigMissing(settings.kubeconfig));
      break;
    case 'netns': {
      const { netnsMissing } = await import('./netns/prerequisites.ts');
      missing.push(...(await netnsMissing(settings.kubeVersion !== undefined ? { kubeVersion: settings.kubeVersion } : {})));
      const className = settings.gatewayClass?.name;
      if (className !== undefined) {
        const { gatewayClassStandIn } = await import('./netns/chart-stand-ins.ts');
        missing.push(await gatewayClassStandIn(className)?.missing());
      }
      break;
    }
  }
  return missing.filter((m): m is string => m !== undefined);
}

/** A cluster (or none, for local) held for a whole run; each scenario gets its own provider from it. */
export interface ProviderSession extends AsyncDisposable {
  readonly name: ProviderName;
  /** A cluster's release as its API server reports it at /version (gitVersion), for results.json. */
  readonly kubernetesVersion?: string;
  /** `profile`: the system under test's profile name (a mesh profile changes what a cluster provider deploys). */
  create(ctx: { recorder: Recorder; runId?: string; cwd: string; profile?: string; seed?: number }): Provider;
  /** What every provider it creates carries, known before one is created: a scenario's features are checked against it. */
  readonly capabilities: ProviderCapabilities;
  /** Why this session cannot run a scenario of this role for this profile (e.g. a --gateway-class it cannot serve yet), or undefined. */
  unsupported?(scenario: { id: string; role: 'backend' | 'gateway' }, profile: { name: string }): string | undefined;
  /** Whether the session itself does what the profile's requirement is for (netns: installs the chart helm would). */
  fulfils?(requirement: Requirement, profile: { name: string }): boolean;
}

/**
 * What a provider's sessions carry that its name alone tells, before one is opened (flags and config
 * are checked before any cluster starts): the local provider's capabilities; nothing yet for a
 * cluster, whose session says at its opening.
 */
export function capabilitiesBeforeOpen(name: ProviderName): Partial<ProviderCapabilities> {
  return name === 'local' ? LOCAL_CAPABILITIES : {};
}

/** `tracker`: the run's state record (src/state/run-record.ts), for `zerodrop clean` after a crash. */
export function localSession(tracker?: LeftoverTracker): ProviderSession {
  return {
    name: 'local',
    capabilities: LOCAL_CAPABILITIES,
    create: ({ recorder, runId, cwd, seed }) =>
      new LocalProvider({ recorder, runId: runId ?? newRunId(), cwd, ...(tracker ? { tracker } : {}), ...(seed !== undefined ? { seed } : {}) }),
    [Symbol.asyncDispose]: async () => {},
  };
}

/** Opens the provider's cluster (creating or reusing it). Call `missingPrerequisites` first. */
export async function openSession(settings: ProviderSettings, log: (line: string) => void = () => {}, tracker?: LeftoverTracker, signal?: AbortSignal): Promise<ProviderSession> {
  if (settings.name === 'local') return localSession(tracker);
  const { openClusterSession } = await import('./kube-session.ts');
  return openClusterSession({ ...settings, name: settings.name }, log, tracker, signal);
}

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}
