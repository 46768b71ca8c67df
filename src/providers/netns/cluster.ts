// A real Kubernetes cluster on this machine, without Docker: upstream's etcd, kube-apiserver,
// kube-controller-manager and kube-scheduler in the control plane's network namespace; on each node
// (a network namespace of its own) upstream's kube-proxy in nftables mode and zerodrop's node agent,
// which does for the node's pods what the kubelet does (node-agent/). Every process runs in one of
// the cluster's namespaces, so the cluster's teardown, and `zerodrop clean` after a killed run, is:
// kill every process in them, delete them, delete the bridge (leftovers.ts).
//
// Needs root (namespaces, veths, nftables) and the programs (control-plane-binary.ts).

import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { siblingModule } from '../../paths.ts';
import { KubeClient, serverVersion } from '../kube/client.ts';
import type { Exposure, KubeProviderOptions } from '../kube/kube-provider.ts';
import { onPath } from '../../profiles/requirements.ts';
import { watchRoutedConnections } from './conntrack-watch.ts';
import { PUBLISHED_NODE_PORTS, STATIC_NODE_PORT_BAND } from '../kind/kind.ts';
import type { AddressPlan } from './address-plan.ts';
import { adminKubeconfig, makeCertificates, type ClusterCertificates } from './certificates.ts';
import { cachedPrograms } from './go-module-build.ts';
import { stunnerModule } from './stunner-binary.ts';
import { traefikModule } from './traefik-binary.ts';
import { controlPlanePrograms, type ControlPlanePrograms, type Program } from './control-plane-binary.ts';
import { createClusterNetwork, netnsName, type ClusterNetwork } from './host-network.ts';
import { forgetCluster, freePlan, ownerAlias, recordCluster, removeCluster, removeClusterSync } from './leftovers.ts';
import { processRef } from '../../state/run-record.ts';
import { onExit } from '../../state/exit-hooks.ts';
import type { NodeAgentConfig } from './node-agent/config.ts';

export interface NetnsClusterOptions {
  /** Number of nodes (default 2). */
  nodes?: number;
  /** The IPv4 block the cluster's addresses come from (address-plan.ts). */
  block?: string;
  /** A directory of release binaries instead of the built module (control-plane-binary.ts). */
  binaries?: string;
  /** The Kubernetes release to run, one kubernetes/ pins (`v1.36.3` or `1.36`; default: kubernetes/go.mod's). */
  kubeVersion?: string;
  log?: (line: string) => void;
  /** Aborts a cluster that is still starting; what was made is removed before the promise rejects. */
  signal?: AbortSignal;
}

export interface NetnsNode {
  name: string;
  ip: string;
  podCIDR: string;
  netns: string;
}

export interface NetnsCluster extends AsyncDisposable {
  id: string;
  /** The admin kubeconfig's path (server https://<control plane>:6443). */
  kubeconfigPath: string;
  kubeConfig(): KubeConfig;
  /** argv that runs kubectl against this cluster (the same release as the cluster). */
  kubectl: string[];
  /** The release the API server reports at /version (its gitVersion), not the one asked for. */
  version: string;
  plan: AddressPlan;
  nodes: NetnsNode[];
  /** The cluster's directory: certificates, etcd's data, every component's log. */
  dir: string;
}

const API_PORT = 6443;
const START_TIMEOUT_MS = 120_000;

export async function startNetnsCluster(opts: NetnsClusterOptions = {}): Promise<NetnsCluster> {
  const log = opts.log ?? (() => {});
  const programs = await controlPlanePrograms({ ...(opts.binaries ? { binaries: opts.binaries } : {}), ...(opts.kubeVersion ? { version: opts.kubeVersion } : {}), log });
  const plan = await freePlan(opts.nodes ?? 2, opts.block);
  const id = (await import('node:crypto')).randomBytes(4).toString('hex');
  const dir = await mkdtemp(join(tmpdir(), `zerodrop-kube-${id}-`));
  recordCluster({ id, dir, block: plan.block });
  const processes: ChildProcess[] = [];
  // A process that exits without disposing (a second Ctrl-C) still takes its cluster with it.
  const atExit = (): void => {
    removeClusterSync({ id, dir });
    forgetCluster(id);
  };
  const dropExitHook = onExit(atExit);
  const dispose = async (): Promise<void> => {
    dropExitHook();
    await stopAgents(processes);
    await removeCluster({ id, dir });
    forgetCluster(id);
  };
  try {
    const cluster = await bringUp(id, dir, plan, programs, processes, log, opts.signal);
    return { ...cluster, [Symbol.asyncDispose]: dispose };
  } catch (err) {
    await dispose();
    throw err;
  }
}

