// A Gateway API implementation already installed on the cluster, selected by its GatewayClass
// (`--gateway-class NAME`), the way the Gateway API conformance suite selects one. zerodrop leaves
// the class and the implementation as they were: per run it creates a Gateway and routes in the
// run's namespace, waits for them as the conformance suite does, finds the pods the controller
// generated for the Gateway, disrupts them through their owning workload, and deletes its own
// objects in dependency order.
//
// Upstream facts used here (kubernetes-sigs/gateway-api, conformance/utils):
// - timeouts (config/timeout.go): GWCMustBeAccepted, GatewayMustHaveCondition and
//   GatewayMustHaveAddress 180 s each;
// - a GatewayClass counts as ready when Accepted=True at its current generation
//   (kubernetes.GWCMustHaveAcceptedConditionTrue compares observedGeneration), a Gateway when
//   Accepted and Programmed; terminating pods are ignored when waiting for pods;
// - GEP-1762: what an implementation generates for a Gateway is labelled
//   gateway.networking.k8s.io/gateway-name=<name>, in the Gateway's namespace.
// Per-controller labels, for implementations that do not (yet) follow GEP-1762 in their default mode:
// - Envoy Gateway: gateway.envoyproxy.io/owning-gateway-name and -namespace on the proxy pods, which
//   live in the controller's namespace (envoyproxy/gateway internal/gatewayapi OwningGatewayNameLabel,
//   OwningGatewayNamespaceLabel);
// - STUNner: stunner.l7mp.io/related-gateway-name and -namespace on the dataplane pods
//   (l7mp/stunner-gateway-operator, DefaultRelatedGatewayKey and DefaultRelatedGatewayNamespace).
// Implementations that generate nothing per Gateway, whose one deployment serves every Gateway of
// the class (a shared dataplane), found by their controllerName and the labels their chart sets:
// - Traefik (traefik.io/gateway-controller, pkg/provider/kubernetes/gateway controllerName): its
//   Helm chart labels the pods app.kubernetes.io/name=traefik.

import type { ClusterProviderName } from '../kube-session.ts';
import { connect } from 'node:net';
import { serverSideApply } from './apply.ts';
import type { KubeClient } from './client.ts';
import type { GatewayClassSettings } from '../cluster-system.ts';
import { gatewayObjects, routeKindProblem, ROUTE_KINDS, validateGatewayObjects, type ListenerRoute } from './gateway-objects.ts';
import type { KubeObject } from './list-watch.ts';
import { LABELS } from './manifests.ts';

const GATEWAY_API = '/apis/gateway.networking.k8s.io/v1';

/** The class is missing, not ready in time, or its Gateway cannot be reached: the run cannot measure it. */
export class GatewayClassError extends Error {}

export interface WaitOptions {
  timeoutMs: number;
  pollMs?: number;
  signal?: AbortSignal;
}

interface Condition {
  type?: string;
  status?: string;
  reason?: string;
  message?: string;
  observedGeneration?: number;
}

type Status = { conditions?: Condition[]; supportedFeatures?: ({ name?: string } | string)[]; addresses?: GatewayAddress[] };
type Stated = KubeObject & { metadata: { generation?: number }; spec?: { controllerName?: string }; status?: Status };

/** A condition that is True for the object's current generation; undefined otherwise. */
function currentCondition(object: Stated, type: string): Condition | undefined {
  const c = object.status?.conditions?.find((x) => x.type === type);
  if (c?.status !== 'True') return undefined;
  const generation = object.metadata.generation;
  return generation === undefined || c.observedGeneration === generation ? c : undefined;
}

function describeCondition(object: Stated | undefined, type: string): string {
  if (!object) return `${type}: object not seen`;
  const c = object.status?.conditions?.find((x) => x.type === type);
  if (!c) return `${type}: no condition yet`;
  const stale = object.metadata.generation !== undefined && c.observedGeneration !== object.metadata.generation;
  const at = stale ? ` for generation ${c.observedGeneration ?? '?'} (current ${object.metadata.generation})` : '';
  return `${type}=${c.status ?? '?'}${c.reason ? ` (${c.reason}${c.message ? `: ${c.message}` : ''})` : ''}${at}`;
}

