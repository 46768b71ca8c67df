// `--gateway-class` as the kube provider's gateway role, end to end against the fake API server:
// a controller played by the test accepts the class, programs the Gateway and creates a dataplane
// Deployment with its pods (in its own namespace, or in the run's); the provider deploys a gateway
// scenario built with the class's profile, the scenario's chaos runs on the discovered pods, and
// teardown deletes routes, then the Gateway, then the namespace, never touching the class.

import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runChaosAction } from '../../chaos/actions.ts';
import type { Scenario } from '../../model/scenario.ts';
import { Recorder } from '../../observe/recorder.ts';
import { packageRoot } from '../../paths.ts';
import { optionsFor } from '../../runner/run-matrix.ts';
import { runScenario } from '../../runner/run-scenario.ts';
import { gatewayClassProfile, withDrain } from '../../scenarios/gateway-class-profile.ts';
import { catalog, findScenario } from '../../scenarios/index.ts';
import { ProfileCannotPlay } from '../../profiles/profile.ts';
import type { GatewayClassSettings } from '../cluster-system.ts';
import { PUBLISHED_NODE_PORTS } from '../kind/kind.ts';
import { KubeClient, PATCH } from './client.ts';
import { FakeApiServer, selects } from '../../../test-support/fake-api-server.ts';
import { KubeProvider } from './kube-provider.ts';

const RUN = 'c1a55e00';
const NS = `zerodrop-${RUN}`;
const EG_NS = 'envoy-gateway-system';
const CLASS = 'acme';
const CLASS_PATH = `/apis/gateway.networking.k8s.io/v1/gatewayclasses/${CLASS}`;
const GW_PATH = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways/zerodrop`;
const ROUTE_PATH = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/zerodrop-httproute-8000`;
/** The NodePort the test's controller gives the generated Service: the last one kind publishes. */
const CLASS_NODE_PORT = PUBLISHED_NODE_PORTS.at(-1)!.nodePort;
const FAST: GatewayClassSettings['timeouts'] = { gatewayClassMustBeAccepted: 1_000, gatewayMustHaveCondition: 1_000, gatewayMustHaveAddress: 1_000 };

type Obj = { metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown }; [k: string]: unknown };

