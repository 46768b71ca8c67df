// A Helm profile playing a scenario's gateway, and a node drain, carried out by KubeProvider against
// a fake API server: the chart install is a stand-in (no helm, no cluster here) that does what the
// chart's controller would, create the labelled dataplane pods.

import { afterEach, describe, expect, it } from 'vitest';
import { Recorder } from '../../observe/recorder.ts';
import { findProfile } from '../../profiles/index.ts';
import { optionsFor } from '../../runner/run-matrix.ts';
import { packageRoot } from '../../paths.ts';
import { catalog } from '../../scenarios/index.ts';
import type { Topology } from '../../model/workload.ts';
import { PUBLISHED_NODE_PORTS } from '../kind/kind.ts';
import { KubeClient } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import type { helmInstall } from './helm.ts';
import { KubeProvider } from './kube-provider.ts';

const RUN = 'c0ffee00';
const NS = `zerodrop-${RUN}`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;

function pod(name: string, workload: string, node = 'zerodrop-worker') {
  return {
    metadata: { name, labels: { 'zerodrop.dev/workload': workload } },
    spec: { nodeName: node },
    status: { podIP: '10.244.1.1', conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'main', restartCount: 0, state: { running: {} } }] },
  };
}

function topologyOf(scenario: string, profile: string): Topology {
  const def = catalog.find((d) => d.id === scenario);
  const p = findProfile(profile);
  if (!def || !p) throw new Error('catalog changed');
  return def.build(p, optionsFor(def, {}, false)).topology;
}