async function pause(ms: number, signal?: AbortSignal): Promise<void> {
  await new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => { clearTimeout(timer); resolve(); }, { once: true });
  });
}

/** Calls `check` until it returns something, the deadline passes (GatewayClassError from `late`), or the signal aborts. */
async function poll<T>(check: () => Promise<T | undefined>, opts: WaitOptions, late: () => string): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    if (opts.signal?.aborted) throw new GatewayClassError('aborted');
    const found = await check();
    if (found !== undefined) return found;
    if (Date.now() >= deadline) throw new GatewayClassError(late());
    await pause(Math.min(opts.pollMs ?? 1_000, Math.max(1, deadline - Date.now())), opts.signal);
  }
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(ms % 1000 === 0 ? 0 : 1)} s`;

export interface GatewayClassInfo {
  name: string;
  controllerName: string;
  /** status.supportedFeatures by name (GEP-2162; plain strings in releases before v1.2). */
  supportedFeatures: string[];
}

/**
 * Waits for the class to be Accepted at its current generation and returns what it says about
 * itself. A class that does not exist is an error at once, naming the classes that do: it has to
 * be installed before the run, and no wait makes it appear.
 */
export async function waitForGatewayClass(client: KubeClient, name: string, opts: WaitOptions): Promise<GatewayClassInfo> {
  const path = `${GATEWAY_API}/gatewayclasses/${name}`;
  let last: Stated | undefined;
  const accepted = await poll(
    async () => {
      const { status, body } = await client.request<Stated>('GET', path, { allow: [404] });
      if (status === 404) {
        const { body: list } = await client.request<{ items?: Stated[] }>('GET', `${GATEWAY_API}/gatewayclasses`, { allow: [404] });
        const names = (list?.items ?? []).map((c) => c.metadata.name);
        throw new GatewayClassError(`GatewayClass ${name} not found; ${names.length > 0 ? `installed: ${names.join(', ')}` : 'no GatewayClass is installed (install the implementation first)'}`);
      }
      last = body;
      return currentCondition(body, 'Accepted') ? body : undefined;
    },
    opts,
    () => `GatewayClass ${name} not Accepted within ${seconds(opts.timeoutMs)}: ${describeCondition(last, 'Accepted')}; is its controller (${last?.spec?.controllerName ?? '?'}) running? (raise the wait with gatewayTimeouts.gatewayClassMustBeAccepted)`,
  );
  const features = (accepted.status?.supportedFeatures ?? []).map((f) => (typeof f === 'string' ? f : (f.name ?? ''))).filter((f) => f !== '');
  return { name, controllerName: accepted.spec?.controllerName ?? '', supportedFeatures: features };
}

export interface GatewayAddress {
  type?: string;
  value: string;
}

/** Waits for the Gateway to be Accepted and Programmed at its current generation; returns its status.addresses. */
export async function waitForGateway(client: KubeClient, namespace: string, name: string, opts: { conditionMs: number; addressMs: number; pollMs?: number; signal?: AbortSignal }): Promise<GatewayAddress[]> {
  const path = `${GATEWAY_API}/namespaces/${namespace}/gateways/${name}`;
  let last: Stated | undefined;
  const wait = { pollMs: opts.pollMs ?? 1_000, ...(opts.signal ? { signal: opts.signal } : {}) };
  const get = async () => {
    last = (await client.request<Stated>('GET', path)).body;
    return last;
  };
  await poll(
    async () => {
      const gw = await get();
      return currentCondition(gw, 'Accepted') && currentCondition(gw, 'Programmed') ? gw : undefined;
    },
    { ...wait, timeoutMs: opts.conditionMs },
    () => `Gateway ${namespace}/${name} not Accepted and Programmed within ${seconds(opts.conditionMs)}: ${describeCondition(last, 'Accepted')}, ${describeCondition(last, 'Programmed')} (raise the wait with gatewayTimeouts.gatewayMustHaveCondition)`,
  );
  return poll(
    async () => {
      const addresses = (await get()).status?.addresses ?? [];
      return addresses.length > 0 ? addresses : undefined;
    },
    { ...wait, timeoutMs: opts.addressMs },
    () => `Gateway ${namespace}/${name} is Programmed but has no status.addresses after ${seconds(opts.addressMs)}; on kind, a LoadBalancer address needs MetalLB or cloud-provider-kind (raise the wait with gatewayTimeouts.gatewayMustHaveAddress)`,
  );
}

/** How the harness reaches one listener of the Gateway from where it runs. */
export interface GatewayEndpoint {
  host: string;
  port: number;
  /** Which address it is and why, for the run's notes. */
  via: string;
}

export type ServiceLike = KubeObject & { spec?: { type?: string; ports?: { port?: number; nodePort?: number; protocol?: string }[] } };

/**
 * Where to send a listener's traffic. On kind the host reaches only the NodePorts zerodrop's cluster
 * publishes on 127.0.0.1 (30040-30047), and on netns only those on the first node's address, so the
 * Gateway is reached through the generated Service's NodePort for the listener; elsewhere at the first address of status.addresses of type IPAddress or
 * Hostname (an entry without a type is an IPAddress, Gateway API's default), on the listener's port.
 */
export function chooseEndpoint(opts: {
  provider: ClusterProviderName;
  gateway: string;
  listenerPort: number;
  addresses: readonly GatewayAddress[];
  /** The Services found with the Gateway's dataplane (kind, k3s). */
  services: readonly ServiceLike[];
  /** kind, k3s and netns: NodePort -> host port published for it. */
  published: ReadonlyMap<number, number>;
  /** Where the published ports are (kind: 127.0.0.1; netns: the first node's address; k3s: the container's host). */
  publishedHost?: string;
}): GatewayEndpoint {
  if (opts.provider !== 'cluster') {
    const exposures: string[] = [];
    for (const service of opts.services) {
      const port = service.spec?.ports?.find((p) => p.port === opts.listenerPort);
      if (port?.nodePort === undefined) continue;
      const hostPort = opts.published.get(port.nodePort);
      if (hostPort !== undefined) return { host: opts.publishedHost ?? '127.0.0.1', port: hostPort, via: `Service ${service.metadata.namespace ?? ''}/${service.metadata.name} NodePort ${port.nodePort}` };
      exposures.push(`${service.metadata.name} has NodePort ${port.nodePort}`);
    }
    const published = [...opts.published.keys()].sort((a, b) => a - b);
    throw new GatewayClassError(
      `Gateway ${opts.gateway} is not reachable from the host: ${exposures.length > 0 ? exposures.join(', ') : `no Service of its dataplane has a NodePort for port ${opts.listenerPort}`}, ` +
        `and ${opts.provider} publishes only NodePorts ${published.join(', ')}; configure the implementation's Service as NodePort on one of them (or run on a cluster with load balancer addresses: --provider cluster)`,
    );
  }
  const address = opts.addresses.find((a) => a.type === undefined || a.type === 'IPAddress' || a.type === 'Hostname');
  if (!address) {
    throw new GatewayClassError(`Gateway ${opts.gateway} has no IPAddress or Hostname in status.addresses (${opts.addresses.map((a) => `${a.type ?? ''}:${a.value}`).join(', ') || 'none'})`);
  }
  return { host: address.value, port: opts.listenerPort, via: `status.addresses ${address.type ?? 'IPAddress'} ${address.value}` };
}