const pods = (ns: string) => `/api/v1/namespaces/${ns}/pods`;
const slices = (ns: string) => `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
const events = (ns: string) => `/api/v1/namespaces/${ns}/events`;
const condition = (type: string) => ({ type, status: 'True', observedGeneration: 1, reason: type });

function runningPod(ns: string, name: string, labels: Record<string, string>, extra: Partial<Obj> = {}): Obj {
  const spec = (extra['spec'] ?? { containers: [{ name: 'main' }] }) as { containers: { name: string }[] };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels, uid: `uid-${name}` },
    spec,
    status: { podIP: '10.244.1.1', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: spec.containers.map((c) => ({ name: c.name, restartCount: 0, state: { running: {} } })) },
    ...extra,
  };
}

type Placement = 'envoy-gateway' | 'gep-1762' | 'selector';

/**
 * The cluster: the fake API server's collections for what is watched, a store for single objects,
 * kube's controllers for the run's own Deployments, and the implementation's controller, which
 * reacts to the Gateway as `placement` says.
 */
class SimCluster {
  readonly objects = new Map<string, Obj>();
  /** The pods put into the watched collections, by namespace/name. */
  private readonly pods = new Map<string, Obj>();
  namespaceApplied = false;
  namespaceDeleted = false;
  readonly fake: FakeApiServer;
  readonly placement: Placement;
  constructor(fake: FakeApiServer, placement: Placement, opts: { features: string[]; gatewayOwned?: boolean; classAccepted?: boolean; stuckScale?: boolean }) {
    this.fake = fake;
    this.placement = placement;
    for (const ns of [NS, EG_NS]) for (const p of [pods(ns), slices(ns), events(ns)]) fake.serve(p);
    this.objects.set(CLASS_PATH, {
      metadata: { name: CLASS, generation: 1 },
      spec: { controllerName: 'acme.io/gateway' },
      status: { conditions: opts.classAccepted === false ? [] : [condition('Accepted')], supportedFeatures: opts.features.map((name) => ({ name })) },
    });
    // The controller's own pod, beside its proxies: never the run's.
    fake.put(pods(EG_NS), runningPod(EG_NS, 'acme-controller-0', { app: 'acme-controller' }));
    fake.respond((r) => {
      const ns = /^\/api\/v1\/namespaces\/([^/]+)$/.exec(r.path)?.[1];
      if (ns === NS && r.method === 'GET') return this.namespaceApplied && !this.namespaceDeleted ? { status: 200, body: { metadata: { name: NS, labels: { 'zerodrop.dev/run': RUN } } } } : { status: 404, body: { code: 404 } };
      if (ns === NS && r.method === 'DELETE') {
        this.namespaceDeleted = true;
        return { status: 200, body: {} };
      }
      const services = /^\/api\/v1\/namespaces\/([^/]+)\/services$/.exec(r.path);
      if (services && r.method === 'GET') {
        const items = [...this.objects.entries()].filter(([p]) => p.startsWith(`/api/v1/namespaces/${services[1]}/services/`)).map(([, o]) => o);
        return { status: 200, body: { items: this.namespaceDeleted && services[1] === NS ? [] : items.filter((o) => selects(r.query['labelSelector'], o)) } };
      }
      if (r.method === 'GET' && r.path === '/apis/gateway.networking.k8s.io/v1/gatewayclasses') return { status: 200, body: { items: [this.objects.get(CLASS_PATH)] } };
      const podPath = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)$/.exec(r.path);
      if (podPath && r.method === 'DELETE') {
        this.terminate(podPath[1] ?? '', podPath[2] ?? '');
        return { status: 200, body: {} };
      }
      if (r.method === 'PATCH' && r.contentType === PATCH.apply) return { status: 200, body: this.apply(r.path, r.body as Obj, opts) };
      if (r.method === 'PATCH' && r.contentType === PATCH.strategic && this.objects.has(r.path)) return { status: 200, body: this.restart(r.path) };
      const scaled = /^(.*\/deployments\/[^/]+)\/scale$/.exec(r.path)?.[1];
      const deployment = scaled === undefined ? undefined : this.objects.get(scaled);
      if (scaled !== undefined && deployment && r.method === 'GET') return { status: 200, body: { spec: { replicas: (deployment['spec'] as { replicas: number }).replicas } } };
      if (scaled !== undefined && deployment && r.method === 'PATCH') return { status: 200, body: this.scale(scaled, (r.body as { spec: { replicas: number } }).spec.replicas, opts.stuckScale === true) };
      if (r.method === 'PATCH') return { status: 200, body: { metadata: { generation: 2 } } };
      if (r.method === 'GET') {
        const o = this.objects.get(r.path);
        return o ? { status: 200, body: o } : { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound' } };
      }
      if (r.method === 'DELETE') {
        this.objects.delete(r.path);
        return { status: 200, body: {} };
      }
      return undefined;
    });
  }

  /** When the controller observed the restart (the Deployment's observedGeneration caught up). */
  restartObservedAt: number | undefined;

  /** `kubectl rollout restart` of a dataplane Deployment: a new generation, which its controller observes a little later. */
  private restart(path: string): Obj {
    const current = this.objects.get(path)!;
    const generation = ((current.metadata['generation'] as number | undefined) ?? 1) + 1;
    const next: Obj = { ...current, metadata: { ...current.metadata, generation } };
    this.objects.set(path, next);
    setTimeout(() => {
      this.observe(path, generation);
      this.restartObservedAt = performance.now();
    }, 150);
    return next;
  }

  /** The Deployment's controller caught up with `generation` (never back to an older one), its status as given. */
  private observe(path: string, generation: number, status: Record<string, number> = {}): void {
    const now = this.objects.get(path)!;
    const before = (now['status'] ?? {}) as { observedGeneration?: number };
    this.objects.set(path, { ...now, status: { ...before, ...status, observedGeneration: Math.max(before.observedGeneration ?? 0, generation) } });
  }

  /** A scale of a dataplane Deployment: a new generation and spec.replicas, its status caught up a little later (never, when `stuck`). */
  private scale(path: string, replicas: number, stuck: boolean): { spec: { replicas: number } } {
    const current = this.objects.get(path)!;
    const generation = ((current.metadata['generation'] as number | undefined) ?? 1) + 1;
    const next: Obj = { ...current, metadata: { ...current.metadata, generation }, spec: { ...(current['spec'] as object), replicas } };
    this.objects.set(path, next);
    if (stuck) return { spec: { replicas } };
    // Its ReplicaSet's pods follow: the last ones go on a scale-down and come back on a scale-up.
    const ns = /\/namespaces\/([^/]+)\//.exec(path)?.[1] ?? '';
    const names = ['acme-proxy-a', 'acme-proxy-b'];
    for (const name of names.slice(replicas)) this.terminate(ns, name);
    for (const name of names.slice(0, replicas)) {
      const pod = this.pods.get(`${ns}/${name}`);
      if (pod?.metadata['deletionTimestamp'] !== undefined) {
        const { deletionTimestamp: _gone, deletionGracePeriodSeconds: _grace, ...metadata } = pod.metadata;
        this.putPod(ns, { ...pod, metadata: { ...metadata, name } });
      }
    }
    setTimeout(() => this.observe(path, generation, { replicas, updatedReplicas: replicas, readyReplicas: replicas }), 50);
    return { spec: { replicas } };
  }

  private putPod(ns: string, pod: Obj): void {
    this.pods.set(`${ns}/${pod.metadata.name}`, pod);
    this.fake.put(pods(ns), pod);
  }

  /** A deleted pod terminates: deletionTimestamp now, gone shortly after. */
  private terminate(ns: string, name: string): void {
    const current = this.pods.get(`${ns}/${name}`);
    if (!current) return;
    const terminating = { ...current, metadata: { ...current.metadata, deletionTimestamp: new Date().toISOString(), deletionGracePeriodSeconds: 30 } };
    this.pods.set(`${ns}/${name}`, terminating);
    this.fake.put(pods(ns), terminating);
    setTimeout(() => this.fake.remove(pods(ns), name), 30);
  }

  private apply(path: string, body: Obj, opts: { gatewayOwned?: boolean }): Obj {
    const stored: Obj = { ...body, metadata: { ...body.metadata, generation: 1 } };
    if (body['kind'] === 'Namespace') this.namespaceApplied = true;
    if (body['kind'] === 'Deployment') {
      // kube's controllers: the run's Deployment rolls out, its pods ready and in its Service's slice.
      const replicas = (body['spec'] as { replicas?: number }).replicas ?? 1;
      stored['status'] = { observedGeneration: 1, replicas, updatedReplicas: replicas, readyReplicas: replicas, availableReplicas: replicas };
      const names = Array.from({ length: replicas }, (_, i) => `${body.metadata.name}-${i + 1}`);
      setTimeout(() => {
        for (const n of names) this.putPod(NS, runningPod(NS, n, { 'zerodrop.dev/workload': body.metadata.name }));
        this.fake.put(slices(NS), {
          metadata: { name: `${body.metadata.name}-x`, labels: { 'kubernetes.io/service-name': body.metadata.name } },
          endpoints: names.map((n) => ({ addresses: ['10.244.0.9'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: n } })),
        });
      }, 10);
    }
    this.objects.set(path, stored);
    if (path === GW_PATH) setTimeout(() => this.program(stored, opts), 10);
    return stored;
  }

  /** The implementation's controller: Gateway status, then a dataplane Deployment, its pods and a NodePort Service. */
  private program(gateway: Obj, opts: { gatewayOwned?: boolean }): void {
    this.objects.set(GW_PATH, { ...gateway, status: { conditions: [condition('Accepted'), condition('Programmed')], addresses: [{ type: 'IPAddress', value: '10.96.7.7' }] } });
    const ns = this.placement === 'gep-1762' ? NS : EG_NS;
    const labels: Record<string, string> =
      this.placement === 'envoy-gateway' ? { 'gateway.envoyproxy.io/owning-gateway-name': 'zerodrop', 'gateway.envoyproxy.io/owning-gateway-namespace': NS }
      : this.placement === 'gep-1762' ? { 'gateway.networking.k8s.io/gateway-name': 'zerodrop' }
      : { 'app.kubernetes.io/name': 'acme-proxy' };
    const infra = (gateway['spec'] as { infrastructure?: { labels?: Record<string, string> } }).infrastructure?.labels ?? {};
    this.objects.set(`/apis/apps/v1/namespaces/${ns}/deployments/acme-proxy`, {
      metadata: { name: 'acme-proxy', generation: 1, ...(opts.gatewayOwned ? { ownerReferences: [{ kind: 'Gateway', name: 'zerodrop', controller: true }] } : {}) },
      spec: { replicas: 2 },
      status: { observedGeneration: 1, replicas: 2, updatedReplicas: 2, readyReplicas: 2 },
    });
    this.objects.set(`/apis/apps/v1/namespaces/${ns}/replicasets/acme-proxy-5f7`, { metadata: { name: 'acme-proxy-5f7', ownerReferences: [{ kind: 'Deployment', name: 'acme-proxy', controller: true }] } });
    this.objects.set(`/api/v1/namespaces/${ns}/services/acme-proxy`, { metadata: { name: 'acme-proxy', namespace: ns, labels }, spec: { type: 'NodePort', ports: [{ port: 8000, nodePort: CLASS_NODE_PORT }] } });
    for (const name of ['acme-proxy-a', 'acme-proxy-b']) {
      this.putPod(
        ns,
        runningPod(ns, name, { ...labels, ...infra }, {
          metadata: { name, namespace: ns, labels: { ...labels, ...infra }, uid: `uid-${name}`, ownerReferences: [{ kind: 'ReplicaSet', name: 'acme-proxy-5f7', controller: true }] },
          spec: { terminationGracePeriodSeconds: 45, containers: [{ name: 'proxy', lifecycle: { preStop: { sleep: { seconds: 7 } } } }] },
        }),
      );
    }
    this.fake.put(slices(ns), {
      metadata: { name: 'acme-proxy-x', labels: { 'kubernetes.io/service-name': 'acme-proxy' } },
      endpoints: ['acme-proxy-a', 'acme-proxy-b'].map((n) => ({ addresses: ['10.244.1.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: n } })),
    });
    this.fake.put(events(ns), { metadata: { name: 'e1' }, reason: 'Pulled', message: 'image pulled', involvedObject: { kind: 'Pod', name: 'acme-proxy-a' } });
    this.fake.put(events(ns), { metadata: { name: 'e2' }, reason: 'Pulled', message: 'image pulled', involvedObject: { kind: 'Pod', name: 'acme-controller-0' } });
  }
}

const gatewayDelete = findScenario('gateway-delete-http')!;
const scaleDown = findScenario('gateway-scale-down')!;
const rollout = findScenario('gateway-rollout-http')!;
const profile = gatewayClassProfile(CLASS);
const build = (id: string) => findScenario(id)!.build(profile, optionsFor(findScenario(id)!, {}, false));

describe('--gateway-class as the gateway role of the kube provider', () => {
  let fake: FakeApiServer;
  let listener: Server | undefined;
  afterEach(async () => {
    await fake.close();
    await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
    listener = undefined;
  });

  /** The host side of kind's published NodPorts: the class's NodePort maps to a port the test listens on (or to a closed one). */
  async function setup(placement: Placement, opts: { features?: string[]; gatewayOwned?: boolean; selector?: string; reachable?: boolean; classAccepted?: boolean; stuckScale?: boolean; timeouts?: GatewayClassSettings['timeouts'] } = {}) {
    fake = await new FakeApiServer().listen();
    const sim = new SimCluster(fake, placement, {
      features: opts.features ?? ['Gateway', 'HTTPRoute', 'GatewayInfrastructurePropagation'],
      ...(opts.gatewayOwned ? { gatewayOwned: true } : {}),
      ...(opts.classAccepted === false ? { classAccepted: false } : {}),
      ...(opts.stuckScale ? { stuckScale: true } : {}),
    });
    const server = createServer((s) => s.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const hostPort = (server.address() as { port: number }).port;
    if (opts.reachable === false) await new Promise<void>((resolve) => server.close(() => resolve()));
    else listener = server;
    const recorder = new Recorder();
    const provider = new KubeProvider({
      name: 'kind',
      client: KubeClient.forServer(fake.url),
      recorder,
      runId: RUN,
      cwd: packageRoot,
      exposure: { kind: 'nodePort', host: '127.0.0.1', ports: PUBLISHED_NODE_PORTS.map((p) => (p.nodePort === CLASS_NODE_PORT ? { nodePort: p.nodePort, hostPort } : p)) },
      capabilities: { multiNode: true, udp: true, routeChanges: 'gateway-api' },
      allowNodeOperations: false,
      pollMs: 10,
      minDeployTimeoutMs: 0,
      dataplaneReady: { probe: async () => {}, programmingBoundMs: 0 },
      objectDeleteTimeoutMs: 1_000,
      gatewayClass: { name: CLASS, timeouts: opts.timeouts ?? FAST, ...(opts.selector ? { dataplaneSelector: opts.selector } : {}) },
    });
    return { sim, provider, recorder, hostPort };
  }
  const writes = () => fake.requests.filter((r) => r.method !== 'GET');
  const notes = (recorder: Recorder) => recorder.timeline.events.filter((e) => e.kind === 'note').map((e) => e.message ?? '');

  it("Envoy Gateway's labels: the proxies in the controller's namespace are the gateway; delete goes there; teardown is routes, Gateway, namespace; the class is untouched", async () => {
    const { sim, provider, recorder, hostPort } = await setup('envoy-gateway');
    const scenario = build('gateway-delete-http');
    await provider.deploy(scenario.topology, { timeoutMs: 5_000 });

    // No Deployment or Service of ours for the gateway: the class's dataplane is it.
    const applied = writes().filter((r) => r.contentType === PATCH.apply).map((r) => `${(r.body as Obj)['kind'] as string}/${(r.body as Obj).metadata.name}`);
    expect(applied).not.toContain('Deployment/gateway');
    expect(applied).not.toContain('Service/gateway');
    expect(applied.slice(-2)).toEqual(['Gateway/zerodrop', 'HTTPRoute/zerodrop-httproute-8000']);
    const gateway = writes().find((r) => r.path === GW_PATH)?.body as { spec: Record<string, unknown> };
    expect(gateway.spec).toMatchObject({ gatewayClassName: CLASS, listeners: [{ name: 'httproute-8000', port: 8000, protocol: 'HTTP' }], infrastructure: { labels: { 'zerodrop.dev/run': RUN } } });
    const route = writes().find((r) => r.path === ROUTE_PATH)?.body as { spec: unknown };
    expect(route.spec).toEqual({ parentRefs: [{ name: 'zerodrop', sectionName: 'httproute-8000' }], rules: [{ backendRefs: [{ name: 'backend', port: 8080 }] }] });

    // Reached through the generated Service's published NodePort; the pods are the scenario's gateway.
    expect(provider.serviceAddress('gateway', 'http')).toEqual({ host: '127.0.0.1', port: hostPort });
    expect(provider.pods('gateway').map((p) => p.name)).toEqual(['acme-proxy-a', 'acme-proxy-b']);
    expect(provider.pods('gateway').every((p) => p.workload === 'gateway' && p.phase === 'Running' && p.ready)).toBe(true);
    expect(notes(recorder)).toContain(`dataplane pods of Gateway ${NS}/zerodrop found by Envoy Gateway's owning-gateway labels: gateway.envoyproxy.io/owning-gateway-name=zerodrop,gateway.envoyproxy.io/owning-gateway-namespace=${NS} in every namespace (nothing by the GEP-1762 label (gateway.networking.k8s.io/gateway-name=zerodrop in namespace ${NS}))`);
    expect(provider.statedDrain('gateway')).toMatchObject({ minDrainSeconds: 7, drainTimeoutSeconds: 45 });
    expect(provider.statedDrain('backend')).toBeUndefined();
    // The controller's namespace is observed for the dataplane only: its own pod and that pod's events are not the run's.
    const seen = recorder.timeline.events.filter((e) => e.kind === 'pod-created').map((e) => e.pod);
    expect(seen).toContain('acme-proxy-a');
    expect(seen).not.toContain('acme-controller-0');
    await recorder.waitFor((e) => e.kind === 'note' && (e.message ?? '').includes('Pod acme-proxy-a: Pulled'), { timeoutMs: 2_000, what: 'the dataplane pod event' });
    expect(notes(recorder).some((m) => m.includes('acme-controller-0'))).toBe(false);
    // Endpoints of the generated Service count as the scenario's gateway Service.
    expect(recorder.timeline.events.some((e) => e.kind === 'lb-programmed' && e.pod === 'acme-proxy-a' && e.service === 'gateway')).toBe(true);

    // Scaling and restarting are refused with the reason: Envoy Gateway renders the Deployment.
    expect(provider.cannotRun(build('gateway-scale-down'))).toBe(`scale of the gateway workload (GatewayClass ${CLASS}'s dataplane): Envoy Gateway renders Deployment ${EG_NS}/acme-proxy from its own configuration and owns its replicas`);
    expect(provider.cannotRun(build('gateway-rollout-http'))).toMatch(/^rollout-restart of the gateway workload .*owns its pod template$/);
    expect(provider.cannotRun(scenario)).toBeUndefined();

    // The scenario's chaos step, on the discovered pods where they live.
    const step = scenario.steps[0]!;
    await runChaosAction(provider, recorder, step.id, step.action);
    expect(writes().filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([`/api/v1/namespaces/${EG_NS}/pods/acme-proxy-a`]);
    await provider.waitForPodGone('acme-proxy-a', { timeoutMs: 2_000 });
    expect(recorder.timeline.events.filter((e) => e.pod === 'acme-proxy-a').map((e) => e.kind)).toEqual(expect.arrayContaining(['delete-issued', 'pod-removed']));

    const before = fake.requests.length;
    await provider.teardown();
    const deletes = fake.requests.slice(before).filter((r) => r.method === 'DELETE').map((r) => r.path);
    expect(deletes.indexOf(ROUTE_PATH)).toBe(0);
    expect(deletes.indexOf(GW_PATH)).toBe(1);
    expect(deletes.at(-1)).toBe(`/api/v1/namespaces/${NS}`);
    expect(fake.requests.filter((r) => r.path.includes('/gatewayclasses') && r.method !== 'GET')).toEqual([]);
    expect(sim.objects.has(CLASS_PATH)).toBe(true);
    expect(sim.objects.has(GW_PATH)).toBe(false);
  });

  it("gateway-route-swap-http: the second set is a Service of the run's, and the move writes the HTTPRoute (applied again, or deleted and then created with routeRecreate)", async () => {
    const { provider, recorder } = await setup('envoy-gateway');
    const swap = findScenario('gateway-route-swap-http')!;
    const scenario = swap.build(profile, optionsFor(swap, {}, false));
    expect(scenario.expectations.map((e) => e.assert)).not.toContain('reloadSucceeded');
    await provider.deploy(scenario.topology, { timeoutMs: 5_000 });
    const applied = writes().filter((r) => r.contentType === PATCH.apply).map((r) => `${(r.body as Obj)['kind'] as string}/${(r.body as Obj).metadata.name}`);
    expect(applied).toEqual(expect.arrayContaining(['Service/backend-b', 'Deployment/backend-b', 'HTTPRoute/zerodrop-httproute-8000']));
    const backendRefs = () => (writes().filter((r) => r.path === ROUTE_PATH && r.method === 'PATCH').at(-1)?.body as { spec: { rules: { backendRefs: unknown }[] } }).spec.rules[0]?.backendRefs;
    expect(backendRefs()).toEqual([{ name: 'backend', port: 8080 }]);

    const step = scenario.steps[0]!;
    await runChaosAction(provider, recorder, step.id, step.action);
    expect(backendRefs()).toEqual([{ name: 'backend-b', port: 8080 }]);
    expect(writes().some((r) => r.method === 'DELETE' && r.path === ROUTE_PATH)).toBe(false);
    expect(recorder.timeline.events.find((e) => e.kind === 'chaos')?.message).toBe('patch the route of gateway: backendRefs backend -> backend-b');

    const recreate = swap.build(profile, optionsFor(swap, { routeRecreate: 1 }, false)).steps[0]!;
    await runChaosAction(provider, recorder, recreate.id, recreate.action);
    const routeWrites = writes().filter((r) => r.path === ROUTE_PATH).map((r) => r.method);
    expect(routeWrites.slice(-2)).toEqual(['DELETE', 'PATCH']);
    expect(backendRefs()).toEqual([{ name: 'backend-b', port: 8080 }]);
    await provider.teardown();
  });

  it('GEP-1762 in the run namespace: the dataplane is watched once, as the gateway; a Gateway-owned Deployment refuses scale with the reason', async () => {
    const { provider, recorder } = await setup('gep-1762', { gatewayOwned: true });
    await provider.deploy(build('gateway-delete-http').topology, { timeoutMs: 5_000 });
    expect(notes(recorder).some((m) => m.includes('found by the GEP-1762 label: gateway.networking.k8s.io/gateway-name=zerodrop in namespace'))).toBe(true);
    expect(provider.pods('gateway').map((p) => p.name)).toEqual(['acme-proxy-a', 'acme-proxy-b']);
    // The run's own observer takes only zerodrop's pods: one pod-created per dataplane pod, not two.
    expect(recorder.timeline.events.filter((e) => e.kind === 'pod-created' && e.pod === 'acme-proxy-a')).toHaveLength(1);
    expect(provider.pods('backend')).toHaveLength(2);
    expect(provider.cannotRun(build('gateway-scale-down'))).toBe(`scale of the gateway workload (GatewayClass ${CLASS}'s dataplane): Gateway zerodrop controls Deployment ${NS}/acme-proxy and owns its replicas`);
    await provider.teardown();
  });

  it('--dataplane-selector: a plain Deployment is scaled and restarted through its own scale subresource and pod template, and its rollout awaited', async () => {
    const { provider, recorder, sim } = await setup('selector', { selector: 'app.kubernetes.io/name=acme-proxy' });
    await provider.deploy(build('gateway-scale-down').topology, { timeoutMs: 5_000 });
    expect(notes(recorder).some((m) => m.includes('found by --dataplane-selector: app.kubernetes.io/name=acme-proxy in every namespace'))).toBe(true);
    expect(provider.cannotRun(build('gateway-scale-down'))).toBeUndefined();
    expect(provider.cannotRun(build('gateway-rollout-http'))).toBeUndefined();
    await provider.scale('gateway', 1);
    await provider.rolloutRestart('gateway');
    // The rollout is done only once the controller observed the new generation (and the pods are ready).
    await provider.waitForRollout('gateway', { timeoutMs: 2_000 });
    expect(sim.restartObservedAt).toBeDefined();
    // Generation 2 was the scale.
    expect(recorder.timeline.events.find((e) => e.kind === 'rollout-complete')?.detail).toEqual({ generation: 3 });
    const patches = writes().filter((r) => r.method === 'PATCH' && r.contentType !== PATCH.apply);
    expect(patches.map((r) => [r.path, r.contentType])).toEqual([
      [`/apis/apps/v1/namespaces/${EG_NS}/deployments/acme-proxy/scale`, PATCH.merge],
      [`/apis/apps/v1/namespaces/${EG_NS}/deployments/acme-proxy`, PATCH.strategic],
    ]);
    expect(recorder.timeline.events.find((e) => e.kind === 'scale')?.detail).toMatchObject({ to: 1, object: `deployments/${EG_NS}/acme-proxy` });
    // The class's dataplane serves the runs after this one: teardown puts its replicas back and waits until they are ready.
    await provider.teardown();
    const scales = writes().filter((r) => r.path.endsWith('/acme-proxy/scale')).map((r) => (r.body as { spec: unknown }).spec);
    expect(scales).toEqual([{ replicas: 1 }, { replicas: 2 }]);
    expect(sim.objects.get(`/apis/apps/v1/namespaces/${EG_NS}/deployments/acme-proxy`)?.['status']).toMatchObject({ replicas: 2, readyReplicas: 2 });
  });

  it('mutant: a dataplane that does not come back after the scale makes teardown fail, naming it; the run namespace still goes', async () => {
    const { provider, sim } = await setup('selector', { selector: 'app.kubernetes.io/name=acme-proxy', stuckScale: true, timeouts: { ...FAST, gatewayMustHaveCondition: 300 } });
    await provider.deploy(build('gateway-scale-down').topology, { timeoutMs: 5_000 });
    await provider.scale('gateway', 1);
    await expect(provider.teardown()).rejects.toThrow(`waiting for Deployment ${EG_NS}/acme-proxy, GatewayClass ${CLASS}'s dataplane, to be as the run found it`);
    expect(sim.namespaceDeleted).toBe(true);
  });

  it('a route kind the class does not list: deploy throws ProfileCannotPlay before anything is created, and the run says skipped with the reason', async () => {
    const { provider, recorder } = await setup('envoy-gateway', { features: ['Gateway', 'TCPRoute'] });
    const outcome = await runScenario(build('gateway-delete-http'), { provider, recorder, signal: AbortSignal.timeout(10_000) });
    expect(outcome).toMatchObject({ verdict: 'skipped', reason: `GatewayClass ${CLASS} does not list HTTPRoute in status.supportedFeatures (it lists Gateway, TCPRoute)` });
    expect(writes()).toEqual([]);
    await provider.teardown();
  });

  it("a run stopped while the class is not yet Accepted stops waiting at once, not at the class's timeout", async () => {
    const { provider } = await setup('envoy-gateway', { classAccepted: false, timeouts: { ...FAST, gatewayClassMustBeAccepted: 20_000 } });
    const started = performance.now();
    await expect(provider.deploy(build('gateway-delete-http').topology, { timeoutMs: 5_000, signal: AbortSignal.timeout(100) })).rejects.toThrow('aborted');
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(writes()).toEqual([]);
    await provider.teardown();
  });

  it('the UDP relay scenario needs UDPRoute: a class without it skips that scenario, naming what the class lists', async () => {
    const { provider, recorder } = await setup('envoy-gateway', { features: ['Gateway', 'HTTPRoute'] });
    const outcome = await runScenario(build('backend-scale-to-zero-udp'), { provider, recorder, signal: AbortSignal.timeout(10_000) });
    expect(outcome).toMatchObject({ verdict: 'skipped', reason: `GatewayClass ${CLASS} does not list UDPRoute in status.supportedFeatures (it lists Gateway, HTTPRoute)` });
    await provider.teardown();
  });

  it('mutant: a Gateway the host cannot reach stops the deploy naming the address; its routes and Gateway are gone before the error', async () => {
    const { provider, sim, hostPort } = await setup('envoy-gateway', { reachable: false });
    await expect(provider.deploy(build('gateway-delete-http').topology, { timeoutMs: 5_000 })).rejects.toThrow(
      `the Gateway at 127.0.0.1:${hostPort} (Service ${EG_NS}/acme-proxy NodePort ${CLASS_NODE_PORT}) is not reachable from the host`,
    );
    expect(writes().filter((r) => r.method === 'DELETE').map((r) => r.path)).toEqual([ROUTE_PATH, GW_PATH]);
    expect(sim.objects.has(GW_PATH)).toBe(false);
    await provider.teardown();
    expect(sim.namespaceDeleted).toBe(true);
  });
});

