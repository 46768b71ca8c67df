// The cluster providers' sessions (kind, k3s, an existing cluster), apart from index.ts so that a
// local run never loads the Kubernetes client, the manifest models or testcontainers.

import { randomInt } from 'node:crypto';
import { ensureKindCluster, PUBLISHED_NODE_PORTS } from './kind/kind.ts';
import { startK3s } from './k3s/k3s.ts';
import { loadClusterConfig } from './cluster/cluster.ts';
import { KubeClient, serverVersion } from './kube/client.ts';
import { KubeProvider, type Exposure, type KubeProviderOptions } from './kube/kube-provider.ts';
import { namespaceFor } from './kube/manifests.ts';
import { keepsContainerStopSignal, kindKeepsContainerStopSignal } from './kube/stop-signal-probe.ts';
import { newRunId, type ProviderName, type ProviderSession, type ProviderSettings } from './index.ts';

/** The providers whose pods run on a Kubernetes API server. */
export type ClusterProviderName = Exclude<ProviderName, 'local'>;
import type { LeftoverTracker } from '../state/run-record.ts';
import type { ClusterSystemSettings } from './cluster-system.ts';
import type { NetnsCharts } from './netns/chart-stand-ins.ts';
import type { NetnsCluster } from './netns/cluster.ts';
import type { Requirement } from '../profiles/profile.ts';
import type { ProviderCapabilities } from './provider.ts';
import { MESHES } from '../profiles/meshes.ts';
import { gatewayClassProfileName } from '../scenarios/gateway-class-profile.ts';

/** A session on a cluster the caller already has a KubeConfig for (the kind suites' shared cluster). */
export function kubeSession(
  name: ClusterProviderName,
  client: KubeClient,
  exposure: Exposure,
  opts: {
    allowNodeOperations: boolean;
    multiNode: boolean;
    udp?: boolean;
    /** Whether the cluster keeps a container's lifecycle.stopSignal (stop-signal.ts). */
    containerStopSignals: boolean;
    onDispose?: () => Promise<void>;
    tracker?: LeftoverTracker;
    /** --gateway-class and the run namespace's labels and annotations. */
    system?: ClusterSystemSettings;
    /** netns: the charts the cluster installs, with its own helm build or in place of helm (netns/chart-stand-ins.ts). */
    charts?: NetnsCharts;
    /** netns: the host routes to the pod ranges, so the harness reaches pods directly (Provider.podAddress). */
    podNetworkReachable?: boolean;
    /** netns: which pod kube-proxy sends each connection to (KubeProviderOptions.routeWatch). */
    routeWatch?: KubeProviderOptions['routeWatch'];
    /** netns: every node's kube-proxy rules, read (KubeProviderOptions.kubeProxyProgrammed). */
    kubeProxyProgrammed?: KubeProviderOptions['kubeProxyProgrammed'];
    /** The API server's /version gitVersion (serverVersion). */
    kubernetesVersion?: string | undefined;
    /** netns: the cluster's own count of the scenarios it has exposed (NodePortRotation). */
    rotation?: NodePortRotation;
  },
): ProviderSession {
  const gatewayClass = opts.system?.gatewayClass;
  const classProfile = gatewayClass ? gatewayClassProfileName(gatewayClass.name) : undefined;
  const capabilities: ProviderCapabilities = { multiNode: opts.multiNode, udp: opts.udp ?? true, nodeDrain: opts.multiNode && opts.allowNodeOperations, containerStopSignals: opts.containerStopSignals, meshes: true, ...(gatewayClass ? { routeChanges: 'gateway-api' as const } : {}) };
  const rotation = opts.rotation ?? newNodePortRotation();
  return {
    name,
    capabilities,
    ...(opts.kubernetesVersion ? { kubernetesVersion: opts.kubernetesVersion } : {}),
    // With --gateway-class the class's dataplane is the gateway of the run (its own profile, named
    // for the class); the other profiles play the backends.
    unsupported: (scenario, profile) => {
      const chart = opts.charts?.unsupported(profile.name);
      if (chart) return chart;
      if (!gatewayClass) return undefined;
      if (profile.name === classProfile && scenario.role !== 'gateway') return `GatewayClass ${gatewayClass.name} plays the gateway role only; backend scenarios run with the other profiles`;
      if (profile.name !== classProfile && scenario.role === 'gateway') return `--gateway-class ${gatewayClass.name}: the gateway in this run is the class's dataplane (profile ${classProfile}); profile ${profile.name} is not measured as a gateway`;
      return undefined;
    },
    ...(opts.charts ? { fulfils: (requirement: Requirement, profile: { name: string }) => requirement.binary === 'helm' && opts.charts!.answersForHelm(profile.name) } : {}),
    create: ({ recorder, runId = newRunId(), cwd, profile }) => {
      const mesh = profile === undefined ? undefined : MESHES[profile];
      opts.tracker?.namespaceCreated(namespaceFor(runId));
      return new KubeProvider({
        name,
        client,
        recorder,
        runId,
        cwd,
        exposure: rotatedExposure(exposure, rotation.scenarios++),
        capabilities,
        allowNodeOperations: opts.allowNodeOperations,
        // An existing cluster (`cluster`) is touched only inside the run's namespace.
        clusterScopedObjects: name !== 'cluster',
        ...(opts.system?.namespaceLabels ? { namespaceLabels: opts.system.namespaceLabels } : {}),
        ...(opts.system?.namespaceAnnotations ? { namespaceAnnotations: opts.system.namespaceAnnotations } : {}),
        ...(mesh ? { mesh } : {}),
        ...(gatewayClass && profile === classProfile ? { gatewayClass } : {}),
        ...(opts.charts ? { helmInstall: opts.charts.install } : {}),
        ...(opts.podNetworkReachable ? { podNetworkReachable: true } : {}),
        ...(opts.routeWatch ? { routeWatch: opts.routeWatch } : {}),
        ...(opts.kubeProxyProgrammed ? { kubeProxyProgrammed: opts.kubeProxyProgrammed } : {}),
      });
    },
    [Symbol.asyncDispose]: async () => {
      await opts.onDispose?.();
    },
  };
}