/** Resolves when a TCP connection to the endpoint opens; rejects with GatewayClassError naming it otherwise. */
export async function probeTcp(endpoint: GatewayEndpoint, timeoutMs = 5_000): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host: endpoint.host, port: endpoint.port });
    const fail = (why: string) => {
      socket.destroy();
      reject(new GatewayClassError(`the Gateway at ${endpoint.host}:${endpoint.port} (${endpoint.via}) is not reachable from the host: ${why}`));
    };
    socket.setTimeout(timeoutMs, () => fail(`no connection within ${seconds(timeoutMs)}`));
    socket.once('error', (err) => fail(err.message));
    socket.once('connect', () => {
      socket.destroy();
      resolve();
    });
  });
}

export type DiscoveryRule = 'dataplane-selector' | 'gep-1762' | 'envoy-gateway' | 'stunner' | 'traefik';

export interface PodLike extends KubeObject {
  metadata: KubeObject['metadata'] & { labels?: Record<string, string>; deletionTimestamp?: string; ownerReferences?: OwnerReference[] };
  spec?: { terminationGracePeriodSeconds?: number; containers?: { name: string; lifecycle?: { preStop?: PreStopHandler } }[] };
}

export interface OwnerReference {
  kind: string;
  name: string;
  controller?: boolean;
}