/** The node agents stop their pods themselves on SIGTERM (and remove the pods' namespaces): given a moment, they leave less for the sweep. */
async function stopAgents(processes: ChildProcess[]): Promise<void> {
  const agents = processes.filter((p) => p.spawnargs.some((a) => a.includes('node-agent')) && p.exitCode === null && p.signalCode === null);
  for (const agent of agents) agent.kill('SIGTERM');
  await Promise.race([Promise.all(agents.map((a) => new Promise((r) => a.once('exit', r)))), sleep(10_000)]);
}

async function bringUp(
  id: string,
  dir: string,
  plan: AddressPlan,
  programs: ControlPlanePrograms,
  processes: ChildProcess[],
  log: (line: string) => void,
  signal?: AbortSignal,
): Promise<Omit<NetnsCluster, typeof Symbol.asyncDispose>> {
  const check = (): void => signal?.throwIfAborted();
  const nodes: NetnsNode[] = plan.nodes.map((n, k) => ({ name: `zerodrop-node-${k + 1}`, ip: n.ip, podCIDR: n.podCIDR, netns: netnsName(id, `n${k + 1}`) }));
  log(`cluster ${id}: network ${plan.network}, pods ${plan.clusterCIDR}, Services ${plan.serviceCIDR}, ${nodes.length} nodes`);
  const network: ClusterNetwork = await createClusterNetwork(id, plan, ownerAlias(processRef(process.pid), dir));
  check();
  const certs = await makeCertificates(join(dir, 'pki'), { controlPlane: plan.controlPlane, apiServiceIP: plan.apiServiceIP, nodes });
  const server = `https://${plan.controlPlane}:${API_PORT}`;
  const kubeconfigPath = join(dir, 'admin.kubeconfig');
  await adminKubeconfig(kubeconfigPath, server, certs, (p) => readFile(p, 'utf8'));
  check();

  const start = (netns: string, name: string, argv: string[]): ChildProcess => {
    const out = openSync(join(dir, 'logs', `${name}.log`), 'a');
    const child = spawn('nsenter', [`--net=/run/netns/${netns}`, '--', ...argv], { detached: true, stdio: ['ignore', out, out] });
    closeSync(out);
    child.on('error', () => {});
    processes.push(child);
    return child;
  };
  const run = (program: Program, args: string[]): string[] => [...programs.argv(program), ...args];
  await mkdir(join(dir, 'logs'), { recursive: true });

  start(network.controlPlane, 'etcd', run('etcd', etcdArgs(dir, certs)));
  start(network.controlPlane, 'kube-apiserver', run('kube-apiserver', apiServerArgs(plan, certs)));
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigPath);
  const client = new KubeClient(kc);
  await waitFor('the API server to be ready', async () => (await client.request('GET', '/readyz', { allow: [500, 503] })).status === 200, dir, signal);
  // Our own API server answers /version once ready; the pinned release stands in should it not.
  const version = (await serverVersion(client)) ?? programs.version;
  log(`cluster ${id}: API server ready at ${server} (Kubernetes ${version}, from ${programs.source})`);

  const common = [`--kubeconfig=${kubeconfigPath}`, `--authentication-kubeconfig=${kubeconfigPath}`, `--authorization-kubeconfig=${kubeconfigPath}`, '--leader-elect=false', '--bind-address=127.0.0.1'];
  start(network.controlPlane, 'kube-controller-manager', run('kube-controller-manager', [
    ...common,
    `--service-account-private-key-file=${certs.serviceAccount.key}`,
    `--root-ca-file=${certs.ca.cert}`,
    `--cluster-signing-cert-file=${certs.ca.cert}`,
    `--cluster-signing-key-file=${certs.ca.key}`,
    `--service-cluster-ip-range=${plan.serviceCIDR}`,
    // Pod ranges are the cluster's (address-plan.ts), given to each Node by its agent: no IPAM controller.
    '--allocate-node-cidrs=false',
    '--use-service-account-credentials=false',
  ]));
  start(network.controlPlane, 'kube-scheduler', run('kube-scheduler', common));
  // Images of programs built from Go modules (STUNner's, Traefik's) run the builds already in the cache; a
  // cluster never builds them itself (minutes of compile), so an image without a build fails to
  // pull, and its message says how to build it.
  const goPrograms = { ...(await cachedPrograms(stunnerModule())), ...(await cachedPrograms(traefikModule())) };

  for (const [k, node] of nodes.entries()) {
    const certsOfNode = certs.nodes[k]!;
    start(node.netns, `kube-proxy-${node.name}`, run('kube-proxy', [
      `--kubeconfig=${kubeconfigPath}`,
      '--proxy-mode=nftables',
      `--hostname-override=${node.name}`,
      `--cluster-cidr=${plan.clusterCIDR}`,
      // NodePorts on the node's own address only (never 0.0.0.0, never loopback: unsupported in nftables mode).
      `--nodeport-addresses=${node.ip}/32`,
      `--metrics-bind-address=${node.ip}:10249`,
      `--healthz-bind-address=${node.ip}:10256`,
      // Leave the kernel's conntrack table size alone (a namespace cannot change it).
      '--conntrack-max-per-core=0',
    ]));
    const agentDir = join(dir, 'nodes', node.name);
    await mkdir(agentDir, { recursive: true });
    const config: NodeAgentConfig = {
      clusterId: id,
      nodeName: node.name,
      nodeIP: node.ip,
      podCIDR: node.podCIDR,
      kubeconfig: kubeconfigPath,
      caFile: certs.ca.cert,
      servingCertFile: certsOfNode.cert,
      servingKeyFile: certsOfNode.key,
      dir: agentDir,
      kubeletVersion: version,
      nodeExecPath: process.execPath,
      goPrograms,
    };
    const configPath = join(agentDir, 'agent.json');
    await writeFile(configPath, JSON.stringify(config, null, 2));
    start(node.netns, `node-agent-${node.name}`, [process.execPath, siblingModule('node-agent/main', import.meta.url).pathname, configPath]);
  }
  await waitFor('every node to be Ready', async () => {
    const list = (await client.request<{ items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string }[] } }[] }>('GET', '/api/v1/nodes')).body;
    const ready = list.items.filter((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
    return ready.length === nodes.length;
  }, dir, signal);
  // Pods are refused until their namespace's `default` ServiceAccount exists (the ServiceAccount
  // admission plugin); the controller makes it moments after the namespace.
  await waitFor('the default ServiceAccount', async () => (await client.request('GET', '/api/v1/namespaces/default/serviceaccounts/default', { allow: [404] })).status === 200, dir, signal);
  log(`cluster ${id}: ${nodes.length} nodes Ready`);
  return {
    id,
    kubeconfigPath,
    kubeConfig: () => {
      const copy = new KubeConfig();
      copy.loadFromFile(kubeconfigPath);
      return copy;
    },
    kubectl: run('kubectl', [`--kubeconfig=${kubeconfigPath}`]),
    version,
    plan,
    nodes,
    dir,
  };
}