/** How far the NodePorts a scenario's Services take move on from the scenario before. */
const PORT_ROTATION = 4;

/**
 * The published NodePorts in the order the `nth` scenario's Services take them, rotated by
 * PORT_ROTATION a scenario. A connection the harness opens to the NodePort an earlier scenario's
 * Service had can match a conntrack entry that scenario left: a SYN that went to a pod already gone
 * leaves a SYN_SENT entry for 120 s, which kube-proxy does not clear for TCP
 * (https://github.com/kubernetes/kubernetes/issues/101607), and the host, one client to one NodePort,
 * comes round to the same source port within a few thousand connections: the new SYN then follows
 * the old DNAT to the gone pod and is refused as unreachable or lost, a failure of no system under
 * test. The last port stays where it is: a GatewayClass's Service holds it (traefik-install.ts).
 */
export function rotatedExposure(exposure: Exposure, nth: number): Exposure {
  if (exposure.kind !== 'nodePort' || exposure.ports.length < 3) return exposure;
  const rotating = exposure.ports.slice(0, -1);
  const offset = (nth * PORT_ROTATION) % rotating.length;
  return { ...exposure, ports: [...rotating.slice(offset), ...rotating.slice(0, offset), exposure.ports[exposure.ports.length - 1]!] };
}

/**
 * How many scenarios have taken their NodePorts on a cluster: rotatedExposure's `nth`. The entries it
 * steers clear of are the cluster's (its nodes' conntrack tables) and outlive a session: a test file
 * opens one session per scenario on the same cluster, and a kind cluster is reused run after run.
 * So a netns cluster keeps one count for its whole life (netnsSession), and a session on any other
 * cluster, whose earlier sessions it cannot know, starts at a random scenario of the rotation rather
 * than always at the first, where the last session began too.
 */
export interface NodePortRotation {
  scenarios: number;
}

function newNodePortRotation(): NodePortRotation {
  return { scenarios: randomInt(1_000_000) };
}