describe("the catalog's gateway scenarios on a class", () => {
  it('each says its route kind and backend, or is skipped with the reason (TURN)', () => {
    const kinds: Record<string, string> = {};
    for (const def of catalog.filter((d) => d.role === 'gateway' && !d.control)) {
      let scenario: Scenario;
      try {
        scenario = def.build(profile, optionsFor(def, {}, false));
      } catch (error) {
        expect(error).toBeInstanceOf(ProfileCannotPlay);
        kinds[def.id] = `skipped: ${(error as Error).message}`;
        continue;
      }
      const played = scenario.topology.workloads.filter((w) => w.gatewayClass === CLASS);
      expect(played, def.id).toHaveLength(1);
      kinds[def.id] = `${played[0]?.route?.kind} -> ${played[0]?.route?.backend.service}`;
    }
    expect(kinds).toMatchObject({
      'gateway-delete-http': 'HTTPRoute -> backend',
      'gateway-http2-goaway': 'HTTPRoute -> backend',
      'backend-scale-to-zero-udp': 'UDPRoute -> backend',
      'gateway-delete-turn': expect.stringMatching(/^skipped: GatewayClass acme: TURN needs the scenario's credentials/),
    });
  });
});

describe('drain bounds of a class dataplane', () => {
  it("come from the pods' spec after deploy: the run rebuilds the scenario's drain expectations and long requests from them", async () => {
    const stated = { minDrainSeconds: 7, drainTimeoutSeconds: 45, source: 'pod acme-proxy-a' };
    const placeholder = build('gateway-delete-http');
    const rebuilt = gatewayDelete.build(withDrain(profile, stated), optionsFor(gatewayDelete, {}, false));
    const timing = (s: Scenario) => s.expectations.find((e) => e.assert === 'drainTiming');
    expect(timing(rebuilt)).toMatchObject({ minDrainMs: 7_000, drainTimeoutMs: 45_000 });
    expect(timing(placeholder)).not.toMatchObject({ minDrainMs: 7_000, drainTimeoutMs: 45_000 });
    const recorder = new Recorder();
    let asked: unknown;
    // A provider that deployed a class dataplane: it states its drain, and the runner asks for it.
    const provider = {
      name: 'stub',
      capabilities: { multiNode: false, udp: false },
      deploy: async () => undefined,
      statedDrain: (w: string) => (w === 'gateway' ? stated : undefined),
      cannotRun: () => undefined,
      serviceAddress: () => ({ host: '127.0.0.1', port: 9 }),
      pods: () => [],
      deletePod: async () => undefined,
      scale: async () => undefined,
      rolloutRestart: async () => undefined,
      waitForRollout: async () => undefined,
      waitForPodGone: async () => undefined,
      teardown: async () => undefined,
      [Symbol.asyncDispose]: async () => undefined,
    };
    // Nothing to run once rebuilt: the rebuild is what is checked.
    const empty = (s: Scenario): Scenario => ({ ...s, loads: [], steps: [], end: { afterMs: 0 }, expectations: [] });
    await runScenario(placeholder, { provider, recorder, signal: AbortSignal.timeout(5_000), rebuild: (d) => ((asked = d), empty(rebuilt)) });
    expect(asked).toEqual(stated);
    expect(recorder.timeline.events.some((e) => e.kind === 'note' && e.message === 'drain bounds from the deployed pods: minimum 7 s, timeout 45 s (pod acme-proxy-a)')).toBe(true);
  });

  it('a deployed system that cannot carry the steps makes the scenario skipped, not judged', async () => {
    const recorder = new Recorder();
    const provider = {
      name: 'stub', capabilities: { multiNode: false, udp: false }, deploy: async () => undefined, cannotRun: () => 'the controller owns its replicas',
      serviceAddress: () => ({ host: '127.0.0.1', port: 9 }), pods: () => [], deletePod: async () => undefined, scale: async () => undefined, rolloutRestart: async () => undefined,
      waitForRollout: async () => undefined, waitForPodGone: async () => undefined, teardown: async () => undefined, [Symbol.asyncDispose]: async () => undefined,
    };
    const outcome = await runScenario(scaleDown.build(profile, optionsFor(scaleDown, {}, false)), { provider, recorder, signal: AbortSignal.timeout(5_000) });
    expect(outcome).toEqual({ verdict: 'skipped', assertions: [], reason: 'the controller owns its replicas', loads: [] });
    expect(rollout.role).toBe('gateway');
  });
});