export interface Discovery {
  rule: DiscoveryRule;
  /** The label selector that found them, and where it was applied (a namespace, or every namespace). */
  selector: string;
  namespace: string | undefined;
  pods: PodLike[];
  /** For the run's notes: which rule found the pods, and which were tried first. */
  explanation: string;
}

const ruleText: Record<DiscoveryRule, string> = {
  'dataplane-selector': '--dataplane-selector',
  'gep-1762': 'the GEP-1762 label',
  'envoy-gateway': "Envoy Gateway's owning-gateway labels",
  stunner: "STUNner's related-gateway labels",
  traefik: "Traefik's shared dataplane (its chart's pod labels; one Deployment serves every Gateway of the class)",
};

/** Shared dataplanes by controllerName: the selector of their pods (in any namespace). */
const SHARED_DATAPLANES: Readonly<Record<string, { rule: DiscoveryRule; selector: string }>> = {
  'traefik.io/gateway-controller': { rule: 'traefik', selector: 'app.kubernetes.io/name=traefik' },
};

/**
 * The pods the controller generated for the Gateway, by the first rule that finds any: the user's
 * selector, else GEP-1762's gateway-name label in the Gateway's namespace, else the per-controller
 * labels (in any namespace: Envoy Gateway runs its proxies in its own), else, on a cluster the run
 * has to itself (`sharedDataplane`), the shared dataplane of the class's controller: disrupting it
 * disrupts every Gateway of the class, which only the run's own cluster can afford unasked.
 * Terminating pods are left out, as the conformance suite leaves them out.
 */
