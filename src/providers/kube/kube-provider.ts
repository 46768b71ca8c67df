// The Provider on a real Kubernetes API, shared by kind, k3s and existing clusters: they differ only
// in how the cluster is obtained and how the harness reaches a Service (a NodePort published to the
// host by kind or the k3s container, or a LoadBalancer address). Everything a run creates lives in
// one namespace labelled with the run id; teardown deletes that namespace and nothing else.

import type { ClusterProviderName } from '../kube-session.ts';
import type { Topology } from '../../model/workload.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { Clock } from '../../observe/clock.ts';
import type { Scenario } from '../../model/scenario.ts';
import { podTcpAddress } from '../pod-address.ts';
import { placeRoutedConnections, type RouteWatch } from '../../observe/routed-connections.ts';
import { type DeleteOptions, type DrainNodeOptions, type PodInfo, type Provider, type ProviderCapabilities, type ServiceAddress, type StatedDrain } from '../provider.ts';
import type { GatewayClassSettings } from '../cluster-system.ts';
import { moveRoute, openGatewayClassRun, probeTcp, waitForGatewayClass, workloadResource, workloadSettled, type GatewayClassRun, type GatewayEndpoint, type OwningWorkload } from './gateway-class.ts';
import { setTimeout as sleep } from 'node:timers/promises';
import { routeKindProblem, type ListenerRoute } from './gateway-objects.ts';
import { assertNamespaceFree, deleteRunNamespace, deleteRunObject, serverSideApply } from './apply.ts';
import * as chaos from './chaos.ts';
import { statusOf, type KubeClient } from './client.ts';
import { chartObjectsOutside, helmInstall } from './helm.ts';
import { chartInstalls } from './helm-gateway.ts';
import { enrolledNamespace, ensureMesh, type carryOutMeshInstall } from './mesh-install.ts';
import type { MeshSpec } from '../../profiles/meshes.ts';
import { ProfileCannotPlay } from '../../profiles/profile.ts';
import type { KubeObject } from './list-watch.ts';
import { LABELS, namespaceFor, readFixtures, renderTopology, validateManifests } from './manifests.ts';
import { KUBE_PROXY_PROGRAMMING_BOUND_MS, observeNamespace, type NamespaceObservers } from './observers.ts';
import type { ServiceEndpoints } from '../netns/kube-proxy-rules.ts';

/** How the harness reaches Services from the host. */
export type Exposure =
  /** NodePorts the cluster publishes on the host (kind extraPortMappings, k3s container port mappings). */
  | { kind: 'nodePort'; host: string; ports: { nodePort: number; hostPort: number }[] }
  /** Services get type LoadBalancer and the harness uses the address the cloud assigns. */
  | { kind: 'loadBalancer' };

export interface KubeProviderOptions {
  name: ClusterProviderName;
  client: KubeClient;
  recorder: Recorder;
  runId: string;
  /** Repository root: fixtures are read from here into the ConfigMap. */
  cwd: string;
  exposure: Exposure;
  capabilities: ProviderCapabilities;
  /** Cordon and drain act on Nodes, outside the run's namespace: only on clusters the harness created. */
  allowNodeOperations: boolean;
  /**
   * May create cluster-scoped objects (a charted system's GatewayClass, STUNner's Dataplane), each
   * labelled with the run and deleted at teardown. False on an existing cluster, where the provider
   * stays inside its namespace: a Helm profile that needs them cannot deploy there.
   */
  clusterScopedObjects?: boolean;
  /** Installs a Helm profile's chart (default: the helm CLI, helm.ts); tests pass a stand-in. */
  helmInstall?: typeof helmInstall;
  /** What a chart would create outside the namespace (default: `helm template`, helm.ts); tests pass a stand-in. */
  chartObjectsOutside?: typeof chartObjectsOutside;
  /** Poll period while waiting for rollouts (reads, not measurements). */
  pollMs?: number;
  /** How long teardown waits for each chart object to be gone (default OBJECT_DELETE_TIMEOUT_MS). */
  objectDeleteTimeoutMs?: number;
  /** Floor of the deploy timeout (default 180 s); tests against a fake API server lower it. */
  minDeployTimeoutMs?: number;
  /** Runs after the namespace is gone (e.g. releasing a cluster the provider holds). */
  onTeardown?: () => Promise<void>;
  /** --namespace-labels and --namespace-annotations, added to the run's namespace (mesh-install.ts). */
  namespaceLabels?: Record<string, string>;
  namespaceAnnotations?: Record<string, string>;
  /** A mesh profile's mesh (src/profiles/meshes.ts): installed when absent, before the namespace; the namespace is enrolled. */
  mesh?: MeshSpec;
  /** Carries out the mesh install (default: helm and the API server, mesh-install.ts); tests pass a stand-in. */
  meshInstall?: typeof carryOutMeshInstall;
  /**
   * `--gateway-class`: a workload of the topology marked `gatewayClass` is this class's dataplane:
   * the provider creates a Gateway and routes for it instead of a Deployment (gateway-class.ts).
   */
  gatewayClass?: GatewayClassSettings;
  /**
   * Checks, before the load starts, that the host reaches each TCP Service port through the cluster's
   * dataplane (default: a TCP connection, gateway-class.ts probeTcp), and the bound the dataplane
   * takes to apply an endpoint change (default KUBE_PROXY_PROGRAMMING_BOUND_MS); tests against a
   * fake API server pass a stand-in.
   */
  dataplaneReady?: { probe: (endpoint: GatewayEndpoint, timeoutMs: number) => Promise<void>; programmingBoundMs: number };
  /**
   * Whether every node's kube-proxy sends each Service to each of the given pod addresses (a netns
   * cluster reads each node's rules, netns/kube-proxy-rules.ts). Where given, the load starts once
   * it holds, or once KUBE_PROXY_PROGRAMMING_BOUND_MS has passed, whichever comes first.
   */
  kubeProxyProgrammed?: (services: readonly ServiceEndpoints[]) => Promise<boolean>;
  /** Checks that the host reaches the Gateway (default: a TCP connection, gateway-class.ts probeTcp); tests pass a stand-in. */
  gatewayProbe?: (endpoint: GatewayEndpoint) => Promise<void>;
  /** The host routes to the cluster's pod ranges (a netns cluster): podAddress answers. */
  podNetworkReachable?: boolean;
  /**
   * Watches which pod the cluster's proxy sends each of the harness's connections to, from deploy's
   * TCP probes (deploy returns once it has seen one) until completeRecords (a netns cluster: conntrack
   * on the node the harness reaches Services through, netns/conntrack-watch.ts), on the run's clock.
   */
  routeWatch?: (clock: Pick<Clock, 'fromWallTime'>, onProblem: (message: string) => void) => RouteWatch;
}

