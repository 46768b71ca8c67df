// Which provider runs a matrix. A cluster provider holds one cluster for the whole matrix (a
// `ProviderSession`, opened once) and gives each scenario a fresh KubeProvider in its own namespace;
// the local provider needs no session. Prerequisites are checked before anything is created.

import { randomBytes } from 'node:crypto';
import type { Recorder } from '../observe/recorder.ts';
import { ensureKindCluster, PUBLISHED_NODE_PORTS } from './kind/kind.ts';
import { startK3s } from './k3s/k3s.ts';
import { loadClusterConfig } from './cluster/cluster.ts';
import { KubeClient } from './kube/client.ts';
import { KubeProvider, type Exposure } from './kube/kube-provider.ts';
import { dockerMissing, kindMissing, kubeconfigMissing } from './kube/prerequisites.ts';
import { LocalProvider } from './local/local-provider.ts';
import type { Provider } from './provider.ts';
import { namespaceFor } from './kube/manifests.ts';
import type { LeftoverTracker } from '../state/run-record.ts';

export const PROVIDER_NAMES = ['local', 'kind', 'k3s', 'cluster'] as const;
export type ProviderName = (typeof PROVIDER_NAMES)[number];

export interface ProviderSettings {
  name: ProviderName;
  /** cluster: the kubeconfig file (default $KUBECONFIG or ~/.kube/config). */
  kubeconfig?: string;
  /** cluster: the context to use (default: the kubeconfig's current context). */
  context?: string;
  /** kind, k3s: Kubernetes minor version of the nodes, e.g. 1.36. */
  kubeVersion?: string;
  /** kind: cluster name to reuse or create (default zerodrop). */
  clusterName?: string;
}

/** Every missing prerequisite of the provider, one line each with its install hint; empty when ready. */
export async function missingPrerequisites(settings: ProviderSettings): Promise<string[]> {
  const missing: (string | undefined)[] = [];
  switch (settings.name) {
    case 'local':
      break;
    case 'kind':
      missing.push(kindMissing(), await dockerMissing());
      break;
    case 'k3s':
      missing.push(await dockerMissing());
      break;
    case 'cluster':
      missing.push(kubeconfigMissing(settings.kubeconfig));
      break;
  }
  return missing.filter((m): m is string => m !== undefined);
}

/** A cluster (or none, for local) held for a whole run; each scenario gets its own provider from it. */
export interface ProviderSession extends AsyncDisposable {
  readonly name: ProviderName;
  create(ctx: { recorder: Recorder; runId?: string; cwd: string }): Provider;
}

/** `tracker`: the run's state record (src/state/run-record.ts), for `zerodrop clean` after a crash. */
export function localSession(tracker?: LeftoverTracker): ProviderSession {
  return {
    name: 'local',
    create: ({ recorder, runId, cwd }) => new LocalProvider({ recorder, runId: runId ?? newRunId(), cwd, ...(tracker ? { tracker } : {}) }),
    [Symbol.asyncDispose]: async () => {},
  };
}

/** A session on a cluster the caller already has a KubeConfig for (the kind suites' shared cluster). */
export function kubeSession(
  name: 'kind' | 'k3s' | 'cluster',
  client: KubeClient,
  exposure: Exposure,
  opts: { allowNodeOperations: boolean; multiNode: boolean; udp?: boolean; onDispose?: () => Promise<void>; tracker?: LeftoverTracker },
): ProviderSession {
  return {
    name,
    create: ({ recorder, runId = newRunId(), cwd }) => {
      opts.tracker?.namespaceCreated(namespaceFor(runId));
      return new KubeProvider({
        name,
        client,
        recorder,
        runId,
        cwd,
        exposure,
        capabilities: { multiNode: opts.multiNode, udp: opts.udp ?? true, nodeDrain: opts.multiNode && opts.allowNodeOperations },
        allowNodeOperations: opts.allowNodeOperations,
        // An existing cluster (`cluster`) is touched only inside the run's namespace.
        clusterScopedObjects: name !== 'cluster',
      });
    },
    [Symbol.asyncDispose]: async () => {
      await opts.onDispose?.();
    },
  };
}

/** Opens the provider's cluster (creating or reusing it). Call `missingPrerequisites` first. */
export async function openSession(settings: ProviderSettings, log: (line: string) => void = () => {}, tracker?: LeftoverTracker): Promise<ProviderSession> {
  const tracking = tracker ? { tracker } : {};
  switch (settings.name) {
    case 'local':
      return localSession(tracker);
    case 'kind': {
      const cluster = await ensureKindCluster({
        ...(settings.clusterName ? { name: settings.clusterName } : {}),
        ...(settings.kubeVersion ? { kubeVersion: settings.kubeVersion } : {}),
        log,
        ...tracking,
      });
      return kubeSession('kind', new KubeClient(cluster.kubeConfig()), { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] }, {
        allowNodeOperations: cluster.created,
        multiNode: true,
        onDispose: () => cluster.delete(),
        ...tracking,
      });
    }
    case 'k3s': {
      const cluster = await startK3s(settings.kubeVersion ? { kubeVersion: settings.kubeVersion } : {});
      return kubeSession('k3s', new KubeClient(cluster.kubeConfig()), cluster.exposure, {
        allowNodeOperations: true,
        multiNode: false,
        // The container publishes its NodePorts for TCP only.
        udp: false,
        ...tracking,
        onDispose: async () => {
          await cluster[Symbol.asyncDispose]();
        },
      });
    }
    case 'cluster': {
      const kc = loadClusterConfig({
        ...(settings.kubeconfig ? { kubeconfig: settings.kubeconfig } : {}),
        ...(settings.context ? { context: settings.context } : {}),
      });
      return kubeSession('cluster', new KubeClient(kc), { kind: 'loadBalancer' }, { allowNodeOperations: false, multiNode: true, ...tracking });
    }
  }
}

export function newRunId(): string {
  return randomBytes(4).toString('hex');
}