export async function findDataplanePods(
  client: KubeClient,
  opts: { namespace: string; gateway: string; selector?: string | undefined; controllerName?: string; sharedDataplane?: boolean },
): Promise<Discovery> {
  const shared = opts.controllerName === undefined ? undefined : SHARED_DATAPLANES[opts.controllerName];
  const candidates: { rule: DiscoveryRule; selector: string; namespace: string | undefined }[] = opts.selector !== undefined
    ? [{ rule: 'dataplane-selector', selector: opts.selector, namespace: undefined }]
    : [
        { rule: 'gep-1762', selector: `gateway.networking.k8s.io/gateway-name=${opts.gateway}`, namespace: opts.namespace },
        { rule: 'envoy-gateway', selector: `gateway.envoyproxy.io/owning-gateway-name=${opts.gateway},gateway.envoyproxy.io/owning-gateway-namespace=${opts.namespace}`, namespace: undefined },
        { rule: 'stunner', selector: `stunner.l7mp.io/related-gateway-name=${opts.gateway},stunner.l7mp.io/related-gateway-namespace=${opts.namespace}`, namespace: undefined },
        ...(shared && opts.sharedDataplane === true ? [{ ...shared, namespace: undefined }] : []),
      ];
  const tried: string[] = [];
  for (const c of candidates) {
    const path = c.namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${c.namespace}/pods`;
    const { body } = await client.request<{ items?: PodLike[] }>('GET', path, { query: { labelSelector: c.selector } });
    const pods = (body.items ?? []).filter((p) => p.metadata.deletionTimestamp === undefined);
    const where = c.namespace === undefined ? 'in every namespace' : `in namespace ${c.namespace}`;
    if (pods.length > 0) {
      const before = tried.length > 0 ? ` (nothing by ${tried.join(', then ')})` : '';
      return { ...c, pods, explanation: `dataplane pods of Gateway ${opts.namespace}/${opts.gateway} found by ${ruleText[c.rule]}: ${c.selector} ${where}${before}` };
    }
    tried.push(`${ruleText[c.rule]} (${c.selector} ${where})`);
  }
  const unasked = shared && opts.sharedDataplane !== true ? ` ${ruleText[shared.rule]} is not disrupted unasked on a cluster shared with others: name it with --dataplane-selector ${shared.selector} to accept that.` : '';
  throw new GatewayClassError(
    `no running dataplane pods found for Gateway ${opts.namespace}/${opts.gateway}: tried ${tried.join('; ')}. ` +
      (opts.selector !== undefined ? 'Check --dataplane-selector.' : 'Name them with --dataplane-selector KEY=VALUE[,KEY=VALUE].') +
      unasked,
  );
}

export interface OwningWorkload {
  kind: 'Deployment' | 'StatefulSet' | 'DaemonSet';
  namespace: string;
  name: string;
  /** The workload's own controlling owner (e.g. the Gateway or a controller's custom resource), if any. */
  controlledBy: OwnerReference | undefined;
}

type Owned = KubeObject & { metadata: { ownerReferences?: OwnerReference[] } };
const controllerOf = (o: Owned) => o.metadata.ownerReferences?.find((r) => r.controller === true);

/** The workload that owns a pod (through its ReplicaSet for a Deployment), or the reason there is none. */
export async function owningWorkload(client: KubeClient, pod: PodLike): Promise<OwningWorkload | string> {
  const namespace = pod.metadata.namespace ?? '';
  const owner = controllerOf(pod);
  if (!owner) return `pod ${namespace}/${pod.metadata.name} has no owning workload`;
  const get = async (plural: string, name: string) => (await client.request<Owned>('GET', `/apis/apps/v1/namespaces/${namespace}/${plural}/${name}`)).body;
  if (owner.kind === 'ReplicaSet') {
    const rs = await get('replicasets', owner.name);
    const deployment = controllerOf(rs);
    if (deployment?.kind !== 'Deployment') return `ReplicaSet ${namespace}/${owner.name} of pod ${pod.metadata.name} belongs to no Deployment`;
    return { kind: 'Deployment', namespace, name: deployment.name, controlledBy: controllerOf(await get('deployments', deployment.name)) };
  }
  if (owner.kind === 'StatefulSet' || owner.kind === 'DaemonSet') {
    return { kind: owner.kind, namespace, name: owner.name, controlledBy: controllerOf(await get(owner.kind === 'StatefulSet' ? 'statefulsets' : 'daemonsets', owner.name)) };
  }
  return `pod ${namespace}/${pod.metadata.name} is owned by a ${owner.kind} (${owner.name}), which zerodrop cannot scale or roll`;
}

/** The apps/v1 resource a workload is served as. */
export function workloadResource(workload: OwningWorkload): 'deployments' | 'statefulsets' | 'daemonsets' {
  return workload.kind === 'Deployment' ? 'deployments' : workload.kind === 'StatefulSet' ? 'statefulsets' : 'daemonsets';
}

/**
 * The workload is as its controller wants it (apps/v1 status): the newest generation observed, and
 * every replica it wants updated and ready, none else counted. What a class's shared dataplane must
 * be again before the next run meets it.
 */
export async function workloadSettled(client: KubeClient, workload: OwningWorkload): Promise<boolean> {
  const { body } = await client.request<{
    metadata?: { generation?: number };
    spec?: { replicas?: number };
    status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; readyReplicas?: number; desiredNumberScheduled?: number; updatedNumberScheduled?: number; numberReady?: number };
  }>('GET', `/apis/apps/v1/namespaces/${workload.namespace}/${workloadResource(workload)}/${workload.name}`);
  const s = body.status ?? {};
  if ((s.observedGeneration ?? 0) < (body.metadata?.generation ?? 0)) return false;
  if (workload.kind === 'DaemonSet') {
    const want = s.desiredNumberScheduled ?? 0;
    return (s.updatedNumberScheduled ?? 0) === want && (s.numberReady ?? 0) === want;
  }
  // apps/v1 defaults spec.replicas to 1.
  const want = body.spec?.replicas ?? 1;
  return (s.replicas ?? 0) === want && (s.updatedReplicas ?? 0) === want && (s.readyReplicas ?? 0) === want;
}

/**
 * Why scaling the dataplane cannot be measured, or undefined when it can. A workload that another
 * object controls has its replicas set by that object's controller, which would undo a scale while
 * the scenario measures it; the per-controller discovery rules mean the controller renders the
 * workload from its own configuration (EnvoyProxy, STUNner's Dataplane) and owns replicas as well.
 */
export function scaleProblem(workload: OwningWorkload | string, rule: DiscoveryRule): string | undefined {
  if (typeof workload === 'string') return workload;
  if (workload.kind === 'DaemonSet') return `the dataplane is DaemonSet ${workload.namespace}/${workload.name}: it runs one pod per node and has no replicas to scale`;
  if (workload.controlledBy) return `${workload.controlledBy.kind} ${workload.controlledBy.name} controls ${workload.kind} ${workload.namespace}/${workload.name} and owns its replicas`;
  if (rule === 'envoy-gateway' || rule === 'stunner') return `${ruleText[rule].replace(/'s .*/, '')} renders ${workload.kind} ${workload.namespace}/${workload.name} from its own configuration and owns its replicas`;
  return undefined;
}

/**
 * Why restarting the dataplane cannot be measured, or undefined when it can: a workload another
 * object controls, or one the controller renders from its own configuration, has its pod template
 * rewritten by that controller, which may undo the restart annotation rather than roll the pods.
 */
export function rollProblem(workload: OwningWorkload | string, rule: DiscoveryRule): string | undefined {
  if (typeof workload === 'string') return workload;
  if (workload.controlledBy) return `${workload.controlledBy.kind} ${workload.controlledBy.name} controls ${workload.kind} ${workload.namespace}/${workload.name} and owns its pod template`;
  if (rule === 'envoy-gateway' || rule === 'stunner') return `${ruleText[rule].replace(/'s .*/, '')} renders ${workload.kind} ${workload.namespace}/${workload.name} from its own configuration and owns its pod template`;
  return undefined;
}

type PreStopHandler = { sleep?: { seconds?: number }; exec?: { command?: string[] }; httpGet?: unknown };

/**
 * The drain bounds a pod's spec states: the kubelet waits for preStop, then sends SIGTERM, and kills
 * at terminationGracePeriodSeconds (default 30) after the delete
 * (https://kubernetes.io/docs/concepts/containers/container-lifecycle-hooks/). A sleep preStop is a
 * minimum drain; an exec or HTTP preStop has no duration the spec states, so its minimum is 0.
 */
export function drainBoundsOf(pod: PodLike): { minDrainSeconds: number; drainTimeoutSeconds: number; source: string } {
  const grace = pod.spec?.terminationGracePeriodSeconds ?? 30;
  const hooks = (pod.spec?.containers ?? []).map((c) => ({ name: c.name, preStop: c.lifecycle?.preStop })).filter((h) => h.preStop !== undefined);
  const sleeps = hooks.map((h) => h.preStop?.sleep?.seconds ?? 0);
  const min = Math.min(grace, Math.max(0, ...sleeps));
  const hookText = hooks.length === 0 ? 'no preStop' : hooks.map((h) => `${h.name}: ${h.preStop?.sleep ? `sleep ${h.preStop.sleep.seconds ?? 0} s` : h.preStop?.exec ? 'exec' : 'httpGet'}`).join(', ');
  return { minDrainSeconds: min, drainTimeoutSeconds: grace, source: `pod ${pod.metadata.name}: terminationGracePeriodSeconds ${grace}${pod.spec?.terminationGracePeriodSeconds === undefined ? ' (default)' : ''}, preStop ${hookText}` };
}

/** Applies the run's Gateway, then its routes, after validating all of them: nothing is created when one is bad. */
export async function applyGatewayObjects(client: KubeClient, objects: { gateway: KubeObject; routes: KubeObject[] }, signal?: AbortSignal): Promise<void> {
  validateGatewayObjects([objects.gateway, ...objects.routes]);
  for (const object of [objects.gateway, ...objects.routes]) await serverSideApply(client, object, signal);
}

function pathOf(object: KubeObject): string {
  const namespace = object.metadata.namespace ?? '';
  if (object.kind === 'Gateway') return `${GATEWAY_API}/namespaces/${namespace}/gateways/${object.metadata.name}`;
  const route = ROUTE_KINDS[object.kind as keyof typeof ROUTE_KINDS];
  return `/apis/${route.apiVersion}/namespaces/${namespace}/${route.plural}/${object.metadata.name}`;
}

/**
 * Deletes the run's routes, waits until they are gone, then deletes its Gateway and waits for it:
 * a Gateway deleted under its routes leaves them with a missing parent, and the controller tears
 * the dataplane down only once the Gateway has gone. Only objects labelled with the run are
 * deleted; the GatewayClass and the implementation are never touched. Returns the deleted paths, in order.
 */
export async function teardownGatewayObjects(client: KubeClient, objects: { gateway: KubeObject; routes: KubeObject[] }, opts: { runId: string; timeoutMs: number; pollMs?: number }): Promise<string[]> {
  const deleted: string[] = [];
  const wait = { timeoutMs: opts.timeoutMs, pollMs: opts.pollMs ?? 500 };
  const deleteAll = async (group: KubeObject[]) => {
    const paths: string[] = [];
    for (const object of group) {
      const path = pathOf(object);
      const { status, body } = await client.request<Owned & { metadata: { labels?: Record<string, string> } }>('GET', path, { allow: [404] });
      if (status === 404) continue;
      if (body.metadata.labels?.[LABELS.run] !== opts.runId) throw new GatewayClassError(`${path} is not labelled ${LABELS.run}=${opts.runId}; refusing to delete it`);
      await client.request('DELETE', path, { allow: [404] });
      deleted.push(path);
      paths.push(path);
    }
    for (const path of paths) {
      await poll(
        async () => ((await client.request('GET', path, { allow: [404] })).status === 404 ? true : undefined),
        wait,
        () => `${path} still exists ${seconds(opts.timeoutMs)} after its delete (a finalizer its controller did not remove?)`,
      );
    }
  };
  await deleteAll(objects.routes);
  await deleteAll([objects.gateway]);
  return deleted;
}

/**
 * Points a route of the run at another backend Service, as a user or a GitOps tool would: the route
 * applied again with its new backendRefs (server-side apply, as `kubectl apply --server-side` and
 * Flux do; a CRD's `rules` list is replaced whole), or, with `recreate`, deleted, waited for until
 * gone, and created again with them, as a pipeline that replaces objects does. Returns the route as
 * written.
 */
export async function moveRoute(
  client: KubeClient,
  route: KubeObject,
  to: { service: string; port: number },
  opts: { recreate: boolean; runId: string; timeoutMs: number; pollMs?: number; signal?: AbortSignal },
): Promise<KubeObject> {
  const moved: KubeObject = { ...route, spec: { ...(route['spec'] as object), rules: [{ backendRefs: [{ name: to.service, port: to.port }] }] } };
  validateGatewayObjects([moved]);
  if (opts.recreate) {
    const path = pathOf(route);
    const { status, body } = await client.request<KubeObject & { metadata: { labels?: Record<string, string> } }>('GET', path, { allow: [404] });
    if (status !== 404) {
      if (body.metadata.labels?.[LABELS.run] !== opts.runId) throw new GatewayClassError(`${path} is not labelled ${LABELS.run}=${opts.runId}; refusing to delete it`);
      await client.request('DELETE', path, { allow: [404] });
      await poll(
        async () => ((await client.request('GET', path, { allow: [404] })).status === 404 ? true : undefined),
        { timeoutMs: opts.timeoutMs, pollMs: opts.pollMs ?? 100, ...(opts.signal ? { signal: opts.signal } : {}) },
        () => `${path} still exists ${seconds(opts.timeoutMs)} after its delete (a finalizer its controller did not remove?)`,
      );
    }
  }
  await serverSideApply(client, moved, opts.signal);
  return moved;
}

export interface GatewayClassRunOptions {
  settings: GatewayClassSettings;
  provider: ClusterProviderName;
  namespace: string;
  runId: string;
  listeners: readonly ListenerRoute[];
  /** kind, k3s and netns: NodePort -> host port the cluster publishes, and where. */
  published: ReadonlyMap<number, number>;
  publishedHost?: string;
  gatewayName?: string;
  pollMs?: number;
  signal?: AbortSignal;
  /** Checks that the host reaches a TCP listener (default probeTcp); UDP listeners are not probed. */
  probe?: (endpoint: GatewayEndpoint) => Promise<void>;
}

export interface GatewayClassRun {
  info: GatewayClassInfo;
  objects: { gateway: KubeObject; routes: KubeObject[] };
  /** Where each listener is reached, by listener port. */
  endpoints: Map<number, GatewayEndpoint>;
  discovery: Discovery;
  /** The Services found with the dataplane (same selector, same namespace). */
  services: ServiceLike[];
  workload: OwningWorkload | string;
  /** Why scaling cannot be measured on this dataplane, if it cannot. */
  scaleProblem: string | undefined;
  /** Why a rollout restart cannot be measured on this dataplane, if it cannot. */
  rollProblem: string | undefined;
  drain: ReturnType<typeof drainBoundsOf>;
  /** For the run's Timeline: what was found, by which rule, and where the traffic goes. */
  notes: string[];
  teardown(): Promise<string[]>;
}

/**
 * The whole flow for one run, or the reason to skip it. Nothing is created before the class is
 * Accepted and every route kind is supported; once the Gateway is applied, any later failure
 * deletes what was created before the error is passed on, so that nothing is left half-made.
 */
export async function openGatewayClassRun(client: KubeClient, opts: GatewayClassRunOptions): Promise<GatewayClassRun | { skipped: string }> {
  const { settings } = opts;
  const wait = { pollMs: opts.pollMs ?? 1_000, ...(opts.signal ? { signal: opts.signal } : {}) };
  const info = await waitForGatewayClass(client, settings.name, { ...wait, timeoutMs: settings.timeouts.gatewayClassMustBeAccepted });
  const unsupportedKinds = [...new Set(opts.listeners.map((l) => l.kind))].map((kind) => routeKindProblem(info.name, kind, info.supportedFeatures)).filter((p) => p !== undefined);
  if (unsupportedKinds.length > 0) return { skipped: unsupportedKinds.join('; ') };

  const gatewayName = opts.gatewayName ?? 'zerodrop';
  const objects = gatewayObjects({ namespace: opts.namespace, runId: opts.runId, gatewayName, className: info.name, listeners: opts.listeners, supportedFeatures: info.supportedFeatures });
  const teardown = () => teardownGatewayObjects(client, objects, { runId: opts.runId, timeoutMs: settings.timeouts.gatewayMustHaveCondition, pollMs: wait.pollMs });
  try {
    await applyGatewayObjects(client, objects, opts.signal);
    const addresses = await waitForGateway(client, opts.namespace, gatewayName, { ...wait, conditionMs: settings.timeouts.gatewayMustHaveCondition, addressMs: settings.timeouts.gatewayMustHaveAddress });
    const discovery = await findDataplanePods(client, {
      namespace: opts.namespace,
      gateway: gatewayName,
      selector: settings.dataplaneSelector,
      controllerName: info.controllerName,
      // An existing cluster is shared with others; a kind, k3s or netns cluster is the run's.
      sharedDataplane: opts.provider !== 'cluster',
    });
    const podNamespace = discovery.pods[0]?.metadata.namespace ?? opts.namespace;
    const services = (await client.request<{ items?: ServiceLike[] }>('GET', `/api/v1/namespaces/${podNamespace}/services`, { query: { labelSelector: discovery.selector } })).body.items ?? [];
    const endpoints = new Map<number, GatewayEndpoint>();
    for (const listener of opts.listeners) {
      const endpoint = chooseEndpoint({ provider: opts.provider, gateway: `${opts.namespace}/${gatewayName}`, listenerPort: listener.port, addresses, services, published: opts.published, ...(opts.publishedHost !== undefined ? { publishedHost: opts.publishedHost } : {}) });
      if (listener.kind !== 'UDPRoute') await (opts.probe ?? probeTcp)(endpoint);
      endpoints.set(listener.port, endpoint);
    }
    const [first] = discovery.pods;
    if (!first) throw new GatewayClassError('no dataplane pod');
    const workload = await owningWorkload(client, first);
    const drain = drainBoundsOf(first);
    const notes = [
      `GatewayClass ${info.name}: controller ${info.controllerName}, supportedFeatures ${info.supportedFeatures.join(', ') || '(none published)'}`,
      discovery.explanation,
      ...[...endpoints].map(([port, e]) => `listener ${port} reached at ${e.host}:${e.port} (${e.via})`),
      `drain bounds from ${drain.source}`,
    ];
    return { info, objects, endpoints, discovery, services, workload, scaleProblem: scaleProblem(workload, discovery.rule), rollProblem: rollProblem(workload, discovery.rule), drain, notes, teardown };
  } catch (error) {
    await teardown().catch(() => undefined);
    throw error;
  }
}