/** The class's dataplane as deployed: the flow's result and the observers of its pods. */
interface ClassDataplane {
  workload: string;
  run: GatewayClassRun;
  namespace: string;
  observers: NamespaceObservers;
}

const DEFAULT_DEPLOY_TIMEOUT_MS = 180_000;
/** How long deploy waits for the route watch to show it listens (KubeProviderOptions.routeWatch). */
const ROUTE_WATCH_START_MS = 5_000;
/**
 * A cluster deploy includes pulling images on first use and scheduling across nodes: callers' short
 * local timeouts (the runner's 30 s) are raised to this floor.
 */
const MIN_DEPLOY_TIMEOUT_MS = 180_000;
/** A chart object's delete waits at most this for the controller to let it go (its finalizers). */
const OBJECT_DELETE_TIMEOUT_MS = 60_000;

/**
 * A Service whose NodePort another Service of the cluster already holds: the API server refuses it
 * as `spec.ports[i].nodePort: Invalid value: N: provided port is already allocated` (422). zerodrop
 * asks for its published ports by number, inside the range's static band (kind.ts), so this is a
 * Service someone created with that number: said with the port and how to find it.
 */
function nodePortTaken(err: unknown, object: KubeObject, exposure: Exposure): Error | undefined {
  if (object.kind !== 'Service' || statusOf(err) !== 422 || !/provided port is already allocated/.test((err as Error).message)) return undefined;
  const port = /Invalid value: (\d+): provided port is already allocated/.exec((err as Error).message)?.[1] ?? '?';
  return new Error(
    `NodePort ${port} for Service ${object.metadata.name} is already allocated on this cluster: another Service holds it ` +
      `(find it: kubectl get services -A -o wide | grep ':${port}/'). zerodrop publishes NodePorts ${exposure.kind === 'nodePort' ? exposure.ports.map((p) => p.nodePort).join(', ') : ''}; ` +
      'delete that Service, or run on a cluster of its own (a fresh --cluster-name)',
    { cause: err },
  );
}

export class KubeProvider implements Provider {
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  readonly namespace: string;
  private readonly opts: KubeProviderOptions;
  private readonly client: KubeClient;
  private readonly recorder: Recorder;
  private readonly stopping = new AbortController();
  private observers?: NamespaceObservers;
  private readonly addresses = new Map<string, Map<string, ServiceAddress>>();
  /** ClusterIP and port of each Service port, by Service and port name. */
  private readonly clusterAddresses = new Map<string, Map<string, ServiceAddress>>();
  private readonly generations = new Map<string, number>();
  private created = false;
  private teardownPromise?: Promise<void>;
  /** Undo steps of the charts this run installed, newest last. */
  private readonly uninstalls: (() => Promise<void>)[] = [];
  /** The charts' objects (Gateway API, EnvoyProxy, Dataplane...), newest last: deleted newest first, each awaited, before any chart goes. */
  private readonly chartObjects: KubeObject[] = [];
  private readonly cordoned = new Set<string>();
  /** The topology deploy() was given (a chart's controller is found through it). */
  private deployed?: Topology;
  /** Workloads whose pods a chart's controller creates: their rollout is read from the pods. */
  private readonly charted = new Set<string>();
  /** The GatewayClass flow of this run, once its Gateway exists (teardown deletes its objects). */
  private classRun?: GatewayClassRun;
  private dataplane?: ClassDataplane;
  /** The replicas the class's owning workload had before this run first scaled it. */
  private classReplicasFound?: number | undefined;
  private routes?: RouteWatch;

  constructor(opts: KubeProviderOptions) {
    this.opts = opts;
    this.name = opts.name;
    this.capabilities = opts.capabilities;
    this.client = opts.client;
    this.recorder = opts.recorder;
    this.namespace = namespaceFor(opts.runId);
  }

  /** The NodePort each Service port gets, in the order the topology lists them. */
  static assignNodePorts(topology: Topology, exposure: Exposure): Record<string, Record<string, number>> | undefined {
    if (exposure.kind !== 'nodePort') return undefined;
    const free = [...exposure.ports];
    const assigned: Record<string, Record<string, number>> = {};
    for (const service of topology.services) {
      for (const port of service.ports) {
        const next = free.shift();
        if (!next) throw new Error(`the cluster publishes ${exposure.ports.length} NodePort(s); the topology needs more`);
        (assigned[service.name] ??= {})[port.name] = next.nodePort;
      }
    }
    return assigned;
  }