describe('KubeProvider with a Helm gateway and node drains (fake API server)', () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });

  /** The fake's "controllers": Deployments get their pods, a chart install its dataplane, Services their slices. */
  async function setup(opts: { clusterScopedObjects?: boolean; allowNodeOperations?: boolean; rendered?: string[] } = {}) {
    fake = await new FakeApiServer().listen();
    for (const p of [PODS, SLICES, `/api/v1/namespaces/${NS}/events`]) fake.serve(p);
    const applied: { kind: string; name: string }[] = [];
    const created = new Set<string>();
    // The chart objects as stored, by API path; what their controller does on delete is below.
    const stored = new Map<string, { metadata: { finalizers?: string[]; deletionTimestamp?: string } }>();
    const sequence: string[] = [];
    let controllerRunning = true;
    const isGatewayClass = (path: string) => path.includes('/gatewayclasses/');
    const gatewayExists = () => [...stored.keys()].some((k) => k.includes('/gateways/'));
    const pods = new Map<string, string[]>();
    const addPods = (workload: string, replicas: number) => {
      const names = Array.from({ length: replicas }, (_, i) => `${workload}-${i + 1}`);
      pods.set(workload, names);
      setTimeout(() => {
        for (const n of names) fake.put(PODS, pod(n, workload));
        fake.put(SLICES, {
          metadata: { name: `${workload}-x`, labels: { 'kubernetes.io/service-name': workload } },
          endpoints: names.map((n) => ({ addresses: ['10.244.1.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: n } })),
        });
      }, 10);
    };
    fake.respond((r) => {
      if (r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}`) {
        return created.has('Namespace') ? { status: 200, body: { metadata: { name: NS, labels: { 'zerodrop.dev/run': RUN } } } } : { status: 404, body: { code: 404 } };
      }
      if (r.method === 'PATCH' && r.contentType === 'application/apply-patch+yaml') {
        const body = r.body as { kind: string; metadata: { name: string }; spec?: { replicas?: number } };
        applied.push({ kind: body.kind, name: body.metadata.name });
        created.add(body.kind);
        if (r.path.startsWith('/apis/')) {
          const copy = structuredClone(r.body) as { metadata: { finalizers?: string[] } };
          // Envoy Gateway's controller: its GatewayClass carries the in-use finalizer while a Gateway uses it.
          if (isGatewayClass(r.path)) copy.metadata.finalizers = ['gateway-exists-finalizer.gateway.networking.k8s.io'];
          stored.set(r.path, copy);
        }
        if (body.kind === 'Deployment') addPods(body.metadata.name, body.spec?.replicas ?? 1);
        return { status: 200, body: r.body };
      }
      if (r.method === 'GET' && r.path.startsWith(`/apis/apps/v1/namespaces/${NS}/deployments/`)) {
        const n = pods.get(r.path.split('/').at(-1) ?? '')?.length ?? 0;
        return { status: 200, body: { metadata: { generation: 1 }, spec: { replicas: n }, status: { observedGeneration: 1, replicas: n, updatedReplicas: n, readyReplicas: n, availableReplicas: n } } };
      }
      if (r.path.startsWith('/apis/') && !stored.has(r.path) && r.method === 'GET' && !r.path.startsWith('/apis/apps/') && !r.path.startsWith('/apis/discovery')) {
        return { status: 404, body: { code: 404 } };
      }
      if (stored.has(r.path) && (r.method === 'GET' || r.method === 'DELETE')) {
        const object = stored.get(r.path)!;
        if (r.method === 'DELETE') {
          sequence.push(`delete ${r.path.split('/').at(-2) ?? ''}`);
          object.metadata.deletionTimestamp = '2026-01-01T00:00:00Z';
        }
        // The controller lifts the GatewayClass's finalizer once no Gateway uses it, if it still runs.
        if (isGatewayClass(r.path) && controllerRunning && !gatewayExists()) delete object.metadata.finalizers;
        if (object.metadata.deletionTimestamp && !object.metadata.finalizers?.length) stored.delete(r.path);
        return { status: 200, body: object };
      }
      if (r.method === 'GET' && r.path === PODS && r.query['fieldSelector'] === 'spec.nodeName=zerodrop-worker') {
        return { status: 200, body: { items: [...(pods.get('backend') ?? [])].map((n) => ({ metadata: { name: n } })) } };
      }
      // Two Nodes with their pod ranges, as kube-controller-manager allocates them (one dual-stack).
      if (r.method === 'GET' && r.path === '/api/v1/nodes') {
        return { status: 200, body: { items: [{ spec: { podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24', 'fd00:10:244::/64'] } }, { spec: { podCIDR: '10.244.1.0/24' } }] } };
      }
      if (r.method === 'GET' && r.path.endsWith('/services')) return { status: 200, body: { items: [] } };
      if (r.method === 'GET' && r.path.startsWith(`/api/v1/namespaces/${NS}/services/`)) return { status: 200, body: { spec: { clusterIP: '10.96.0.20' } } };
      if (['DELETE', 'PATCH', 'POST'].includes(r.method)) return { status: 200, body: {} };
      return undefined;
    });
    const installs: { profile: string; release: string; namespace: string; values: Record<string, unknown>; kubeconfig: string }[] = [];
    let uninstalled = 0;
    const install: typeof helmInstall = async (spec, o) => {
      installs.push({ profile: spec.name, release: o.release, namespace: o.namespace, values: o.values, kubeconfig: o.kubeconfig });
      // What the chart's controller does once the Gateway exists: the labelled dataplane pods.
      addPods('gateway', 2);
      return async () => {
        uninstalled += 1;
        controllerRunning = false;
        sequence.push('uninstall');
      };
    };
    const recorder = new Recorder();
    const provider = new KubeProvider({
      name: 'kind',
      client: KubeClient.forServer(fake.url),
      recorder,
      runId: RUN,
      cwd: packageRoot,
      exposure: { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] },
      capabilities: { multiNode: true, udp: true, nodeDrain: opts.allowNodeOperations ?? false },
      allowNodeOperations: opts.allowNodeOperations ?? false,
      clusterScopedObjects: opts.clusterScopedObjects ?? true,
      helmInstall: install,
      // `helm template`'s findings: nothing outside the namespace unless the test says so.
      chartObjectsOutside: async () => opts.rendered ?? [],
      pollMs: 20,
      minDeployTimeoutMs: 0,
      dataplaneReady: { probe: async () => {}, programmingBoundMs: 0 },
      objectDeleteTimeoutMs: 1000,
    });
    return { provider, recorder, applied, installs, uninstalled: () => uninstalled, sequence, stored };
  }

  it('installs the chart after the run objects, applies its Gateway API objects, waits for the labelled dataplane, and undoes it all', async () => {
    const { provider, applied, installs, uninstalled, sequence, stored } = await setup();
    await provider.deploy(topologyOf('gateway-delete-http', 'envoy-gateway'), { timeoutMs: 5000 });
    expect(applied.map((a) => a.kind)).toEqual([
      'Namespace', 'ConfigMap', 'Role', 'RoleBinding', 'Service', 'Service', 'Deployment', 'PodDisruptionBudget',
      // after `helm upgrade --install`, when the chart's CRDs exist:
      'EnvoyProxy', 'GatewayClass', 'Gateway', 'HTTPRoute',
    ]);
    expect(applied.filter((a) => a.kind === 'Deployment').map((a) => a.name)).toEqual(['backend']);
    // The run's own release (its id in the name), not the chart's fixed one.
    expect(installs).toEqual([{ profile: 'envoy-gateway', release: `eg-${RUN}`, namespace: NS, values: expect.objectContaining({ config: expect.any(Object) }), kubeconfig: expect.stringContaining(fake.url) }]);
    expect(provider.pods('gateway').map((p) => [p.name, p.ready, p.node])).toEqual([['gateway-1', true, 'zerodrop-worker'], ['gateway-2', true, 'zerodrop-worker']]);
    expect(provider.serviceAddress('gateway').host).toBe('127.0.0.1');
    // A relay inside the cluster reaches a Service at its ClusterIP (the TURN peer), not at the host's NodePort.
    expect(provider.peerAddress('backend')).toEqual({ host: '10.96.0.20', port: 8080 });
    await provider.teardown();
    expect(uninstalled()).toBe(1);
    // Dependency order, each gone before the next, the controller uninstalled last: the GatewayClass's
    // in-use finalizer is lifted by the controller once the Gateway is gone, so nothing stays Terminating.
    expect(sequence).toEqual(['delete httproutes', 'delete gateways', 'delete gatewayclasses', 'delete envoyproxies', 'uninstall']);
    expect([...stored.keys()].filter((k) => k.includes('gateway'))).toEqual([]);
    // The cluster-scoped GatewayClass goes explicitly (the namespace delete does not reach it), after checking its run label.
    const deletes = fake.requests.filter((r) => r.method === 'DELETE').map((r) => r.path);
    expect(deletes).toContain('/apis/gateway.networking.k8s.io/v1/gatewayclasses/zerodrop-c0ffee00');
    expect(deletes.indexOf('/apis/gateway.networking.k8s.io/v1/gatewayclasses/zerodrop-c0ffee00')).toBeLessThan(deletes.indexOf(`/api/v1/namespaces/${NS}`));
  });

  it("routes STUNner to a StaticService of the Nodes' pod ranges, applied before the route that names it and deleted after it", async () => {
    const { provider, applied, sequence, stored } = await setup();
    await provider.deploy(topologyOf('gateway-delete-turn', 'stunner-018-static'), { timeoutMs: 5000 });
    expect(applied.map((a) => a.kind).slice(-6)).toEqual(['Dataplane', 'GatewayConfig', 'GatewayClass', 'Gateway', 'StaticService', 'UDPRoute']);
    expect(stored.get(`/apis/stunner.l7mp.io/v1/namespaces/${NS}/staticservices/zerodrop`)).toMatchObject({ spec: { prefixes: ['10.244.0.0/24', 'fd00:10:244::/64', '10.244.1.0/24'] } });
    await provider.teardown();
    expect(sequence.slice(0, 2)).toEqual(['delete udproutes', 'delete staticservices']);
  });

  it('refuses a chart that needs cluster-scoped objects where the provider must stay in its namespace, before installing anything', async () => {
    const { provider, installs } = await setup({ clusterScopedObjects: false });
    await expect(provider.deploy(topologyOf('gateway-delete-http', 'envoy-gateway'), { timeoutMs: 5000 })).rejects.toThrow(/stays inside its namespace, but the chart's configuration needs cluster-scoped objects \(GatewayClass zerodrop-c0ffee00\)/);
    expect(installs).toEqual([]);
    await provider.teardown();
  });

  it('refuses, before creating anything, a chart whose own templates create objects outside the namespace, and names them', async () => {
    const { provider, installs, applied } = await setup({ clusterScopedObjects: false, rendered: ['ClusterRole ingress-nginx-c0ffee00', 'ClusterRoleBinding ingress-nginx-c0ffee00', 'IngressClass zerodrop-c0ffee00'] });
    await expect(provider.deploy(topologyOf('gateway-delete-http', 'ingress-nginx'), { timeoutMs: 5000 })).rejects.toThrow(
      /provider kind stays inside its namespace, but chart ingress-nginx 4\.13\.9 \(profile ingress-nginx\) would create ClusterRole ingress-nginx-c0ffee00, ClusterRoleBinding ingress-nginx-c0ffee00, IngressClass zerodrop-c0ffee00 \(helm template\).*--provider kind or k3s/,
    );
    expect(installs).toEqual([]);
    expect(applied).toEqual([]);
    await provider.teardown();
  });

  it('an ingress-nginx gateway needs no cluster-scoped object of zerodrop\'s: an Ingress to the backend', async () => {
    const { provider, applied, installs } = await setup({ clusterScopedObjects: false });
    await provider.deploy(topologyOf('gateway-delete-http', 'ingress-nginx'), { timeoutMs: 5000 });
    expect(applied.at(-1)).toEqual({ kind: 'Ingress', name: 'zerodrop' });
    expect(installs[0]?.release).toBe(`ingress-nginx-${RUN}`);
    expect(installs[0]?.values).toMatchObject({ controller: { podLabels: { 'zerodrop.dev/workload': 'gateway' }, replicaCount: 2 } });
    await provider.teardown();
  });

  it("restarts the chart's controller, not the dataplane: a rollout restart of the Deployment the profile names, in the release's namespace", async () => {
    const { provider, recorder } = await setup();
    await provider.deploy(topologyOf('gateway-delete-http', 'envoy-gateway'), { timeoutMs: 5000 });
    await provider.restartController('gateway');
    const patch = fake.requests.find((r) => r.method === 'PATCH' && r.path === `/apis/apps/v1/namespaces/${NS}/deployments/envoy-gateway`);
    expect(JSON.stringify(patch?.body)).toContain('kubectl.kubernetes.io/restartedAt');
    expect(fake.requests.some((r) => r.method === 'PATCH' && /deployments\/gateway$/.test(r.path))).toBe(false);
    expect(recorder.timeline.events.find((e) => e.kind === 'note' && e.workload === 'gateway')?.message).toBe('controller deployment/envoy-gateway rollout restarted');
    await expect(provider.restartController('backend')).rejects.toThrow(/workload backend has no controller of its chart to restart/);
    await provider.teardown();
  });

  it('drains the node of the backends through evictions, noting each refusal and by what, and uncordons it at teardown', async () => {
    const { provider, recorder } = await setup({ allowNodeOperations: true });
    await provider.deploy(topologyOf('node-drain-http', 'reference'), { timeoutMs: 5000 });
    // backend-2's first eviction meets the API server's throttling, its second its budget.
    const refusals = [
      { code: 429, message: 'Too many requests, please try again later.' },
      { code: 429, message: 'Cannot evict pod.', details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget backend needs 1 healthy pods and has 1 currently' }] } },
    ];
    fake.respond((r) => (r.path.endsWith('backend-2/eviction') && refusals.length > 0 ? { status: 429, body: refusals.shift() } : undefined), { first: true });
    const evicted = await provider.drainNode('zerodrop-worker', { retryMs: 20, timeoutMs: 2000 });
    expect(evicted).toEqual(['backend-1', 'backend-2']);
    const notes = recorder.timeline.events.filter((e) => e.kind === 'note' && e.pod === 'backend-2').map((e) => e.message);
    expect(notes).toEqual([
      'eviction of backend-2 refused with 429 by the API server without a DisruptionBudget cause (its own throttling, not a budget): Too many requests, please try again later.',
      'eviction of backend-2 refused by its PodDisruptionBudget (429): The disruption budget backend needs 1 healthy pods and has 1 currently',
      'eviction of backend-2 accepted',
    ]);
    await provider.teardown();
    const nodePatches = fake.requests.filter((r) => r.method === 'PATCH' && r.path === '/api/v1/nodes/zerodrop-worker').map((r) => r.body);
    expect(nodePatches).toEqual([{ spec: { unschedulable: true } }, { spec: { unschedulable: false } }]);
  });
});