/** Opens a cluster provider's cluster (creating or reusing it). */
export async function openClusterSession(
  settings: ProviderSettings & { name: ClusterProviderName },
  log: (line: string) => void,
  tracker?: LeftoverTracker,
  /** Aborts a cluster that is still starting (netns: what was made is removed). */
  signal?: AbortSignal,
): Promise<ProviderSession> {
  const tracking = tracker ? { tracker } : {};
  switch (settings.name) {
    case 'netns': {
      const { startNetnsCluster } = await import('./netns/cluster.ts');
      const cluster = await startNetnsCluster({
        ...(settings.nodes !== undefined ? { nodes: settings.nodes } : {}),
        ...(settings.kubeVersion !== undefined ? { kubeVersion: settings.kubeVersion } : {}),
        ...(process.env['ZERODROP_NETNS_BLOCK'] ? { block: process.env['ZERODROP_NETNS_BLOCK'] } : {}),
        log,
        ...(signal ? { signal } : {}),
      });
      return netnsSession(cluster, log, {
        system: settings,
        onDispose: async () => {
          await cluster[Symbol.asyncDispose]();
        },
      });
    }
    case 'kind': {
      const cluster = await ensureKindCluster({
        ...(settings.clusterName ? { name: settings.clusterName } : {}),
        ...(settings.kubeVersion ? { kubeVersion: settings.kubeVersion } : {}),
        log,
        ...tracking,
      });
      const client = new KubeClient(cluster.kubeConfig());
      return kubeSession('kind', client, { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] }, {
        allowNodeOperations: cluster.created,
        multiNode: true,
        containerStopSignals: await kindKeepsContainerStopSignal(cluster, client, log),
        kubernetesVersion: await serverVersion(client),
        onDispose: () => cluster.delete(),
        ...tracking,
        system: settings,
      });
    }
    case 'k3s': {
      const cluster = await startK3s(settings.kubeVersion ? { kubeVersion: settings.kubeVersion } : {});
      const client = new KubeClient(cluster.kubeConfig());
      return kubeSession('k3s', client, cluster.exposure, {
        allowNodeOperations: true,
        multiNode: false,
        containerStopSignals: await keepsContainerStopSignal(client, log),
        kubernetesVersion: await serverVersion(client),
        // The container publishes its NodePorts for TCP only.
        udp: false,
        ...tracking,
        system: settings,
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
      const client = new KubeClient(kc);
      return kubeSession('cluster', client, { kind: 'loadBalancer' }, {
        allowNodeOperations: false,
        multiNode: true,
        containerStopSignals: await keepsContainerStopSignal(client, log),
        kubernetesVersion: await serverVersion(client),
        ...tracking,
        system: settings,
      });
    }
  }
}



/**
 * A session on a netns cluster: the charts it installs itself and the GatewayClass a run names, when
 * the cluster can install its implementation (chart-stand-ins.ts), and whether it
 * keeps lifecycle.stopSignal, both asked once. No run-record tracking of the run's namespaces: they
 * live and die with the cluster, which has a record of its own that `zerodrop clean` reads
 * (netns/leftovers.ts). `onDispose` (the CLI's: remove the cluster) runs when the session ends.
 */
export async function netnsSession(
  cluster: NetnsCluster,
  log: (line: string) => void,
  opts: { system?: ClusterSystemSettings; onDispose?: () => Promise<void> } = {},
): Promise<ProviderSession> {
  const { netnsExposure, netnsRouteWatch } = await import('./netns/cluster.ts');
  const { netnsCharts, gatewayClassStandIn } = await import('./netns/chart-stand-ins.ts');
  const { cachedHelm } = await import('./netns/helm-binary.ts');
  const { kubeProxyProgrammed } = await import('./netns/kube-proxy-rules.ts');
  const client = new KubeClient(cluster.kubeConfig());
  const className = opts.system?.gatewayClass?.name;
  try {
    await (className === undefined ? undefined : gatewayClassStandIn(className))?.install(cluster.kubectl, log);
    return kubeSession('netns', client, netnsExposure(cluster), {
      rotation: netnsNodePortRotation(cluster),
      // Never built by a run (minutes of CPU beside a measurement): `npm run helm:build` does that.
      charts: await netnsCharts(cluster.kubectl, log, await cachedHelm()),
      podNetworkReachable: true,
      ...netnsRouteWatch(cluster, log),
      kubeProxyProgrammed: (services) => kubeProxyProgrammed(cluster.nodes.map((n) => n.netns), services),
      allowNodeOperations: true,
      multiNode: cluster.nodes.length > 1,
      containerStopSignals: await keepsContainerStopSignal(client, log),
      kubernetesVersion: cluster.version,
      ...(opts.system ? { system: opts.system } : {}),
      ...(opts.onDispose ? { onDispose: opts.onDispose } : {}),
    });
  } catch (error) {
    // No session holds the cluster yet, so nothing else would remove it.
    await opts.onDispose?.();
    throw error;
  }
}

const rotations = new WeakMap<NetnsCluster, NodePortRotation>();

/** A netns cluster's one count, shared by every session on it (a suite opens one per scenario). */
export function netnsNodePortRotation(cluster: NetnsCluster): NodePortRotation {
  let rotation = rotations.get(cluster);
  if (!rotation) rotations.set(cluster, (rotation = { scenarios: 0 }));
  return rotation;
}