  async deploy(full: Topology, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    this.assertRunning();
    // A GatewayClass's dataplane is no object of ours: its Services and workload leave the rendered topology.
    const { topology, classWorkload, listeners } = this.splitClassWorkload(full);
    this.deployed = full;
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.stopping.signal]) : this.stopping.signal;
    if (classWorkload && listeners) await this.checkGatewayClass(listeners, signal);
    const fixtures = await readFixtures(topology, this.opts.cwd);
    const nodePorts = KubeProvider.assignNodePorts(topology, this.opts.exposure);
    const objects = renderTopology(topology, {
      namespace: this.namespace,
      runId: this.opts.runId,
      fixtures,
      ...(nodePorts ? { nodePorts } : {}),
      ...(this.opts.exposure.kind === 'loadBalancer' ? { loadBalancers: topology.services.map((s) => s.name) } : {}),
    });
    // Read only for a chart's objects, which may route to the pods' addresses (ChartContext.podCidrs).
    const podCidrs = topology.workloads.some((w) => w.installedBy) ? await this.podCidrs() : [];
    const charts = chartInstalls(topology, { namespace: this.namespace, runId: this.opts.runId, podCidrs });
    // Nothing reaches the cluster unless every object is valid (as far as a schema is published).
    validateManifests([...objects, ...charts.flatMap((c) => c.objects.map((o) => o.object))]);
    const clusterScoped = charts.flatMap((c) => c.objects.filter((o) => o.clusterScoped).map((o) => `${o.object.kind} ${o.object.metadata.name}`));
    if (clusterScoped.length > 0 && !this.opts.clusterScopedObjects) {
      throw new Error(`provider ${this.name} stays inside its namespace, but the chart's configuration needs cluster-scoped objects (${clusterScoped.join(', ')})`);
    }
    if (!this.opts.clusterScopedObjects) {
      // The same rule for what the chart itself would create (its RBAC, its IngressClass): read from
      // `helm template` before anything exists, since a namespace-only account could not create it.
      const outsideOf = this.opts.chartObjectsOutside ?? chartObjectsOutside;
      for (const chart of charts) {
        const outside = await outsideOf(chart.spec, { release: chart.release, namespace: this.namespace, values: chart.values });
        if (outside.length > 0) {
          throw new Error(
            `provider ${this.name} stays inside its namespace, but chart ${chart.spec.chart.chart} ${chart.spec.chart.version} (profile ${chart.spec.name}) ` +
              `would create ${outside.join(', ')} (helm template): an account limited to the run's namespace cannot, and zerodrop does not touch the rest of the cluster; ` +
              'run this profile with --provider kind or k3s',
          );
        }
      }
    }

    const [rendered, ...rest] = objects;
    if (!rendered) throw new Error('no namespace rendered');
    const namespace = enrolledNamespace(rendered, this.opts.mesh, { labels: this.opts.namespaceLabels, annotations: this.opts.namespaceAnnotations });
    if (this.opts.mesh) {
      const note = await ensureMesh(this.client, this.opts.mesh, { provider: this.opts.name, ...(this.opts.meshInstall ? { carryOut: this.opts.meshInstall } : {}) });
      this.recorder.event('note', { message: note, detail: { mesh: this.opts.mesh.mesh } });
    }
    await assertNamespaceFree(this.client, this.namespace);
    this.created = true;
    await serverSideApply(this.client, namespace, opts.signal);
    // Watch before the pods exist, so that their whole life is on the Timeline.
    const selectors = new Map(topology.services.map((s) => [s.name, s.selector]));
    this.observers = await observeNamespace(this.client, this.namespace, this.recorder, this.stopping.signal, {
      selectorOf: (service) => selectors.get(service),
      // A chart's dataplane labelled its own way (defineHelmProfile's dataplaneSelector).
      workloadSelectors: new Map(topology.workloads.flatMap((w) => (w.installedBy?.selector ? [[w.name, w.installedBy.selector] as const] : []))),
      // Beside a class's dataplane, which the GEP-1762 rule finds in this namespace, only the run's own pods.
      ...(classWorkload ? { only: { podSelector: LABELS.workload } } : {}),
    });
    for (const object of rest) await serverSideApply(this.client, object, opts.signal).catch((err: unknown) => Promise.reject(nodePortTaken(err, object, this.opts.exposure) ?? err));
    for (const chart of charts) {
      this.charted.add(chart.workload.name);
      const install = this.opts.helmInstall ?? helmInstall;
      this.uninstalls.push(await install(chart.spec, { release: chart.release, namespace: this.namespace, kubeconfig: this.client.config.exportConfig(), values: chart.values }));
      for (const { object } of chart.objects) {
        // Remembered before it exists: a failed apply must not leave it behind.
        this.chartObjects.push(object);
        await serverSideApply(this.client, object, opts.signal);
      }
    }

    const timeoutMs = Math.max(opts.timeoutMs ?? DEFAULT_DEPLOY_TIMEOUT_MS, this.opts.minDeployTimeoutMs ?? MIN_DEPLOY_TIMEOUT_MS);
    if (classWorkload && listeners) await this.deployClassDataplane(full, classWorkload, listeners, signal);
    await this.pollUntil(async () => {
      for (const w of topology.workloads) if (!(await this.rolledOut(w.name, w.replicas))) return false;
      for (const s of topology.services) {
        const replicas = topology.workloads.find((w) => w.name === s.selector)?.replicas ?? 0;
        if ((this.observers?.endpoints.readyPods(s.name).length ?? 0) < replicas) return false;
      }
      return true;
    }, { timeoutMs, signal, what: 'deployment to be ready with every endpoint ready' });
    const endpointsReady = performance.now();
    // A cloud load balancer gets its address some time after the Service exists.
    await this.pollUntil(async () => this.resolveAddresses(topology, nodePorts), {
      timeoutMs,
      signal,
      what: 'every Service to have an address the harness can reach',
    });
    // Ready endpoints are what the API shows; the load goes through kube-proxy, which programs them
    // up to its sync bound later (a load started at once met "connection refused" on a real
    // cluster). Each TCP port must accept a connection from the harness, and every node's kube-proxy
    // must have had its bound since the last endpoint became ready.
    const dataplane = this.opts.dataplaneReady ?? { probe: probeTcp, programmingBoundMs: KUBE_PROXY_PROGRAMMING_BOUND_MS };
    // Started before the probes, whose connections show that it listens (routesListening).
    this.routes = this.opts.routeWatch?.(this.recorder.clock, (message) => this.recorder.event('note', { message }));
    await this.pollUntil(async () => {
      for (const service of topology.services) {
        for (const port of service.ports) {
          if (port.protocol === 'UDP') continue;
          const address = this.addresses.get(service.name)?.get(port.name);
          if (!address) return false;
          try {
            await dataplane.probe({ host: address.host, port: address.port, via: `Service ${service.name}` }, 1_000);
          } catch {
            return false;
          }
        }
      }
      return true;
    }, { timeoutMs, signal, what: 'every Service to accept connections from the harness' });
    // Where the rules can be read, the load starts once they show every ready pod, and no later than
    // the bound: a Service kube-proxy programs only partly on some nodes (internalTrafficPolicy:
    // Local) must not hold the deploy. A class's dataplane Service is not among the topology's: the
    // bound covers it.
    const programmed = classWorkload ? undefined : this.opts.kubeProxyProgrammed;
    const boundPassed = () => performance.now() - endpointsReady >= dataplane.programmingBoundMs;
    if (programmed) {
      await this.pollUntil(async () => boundPassed() || (await programmed(this.readyEndpoints(topology))), { timeoutMs, signal, what: "every node's kube-proxy to send each Service to its ready pods" });
    } else {
      const settle = dataplane.programmingBoundMs - (performance.now() - endpointsReady);
      if (settle > 0) await sleep(settle, undefined, signal ? { signal } : {});
    }
    await this.routesListening(topology, dataplane.probe, signal);
  }

  /** Each Service of the topology with the addresses of the pods its endpoints list as ready. */
  private readyEndpoints(topology: Topology): ServiceEndpoints[] {
    const observers = this.requireObservers();
    return topology.services.map((s) => ({
      namespace: this.namespace,
      service: s.name,
      addresses: observers.endpoints.readyPods(s.name).flatMap((pod) => observers.pods.pods.get(pod)?.info.ip || []),
    }));
  }

  /**
   * Until the route watch has seen a connection (one of the probes' above, as a rule), one more
   * probe every 100 ms for at most ROUTE_WATCH_START_MS: a watch reports only what happens once it
   * listens, and the loads start as deploy returns. A watch still deaf then is said in a note.
   */
  private async routesListening(topology: Topology, probe: (endpoint: GatewayEndpoint, timeoutMs: number) => Promise<void>, signal: AbortSignal): Promise<void> {
    const routes = this.routes;
    if (!routes) return;
    const target = topology.services
      .flatMap((service) => service.ports.filter((p) => p.protocol !== 'UDP').map((port) => ({ via: `Service ${service.name}`, address: this.addresses.get(service.name)?.get(port.name) })))
      .find((t) => t.address !== undefined);
    // No TCP Service, no connection to place.
    if (target?.address === undefined) return;
    const endpoint = { host: target.address.host, port: target.address.port, via: target.via };
    const deadline = performance.now() + ROUTE_WATCH_START_MS;
    while (!routes.seenAny() && performance.now() < deadline) {
      await probe(endpoint, 1_000).catch(() => undefined);
      if (!routes.seenAny()) await sleep(100, undefined, { signal });
    }
    if (!routes.seenAny()) {
      this.recorder.event('note', { message: `the route watch saw none of the harness's connections within ${ROUTE_WATCH_START_MS / 1000} s of deploy: a failed request that got no response is placed on no pod` });
    }
  }

  async completeRecords(): Promise<void> {
    const routes = this.routes;
    this.routes = undefined;
    if (!routes) return;
    const routed = await routes.stop();
    const services = new Map<string, string>();
    for (const [service, ports] of this.addresses) for (const a of ports.values()) services.set(`${a.host}:${a.port}`, service);
    const pods = [...(this.observers?.pods.pods.values() ?? []), ...(this.dataplane?.observers.pods.pods.values() ?? [])].map((p) => p.info);
    placeRoutedConnections(
      this.recorder.timeline,
      routed,
      (to) => services.get(`${to.host}:${to.port}`),
      // A pod's address is its own while it exists; a later pod may get it again.
      (ip, t) => pods.filter((p) => p.ip === ip && p.createdAt <= t).sort((a, b) => b.createdAt - a.createdAt)[0]?.name,
    );
  }

  serviceAddress(service: string, port?: string): ServiceAddress {
    const ports = this.addresses.get(service);
    if (!ports) throw new Error(`unknown service ${service}`);
    const address = port ? ports.get(port) : ports.values().next().value;
    if (!address) throw new Error(`service ${service} has no port ${port ?? ''}`);
    return address;
  }

  peerAddress(service: string, port?: string): ServiceAddress {
    const ports = this.clusterAddresses.get(service);
    const address = port ? ports?.get(port) : ports?.values().next().value;
    if (!address) throw new Error(`service ${service} has no cluster address${port ? ` for port ${port}` : ''}`);
    return address;
  }

  podAddress(service: string, pod: string): ServiceAddress | undefined {
    if (!this.opts.podNetworkReachable) return undefined;
    const spec = this.deployed?.services.find((s) => s.name === service);
    // A chart's or a class's dataplane listens where its own manifests say, not where the topology does.
    if (!spec || this.charted.has(spec.selector) || this.dataplane?.workload === spec.selector) return undefined;
    return podTcpAddress(spec, this.pods(spec.selector), pod);
  }

  pods(workload: string): PodInfo[] {
    if (this.dataplane?.workload === workload) return this.dataplane.observers.pods.podsOf(workload);
    return this.observers?.pods.podsOf(workload) ?? [];
  }

  async deletePod(pod: string, opts: DeleteOptions = {}): Promise<void> {
    this.assertRunning();
    // A class's dataplane pod is deleted where it lives (an Envoy Gateway proxy: in the controller's namespace).
    const inDataplane = this.dataplane?.observers.pods.pods.has(pod) ? this.dataplane : undefined;
    const observers = inDataplane?.observers ?? this.requireObservers();
    observers.pods.deletesIssued.add(pod);
    const t = this.recorder.now();
    await chaos.deletePod(this.client, inDataplane?.namespace ?? this.namespace, pod, opts.gracePeriodSeconds);
    observers.pods.deleteAccepted(pod, opts.gracePeriodSeconds, t);
  }

  async scale(workload: string, replicas: number): Promise<void> {
    this.assertRunning();
    const target = this.workloadTarget(workload, 'scale');
    if (target.resource === 'daemonsets') throw new Error(`workload ${workload} is a DaemonSet; it has no replicas to scale`);
    const from = await chaos.scaleDeployment(this.client, target.namespace, target.name, replicas, target.resource);
    // The class's replicas as the run found them, for teardown to put back.
    if (this.dataplane?.workload === workload) this.classReplicasFound ??= from;
    this.recorder.event('scale', { workload, detail: { from, to: replicas, ...(target.name !== workload ? { object: `${target.resource}/${target.namespace}/${target.name}` } : {}) } });
  }

  async rolloutRestart(workload: string): Promise<void> {
    this.assertRunning();
    const target = this.workloadTarget(workload, 'rollout-restart');
    const generation = await chaos.rolloutRestart(this.client, target.namespace, target.name, new Date(), target.resource);
    if (generation !== undefined) this.generations.set(workload, generation);
    this.recorder.event('rollout-start', { workload, detail: { generation, ...(target.name !== workload ? { object: `${target.resource}/${target.namespace}/${target.name}` } : {}) } });
  }

  async restartController(workload: string): Promise<void> {
    this.assertRunning();
    const controller = this.deployed?.workloads.find((w) => w.name === workload)?.installedBy?.controller;
    if (!controller) throw new Error(`workload ${workload} has no controller of its chart to restart`);
    const generation = await chaos.rolloutRestart(this.client, this.namespace, controller.deployment, new Date());
    this.recorder.event('note', { workload, message: `controller deployment/${controller.deployment} rollout restarted`, detail: { controller: `deployments/${this.namespace}/${controller.deployment}`, generation } });
  }

  async moveRoute(workload: string, to: { service: string; port: number }, opts: { recreate?: boolean } = {}): Promise<void> {
    this.assertRunning();
    const dataplane = this.dataplane;
    if (dataplane?.workload !== workload) throw new Error(`the route of ${workload}: no GatewayClass plays it in this run; only a class's routes are written`);
    const routes = dataplane.run.objects.routes;
    if (routes.length !== 1) throw new Error(`the route of ${workload}: its Gateway has ${routes.length} routes; which one moves is ambiguous`);
    const [route] = routes as [KubeObject];
    const moved = await moveRoute(this.client, route, to, {
      recreate: opts.recreate === true,
      runId: this.opts.runId,
      timeoutMs: this.opts.gatewayClass?.timeouts.gatewayMustHaveCondition ?? OBJECT_DELETE_TIMEOUT_MS,
      signal: this.stopping.signal,
    });
    routes[0] = moved;
    this.recorder.event('note', { workload, message: `${moved.kind} ${this.namespace}/${moved.metadata.name} ${opts.recreate ? 'created again' : 'applied'} with backendRefs ${to.service}:${to.port}`, detail: { route: moved.metadata.name, to: to.service } });
  }

  cannotRun(scenario: Scenario): string | undefined {
    const dataplane = this.dataplane;
    if (!dataplane) return undefined;
    for (const step of scenario.steps) {
      if (!('workload' in step.action) || step.action.workload !== dataplane.workload) continue;
      const problem = step.action.kind === 'scale' ? dataplane.run.scaleProblem : step.action.kind === 'rollout-restart' ? dataplane.run.rollProblem : undefined;
      if (problem) return `${step.action.kind} of the ${dataplane.workload} workload (GatewayClass ${dataplane.run.info.name}'s dataplane): ${problem}`;
    }
    return undefined;
  }

  statedDrain(workload: string): StatedDrain | undefined {
    return this.dataplane?.workload === workload ? { ...this.dataplane.run.drain } : undefined;
  }

  /** Cordons a node and evicts the run's pods from it, honouring PodDisruptionBudgets. */
  async drainNode(node: string, opts: DrainNodeOptions): Promise<string[]> {
    this.assertRunning();
    if (!this.opts.allowNodeOperations) throw new Error(`provider ${this.name} does not cordon or drain nodes of a cluster it did not create`);
    this.recorder.event('note', { message: `cordon and drain node ${node}`, detail: { node } });
    this.cordoned.add(node);
    return chaos.drainNode(this.client, this.namespace, node, {
      ...opts,
      onRefused: (pod, why) => this.recorder.event('note', { pod, message: `eviction of ${pod} ${why}` }),
      onEvicted: (pod) => this.recorder.event('note', { pod, message: `eviction of ${pod} accepted` }),
    });
  }

  async waitForRollout(workload: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const signal = opts.signal ? AbortSignal.any([opts.signal, this.stopping.signal]) : this.stopping.signal;
    await this.pollUntil(() => this.rolledOut(workload), { timeoutMs: opts.timeoutMs, signal, what: `rollout of ${workload}` });
    this.recorder.event('rollout-complete', { workload, detail: { generation: this.generations.get(workload) } });
  }

  async waitForPodGone(pod: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const state = this.observers?.pods.pods.get(pod) ?? this.dataplane?.observers.pods.pods.get(pod);
    if (!state) throw new Error(`pod ${pod} not found`);
    if (state.info.phase === 'Gone') return;
    await this.recorder.waitFor((e) => e.kind === 'pod-removed' && e.pod === pod, {
      timeoutMs: opts.timeoutMs,
      signal: opts.signal ? AbortSignal.any([opts.signal, this.stopping.signal]) : this.stopping.signal,
      what: `pod ${pod} to be gone`,
    });
  }

  teardown(): Promise<void> {
    this.teardownPromise ??= this.stopAll();
    return this.teardownPromise;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.teardown();
  }

  private async stopAll(): Promise<void> {
    this.stopping.abort(new Error(`${this.name} provider torn down`));
    const routes = this.routes;
    this.routes = undefined;
    await routes?.stop();
    // Let the watches and log streams close (bounded: a watch still waiting for its response
    // headers only notices the abort at client-node's own request timeout).
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all([this.observers?.stopped(), this.dataplane?.observers.stopped()]), new Promise<void>((resolve) => (timer = setTimeout(resolve, 5000)))]);
    clearTimeout(timer);
    const problems: unknown[] = [];
    const attempt = async (step: () => Promise<void>) => {
      try {
        await step();
      } catch (err) {
        problems.push(err);
      }
    };
    try {
      // The cluster stays schedulable for the next run: undo this run's cordons.
      for (const node of this.cordoned) await attempt(() => chaos.cordon(this.client, node, false));
      // Dependency order, while the charts' controllers still run to remove their finalizers: routes,
      // then the Gateway, then the GatewayClass (whose finalizer stays while a Gateway uses it), each
      // gone before the next; the charts only after. Uninstalling first left the GatewayClass
      // Terminating for good, its finalizer's owner gone.
      const waitMs = this.opts.objectDeleteTimeoutMs ?? OBJECT_DELETE_TIMEOUT_MS;
      const pollMs = this.opts.pollMs ?? 250;
      // A class's dataplane outlives the run and serves the next: it is left as found, its replicas
      // back and every pod ready, or the next run meets this one's scale-down (a campaign's second
      // gateway-scale-down found one pod and deleted none) or a replacement pod still starting.
      const owner = this.dataplane?.run.workload;
      if (owner !== undefined && typeof owner !== 'string') await attempt(() => this.restoreClassWorkload(owner));
      // The class's routes, then its Gateway, each gone before the next, while its controller runs;
      // the GatewayClass is never written to.
      const classRun = this.classRun;
      if (classRun) await attempt(async () => void (await classRun.teardown()));
      for (const object of [...this.chartObjects].reverse()) await attempt(() => deleteRunObject(this.client, object, this.opts.runId, { waitMs, pollMs }));
      for (const uninstall of this.uninstalls.reverse()) await attempt(uninstall);
      if (this.created) await deleteRunNamespace(this.client, this.namespace, this.opts.runId);
    } finally {
      await this.opts.onTeardown?.();
    }
    if (problems.length > 0) throw new AggregateError(problems, `${this.name} teardown left something behind: ${problems.map((p) => (p as Error).message).join('; ')}`);
  }

  /** The topology without the workload a GatewayClass plays, and that workload's listeners. */
  private splitClassWorkload(topology: Topology): { topology: Topology; classWorkload?: string; listeners?: ListenerRoute[] } {
    const marked = topology.workloads.filter((w) => w.gatewayClass !== undefined);
    if (marked.length === 0) return { topology };
    const [workload] = marked;
    const settings = this.opts.gatewayClass;
    if (!workload || marked.length > 1) throw new Error(`the topology has ${marked.length} workloads a GatewayClass plays (${marked.map((w) => w.name).join(', ')}); one Gateway per run`);
    if (!settings || settings.name !== workload.gatewayClass) throw new Error(`workload ${workload.name} is GatewayClass ${workload.gatewayClass}'s dataplane, but provider ${this.name} was not given that class (--gateway-class)`);
    const route = workload.route;
    if (!route) throw new Error(`workload ${workload.name} states no route (what it carries and to which Service): a GatewayClass cannot play it`);
    const services = topology.services.filter((s) => s.selector === workload.name);
    const listeners = services.flatMap((s) => s.ports.map((p): ListenerRoute => ({ kind: route.kind, port: p.port, backend: route.backend })));
    if (listeners.length === 0) throw new Error(`no Service selects workload ${workload.name}: its Gateway would have no listener`);
    return {
      topology: {
        workloads: topology.workloads.filter((w) => w !== workload),
        services: topology.services.filter((s) => !services.includes(s)),
        ...(topology.disruptionBudgets ? { disruptionBudgets: topology.disruptionBudgets.filter((b) => b.workload !== workload.name) } : {}),
      },
      classWorkload: workload.name,
      listeners,
    };
  }

  /** Before anything is created: the class is Accepted and carries every route kind, or the scenario is skipped. */
  private async checkGatewayClass(listeners: readonly ListenerRoute[], signal: AbortSignal): Promise<void> {
    const settings = this.opts.gatewayClass;
    if (!settings) return;
    const info = await waitForGatewayClass(this.client, settings.name, { timeoutMs: settings.timeouts.gatewayClassMustBeAccepted, pollMs: this.opts.pollMs ?? 1_000, signal });
    const problems = [...new Set(listeners.map((l) => l.kind))].map((kind) => routeKindProblem(info.name, kind, info.supportedFeatures)).filter((p) => p !== undefined);
    if (problems.length > 0) throw new ProfileCannotPlay(problems.join('; '));
  }

  /** Creates the class's Gateway and routes, finds its dataplane, watches its pods, and says where the harness reaches it. */
  private async deployClassDataplane(full: Topology, workload: string, listeners: readonly ListenerRoute[], signal: AbortSignal): Promise<void> {
    const settings = this.opts.gatewayClass;
    if (!settings) return;
    const exposure = this.opts.exposure;
    const result = await openGatewayClassRun(this.client, {
      settings,
      provider: this.opts.name,
      namespace: this.namespace,
      runId: this.opts.runId,
      listeners,
      published: new Map(exposure.kind === 'nodePort' ? exposure.ports.map((p) => [p.nodePort, p.hostPort]) : []),
      ...(exposure.kind === 'nodePort' ? { publishedHost: exposure.host } : {}),
      pollMs: this.opts.pollMs ?? 1_000,
      signal,
      ...(this.opts.gatewayProbe ? { probe: this.opts.gatewayProbe } : {}),
    });
    if ('skipped' in result) throw new ProfileCannotPlay(result.skipped);
    this.classRun = result;
    for (const message of result.notes) this.recorder.event('note', { workload, message, detail: { gatewayClass: settings.name, discoveryRule: result.discovery.rule } });
    const namespace = result.discovery.pods[0]?.metadata.namespace ?? this.namespace;
    const scenarioServices = full.services.filter((s) => s.selector === workload);
    const [generated] = result.services;
    const [service] = scenarioServices;
    const observers = await observeNamespace(this.client, namespace, this.recorder, this.stopping.signal, {
      only: {
        podSelector: result.discovery.selector,
        workload,
        ...(generated ? { sliceSelector: `kubernetes.io/service-name=${generated.metadata.name}` } : {}),
        ...(service ? { serviceAlias: service.name } : {}),
      },
    });
    this.dataplane = { workload, run: result, namespace, observers };
    for (const s of scenarioServices) {
      const ports = new Map<string, ServiceAddress>();
      for (const p of s.ports) {
        const endpoint = result.endpoints.get(p.port);
        if (endpoint) ports.set(p.name, { host: endpoint.host, port: endpoint.port });
      }
      this.addresses.set(s.name, ports);
    }
  }

  /** The class's owning workload back at the replicas the run found, and settled (every replica updated and ready). */
  private async restoreClassWorkload(owner: OwningWorkload): Promise<void> {
    const found = this.classReplicasFound;
    if (found !== undefined && owner.kind !== 'DaemonSet') await chaos.scaleDeployment(this.client, owner.namespace, owner.name, found, owner.kind === 'StatefulSet' ? 'statefulsets' : 'deployments');
    // Teardown runs after the run's own signal stopped everything; this wait is bounded by its timeout alone.
    await this.pollUntil(() => workloadSettled(this.client, owner), {
      timeoutMs: this.opts.gatewayClass?.timeouts.gatewayMustHaveCondition ?? OBJECT_DELETE_TIMEOUT_MS,
      signal: new AbortController().signal,
      what: `${owner.kind} ${owner.namespace}/${owner.name}, GatewayClass ${this.opts.gatewayClass?.name ?? ''}'s dataplane, to be as the run found it`,
    });
  }

  /** The object a scale or restart of `workload` acts on: the run's Deployment, or the owning workload of a class's dataplane. */
  private workloadTarget(workload: string, action: 'scale' | 'rollout-restart'): { namespace: string; name: string; resource: chaos.WorkloadResource } {
    const dataplane = this.dataplane;
    if (dataplane?.workload !== workload) return { namespace: this.namespace, name: workload, resource: 'deployments' };
    const problem = action === 'scale' ? dataplane.run.scaleProblem : dataplane.run.rollProblem;
    const owner = dataplane.run.workload;
    if (problem || typeof owner === 'string') throw new Error(`${action} of ${workload}: ${problem ?? String(owner)}`);
    return { namespace: owner.namespace, name: owner.name, resource: workloadResource(owner) };
  }

  /** Every Node's spec.podCIDRs (spec.podCIDR before dual-stack), or none where the run may not list Nodes. */
  private async podCidrs(): Promise<string[]> {
    const { status, body } = await this.client.request<{ items?: { spec?: { podCIDR?: string; podCIDRs?: string[] } }[] }>('GET', '/api/v1/nodes', { allow: [403] });
    if (status === 403) return [];
    return [...new Set((body.items ?? []).flatMap((n) => n.spec?.podCIDRs ?? (n.spec?.podCIDR ? [n.spec.podCIDR] : [])))];
  }

  /** Deployment status says the rollout is done: new generation observed, every replica updated and ready, no old pod left. */
  private async rolledOut(workload: string, expected?: number): Promise<boolean> {
    if (this.dataplane?.workload === workload) return this.classRolledOut(workload);
    if (this.charted.has(workload)) {
      // The chart's controller names its Deployment: the pods that carry the workload's label say it.
      const pods = this.pods(workload);
      return pods.filter((p) => p.phase === 'Running' && p.ready).length === (expected ?? 0) && pods.every((p) => p.phase !== 'Terminating');
    }
    const { body } = await this.client.request<{
      metadata?: { generation?: number };
      spec?: { replicas?: number };
      status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; readyReplicas?: number; availableReplicas?: number };
    }>('GET', `/apis/apps/v1/namespaces/${this.namespace}/deployments/${workload}`);
    const want = expected ?? body.spec?.replicas ?? 0;
    const s = body.status ?? {};
    const terminating = this.pods(workload).some((p) => p.phase === 'Terminating');
    return (
      (s.observedGeneration ?? 0) >= (body.metadata?.generation ?? 0) &&
      (s.updatedReplicas ?? 0) === want &&
      (s.readyReplicas ?? 0) === want &&
      (s.availableReplicas ?? 0) === want &&
      (s.replicas ?? 0) === want &&
      !terminating
    );
  }

  /**
   * The class's owning workload is rolled out: its controller saw the new generation, every
   * replica it wants is updated, and the dataplane pods the run watches are that many, ready, none
   * terminating (apps/v1 status: Deployment and StatefulSet `replicas`/`updatedReplicas`, DaemonSet
   * `desiredNumberScheduled`/`updatedNumberScheduled`).
   */
  private async classRolledOut(workload: string): Promise<boolean> {
    const owner = this.dataplane?.run.workload;
    if (!owner || typeof owner === 'string') return false;
    const resource = workloadResource(owner);
    const { body } = await this.client.request<{
      metadata?: { generation?: number };
      spec?: { replicas?: number };
      status?: { observedGeneration?: number; updatedReplicas?: number; desiredNumberScheduled?: number; updatedNumberScheduled?: number };
    }>('GET', `/apis/apps/v1/namespaces/${owner.namespace}/${resource}/${owner.name}`);
    const s = body.status ?? {};
    const want = owner.kind === 'DaemonSet' ? (s.desiredNumberScheduled ?? 0) : (body.spec?.replicas ?? 0);
    const updated = owner.kind === 'DaemonSet' ? s.updatedNumberScheduled : s.updatedReplicas;
    const pods = this.pods(workload);
    return (
      (s.observedGeneration ?? 0) >= (body.metadata?.generation ?? 0) &&
      (updated ?? 0) === want &&
      pods.length === want &&
      pods.every((p) => p.phase === 'Running' && p.ready)
    );
  }

  /** Records where each Service is reached; false while a LoadBalancer has no address yet. */
  private async resolveAddresses(topology: Topology, nodePorts: Record<string, Record<string, number>> | undefined): Promise<boolean> {
    const exposure = this.opts.exposure;
    for (const service of topology.services) {
      const { status, body } = await this.client.request<{
        spec?: { clusterIP?: string };
        status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } };
      }>('GET', `/api/v1/namespaces/${this.namespace}/services/${service.name}`, { allow: exposure.kind === 'nodePort' ? [404] : [] });
      const clusterIP = status === 404 ? undefined : body.spec?.clusterIP;
      if (clusterIP && clusterIP !== 'None') this.clusterAddresses.set(service.name, new Map(service.ports.map((p) => [p.name, { host: clusterIP, port: p.port }])));
      const ports = new Map<string, ServiceAddress>();
      if (exposure.kind === 'nodePort') {
        for (const p of service.ports) {
          const nodePort = nodePorts?.[service.name]?.[p.name];
          const mapping = exposure.ports.find((m) => m.nodePort === nodePort);
          if (mapping) ports.set(p.name, { host: exposure.host, port: mapping.hostPort });
        }
      } else {
        const ingress = body.status?.loadBalancer?.ingress?.[0];
        const host = ingress?.ip ?? ingress?.hostname;
        if (!host) return false;
        for (const p of service.ports) ports.set(p.name, { host, port: p.port });
      }
      this.addresses.set(service.name, ports);
    }
    return true;
  }

  private async pollUntil(done: () => Promise<boolean>, opts: { timeoutMs: number; signal: AbortSignal; what: string }): Promise<void> {
    const deadline = Date.now() + opts.timeoutMs;
    for (;;) {
      opts.signal.throwIfAborted();
      if (await done()) return;
      if (Date.now() > deadline) throw new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, this.opts.pollMs ?? 250);
        opts.signal.addEventListener('abort', () => {
          clearTimeout(timer);
          resolve();
        }, { once: true });
      });
    }
  }

  private requireObservers(): NamespaceObservers {
    if (!this.observers) throw new Error('nothing deployed yet');
    return this.observers;
  }

  private assertRunning(): void {
    if (this.stopping.signal.aborted) throw new Error(`${this.name} provider is torn down`);
  }
}