function etcdArgs(dir: string, certs: ClusterCertificates): string[] {
  // On the control plane namespace's own loopback: nothing outside it can reach etcd.
  return [
    '--name=zerodrop',
    `--data-dir=${join(dir, 'etcd')}`,
    '--listen-client-urls=https://127.0.0.1:2379',
    '--advertise-client-urls=https://127.0.0.1:2379',
    '--listen-peer-urls=http://127.0.0.1:2380',
    '--initial-advertise-peer-urls=http://127.0.0.1:2380',
    '--initial-cluster=zerodrop=http://127.0.0.1:2380',
    `--cert-file=${certs.etcdServer.cert}`,
    `--key-file=${certs.etcdServer.key}`,
    `--trusted-ca-file=${certs.ca.cert}`,
    '--client-cert-auth',
    // A test cluster lives for one run: it need not survive a power cut, and fsync on every write
    // would make the disk the control plane's bottleneck.
    '--unsafe-no-fsync',
    '--log-level=warn',
  ];
}

function apiServerArgs(plan: AddressPlan, certs: ClusterCertificates): string[] {
  return [
    `--advertise-address=${plan.controlPlane}`,
    `--bind-address=${plan.controlPlane}`,
    `--secure-port=${API_PORT}`,
    '--etcd-servers=https://127.0.0.1:2379',
    `--etcd-cafile=${certs.ca.cert}`,
    `--etcd-certfile=${certs.etcdClient.cert}`,
    `--etcd-keyfile=${certs.etcdClient.key}`,
    `--service-cluster-ip-range=${plan.serviceCIDR}`,
    `--client-ca-file=${certs.ca.cert}`,
    `--tls-cert-file=${certs.apiServer.cert}`,
    `--tls-private-key-file=${certs.apiServer.key}`,
    '--service-account-issuer=https://kubernetes.default.svc',
    `--service-account-key-file=${certs.serviceAccount.pub}`,
    `--service-account-signing-key-file=${certs.serviceAccount.key}`,
    '--authorization-mode=Node,RBAC',
    `--kubelet-client-certificate=${certs.kubeletClient.cert}`,
    `--kubelet-client-key=${certs.kubeletClient.key}`,
    `--kubelet-certificate-authority=${certs.ca.cert}`,
    '--kubelet-preferred-address-types=InternalIP',
    // The request-header settings the controller manager and scheduler read from the
    // extension-apiserver-authentication ConfigMap; without them both log an error every 10 s.
    `--requestheader-client-ca-file=${certs.ca.cert}`,
    '--requestheader-allowed-names=front-proxy-client',
    '--requestheader-username-headers=X-Remote-User',
    '--requestheader-group-headers=X-Remote-Group',
    '--requestheader-extra-headers-prefix=X-Remote-Extra-',
    `--proxy-client-cert-file=${certs.frontProxyClient.cert}`,
    `--proxy-client-key-file=${certs.frontProxyClient.key}`,
    '--allow-privileged=true',
    // The gate kind and k3s clusters turn on (kind.ts, k3s.ts): with it off the API server drops a
    // container's lifecycle.stopSignal, so a profile that stops by a signal other than its image's
    // (nginx-naive: SIGTERM, not nginx's SIGQUIT) could not run. The node agent honours the field.
    '--feature-gates=ContainerStopSignals=true',
    '--profiling=false',
  ];
}

