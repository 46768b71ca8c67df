// kind clusters through the kind CLI (https://kind.sigs.k8s.io/docs/user/configuration/): a
// generated config with worker nodes and extraPortMappings that publish a block of NodePorts on
// 127.0.0.1, the node image chosen per Kubernetes minor version, reuse of an existing cluster by
// name, and deletion only of a cluster this process created.

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { execa } from 'execa';
import { stringify } from 'yaml';
import type { LeftoverTracker } from '../../state/run-record.ts';
import { KIND_NODE_IMAGES, DEFAULT_KUBE_VERSION, KIND_VERSION } from '../node-images.ts';

export { KIND_NODE_IMAGES, DEFAULT_KUBE_VERSION, KIND_VERSION };
export const DEFAULT_CLUSTER_NAME = 'zerodrop';
/**
 * Every node of a cluster zerodrop creates carries this label (kind's per-node `labels`,
 * https://kind.sigs.k8s.io/docs/user/configuration/#extra-labels): with the run's state record it
 * lets `zerodrop clean` tell a crashed run's cluster from one someone else made under that name.
 */
export const CREATED_BY_LABEL = { key: 'zerodrop.dev/created-by', value: 'zerodrop' } as const;

/**
 * NodePorts published to the host, one per Service port a topology may need (host port = node port).
 * They sit in the static band of the NodePort range (KEP-3668): the API server hands out ports for
 * Services that ask for none from the upper part of the range first, and only then from the lower
 * band of min(max(16, size/32), 128) ports (calculateRangeOffset in kubernetes/kubernetes
 * pkg/registry/core/service/portallocator/allocator.go): 86 ports, 30000-30085, in the default
 * 30000-32767 range. Ports above that band (the former 30800-30807) could already be held by any
 * Service of the cluster that asked for a random NodePort. Another Service that chose one of these
 * explicitly is still possible: KubeProvider.deploy says which port and how to free it.
 */
export const PUBLISHED_NODE_PORTS: readonly { nodePort: number; hostPort: number }[] = Array.from({ length: 8 }, (_, i) => ({
  nodePort: 30_040 + i,
  hostPort: 30_040 + i,
}));

/** The static band of the default NodePort range 30000-32767 (KEP-3668; see PUBLISHED_NODE_PORTS). */
export const STATIC_NODE_PORT_BAND = { first: 30_000, last: 30_000 + Math.min(Math.max(16, Math.floor((32_767 - 30_000 + 1) / 32)), 128) - 1 } as const;

export function nodeImageFor(kubeVersion: string): string {
  const minor = /^v?(\d+\.\d+)/.exec(kubeVersion)?.[1];
  const image = minor ? KIND_NODE_IMAGES[minor] : undefined;
  if (!image) throw new Error(`no kind node image for Kubernetes ${kubeVersion}; known: ${Object.keys(KIND_NODE_IMAGES).join(', ')}`);
  return image;
}

export interface KindConfigOptions {
  workers: number;
  ports?: readonly { nodePort: number; hostPort: number }[];
}

/** The kind Cluster config: one control plane that publishes the NodePorts, and `workers` workers. */
export function kindConfig(opts: KindConfigOptions): string {
  const ports = opts.ports ?? PUBLISHED_NODE_PORTS;
  const config = {
    kind: 'Cluster',
    apiVersion: 'kind.x-k8s.io/v1alpha4',
    // Container stop signals (KEP-4960, alpha since 1.33): lets a pod state its stop signal, so that
    // a system image's own STOPSIGNAL (nginx: SIGQUIT) does not decide how a profile stops.
    featureGates: { ContainerStopSignals: true },
    nodes: [
      {
        role: 'control-plane',
        labels: { [CREATED_BY_LABEL.key]: CREATED_BY_LABEL.value },
        // kube-proxy answers a NodePort on every node; publishing it from one node is enough.
        // TCP and UDP both: a Service port of either protocol can take any published NodePort.
        extraPortMappings: ports.flatMap((p) =>
          (['TCP', 'UDP'] as const).map((protocol) => ({ containerPort: p.nodePort, hostPort: p.hostPort, listenAddress: '127.0.0.1', protocol })),
        ),
      },
      ...Array.from({ length: opts.workers }, () => ({ role: 'worker', labels: { [CREATED_BY_LABEL.key]: CREATED_BY_LABEL.value } })),
    ],
  };
  return stringify(config);
}

export interface KindCluster extends AsyncDisposable {
  name: string;
  /** True when this process created the cluster: only then is it deleted. */
  created: boolean;
  kubeconfig: string;
  kubeConfig(): KubeConfig;
  delete(): Promise<void>;
}

/**
 * One name a line on stdout; with none, kind says "No kind clusters found." on stderr
 * (pkg/cmd/kind/get/clusters). That line is dropped should a kind print it on stdout: it is no name.
 */
export async function kindClusters(): Promise<string[]> {
  const { stdout } = await execa('kind', ['get', 'clusters'], { timeout: 30_000 });
  return stdout.split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('No kind clusters'));
}

/** Reuses the cluster `name` when it exists, else creates it (and will delete it on dispose). */
export async function ensureKindCluster(
  opts: { name?: string; kubeVersion?: string; workers?: number; log?: (line: string) => void; tracker?: LeftoverTracker } = {},
): Promise<KindCluster> {
  const name = opts.name ?? DEFAULT_CLUSTER_NAME;
  let created = false;
  if (!(await kindClusters()).includes(name)) {
    const image = nodeImageFor(opts.kubeVersion ?? DEFAULT_KUBE_VERSION);
    // Recorded before it exists: a crash during `kind create` leaves a cluster `clean` must find.
    opts.tracker?.kindClusterCreating(name);
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-kind-'));
    opts.tracker?.tempDirCreated(dir);
    try {
      const file = join(dir, 'kind.yaml');
      await writeFile(file, kindConfig({ workers: opts.workers ?? 2 }));
      opts.log?.(`creating kind cluster ${name} (${image})`);
      await execa('kind', ['create', 'cluster', '--name', name, '--config', file, '--image', image, '--wait', '180s'], { timeout: 600_000 });
      created = true;
    } finally {
      await rm(dir, { recursive: true, force: true });
      opts.tracker?.tempDirRemoved(dir);
    }
  } else {
    opts.log?.(`reusing kind cluster ${name} (its NodePorts must be published as zerodrop's config does: ${PUBLISHED_NODE_PORTS[0]?.hostPort}-${PUBLISHED_NODE_PORTS.at(-1)?.hostPort})`);
  }
  const { stdout: kubeconfig } = await execa('kind', ['get', 'kubeconfig', '--name', name], { timeout: 30_000 });
  let deleted = false;
  const remove = async () => {
    if (!created || deleted) return;
    deleted = true;
    await execa('kind', ['delete', 'cluster', '--name', name], { timeout: 300_000 });
    opts.tracker?.kindClusterDeleted(name);
  };
  return {
    name,
    created,
    kubeconfig,
    kubeConfig: () => {
      const kc = new KubeConfig();
      kc.loadFromString(kubeconfig);
      return kc;
    },
    delete: remove,
    [Symbol.asyncDispose]: remove,
  };
}