async function waitFor(what: string, ready: () => Promise<boolean>, dir: string, signal?: AbortSignal): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  let last: unknown;
  for (;;) {
    signal?.throwIfAborted();
    try {
      if (await ready()) return;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${START_TIMEOUT_MS / 1000} s waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}; the components' logs are in ${join(dir, 'logs')}`);
    }
    await sleep(250, undefined, signal ? { signal } : {});
  }
}


/**
 * How the harness reaches Services: NodePorts on the first node's address, which the host reaches
 * directly, so every port of the static band (STATIC_NODE_PORT_BAND) can serve, not only the few
 * kind publishes: the session rotates the run's Services through them (rotatedExposure). The last
 * stays kind's last, the port a GatewayClass's Service holds (traefik-install.ts).
 */
/**
 * Which pod kube-proxy sends each of the harness's connections to, watched by conntrack on the node
 * the harness reaches Services through (conntrack-watch.ts). Without conntrack-tools, failures of
 * connections no response named stay on no pod, and the session says so once.
 */
export function netnsRouteWatch(cluster: NetnsCluster, log: (line: string) => void): { routeWatch?: KubeProviderOptions['routeWatch'] } {
  if (!onPath('conntrack', process.env['PATH'] ?? '')) {
    log('conntrack not found on PATH: a failed request that got no response is placed on no pod (install: apt-get install conntrack)');
    return {};
  }
  const entry = cluster.nodes[0]!;
  return {
    routeWatch: (clock, onProblem) => watchRoutedConnections({ netns: entry.netns, client: cluster.plan.host, to: entry.ip, clock, onProblem }),
  };
}

export function netnsExposure(cluster: NetnsCluster): Exposure {
  const reserved = PUBLISHED_NODE_PORTS[PUBLISHED_NODE_PORTS.length - 1]!.nodePort;
  const band = Array.from({ length: STATIC_NODE_PORT_BAND.last - STATIC_NODE_PORT_BAND.first + 1 }, (_, i) => STATIC_NODE_PORT_BAND.first + i).filter((p) => p !== reserved);
  return { kind: 'nodePort', host: cluster.nodes[0]!.ip, ports: [...band, reserved].map((nodePort) => ({ nodePort, hostPort: nodePort })) };
}
