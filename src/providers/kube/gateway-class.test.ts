// The --gateway-class flow against the project's fake API server, with a small controller played
// by the test: what it answers decides whether each wait, discovery rule and teardown step holds.
// Every check is shown to fail against a broken cluster state (stale generation, missing condition,
// pods only a later rule finds, a finalizer that never goes) and to pass against the correct one.

import { createServer, type Server } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient, PATCH } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import {
  applyGatewayObjects,
  chooseEndpoint,
  drainBoundsOf,
  findDataplanePods,
  GatewayClassError,
  moveRoute,
  openGatewayClassRun,
  owningWorkload,
  probeTcp,
  scaleProblem,
  teardownGatewayObjects,
  waitForGateway,
  waitForGatewayClass,
  type PodLike,
} from './gateway-class.ts';
import { gatewayObjects } from './gateway-objects.ts';
import { CONFORMANCE_TIMEOUTS } from '../cluster-system.ts';

const NS = 'zerodrop-abcd1234';
const RUN = 'abcd1234';
const GW_PATH = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/gateways/zerodrop`;
const CLASS_PATH = '/apis/gateway.networking.k8s.io/v1/gatewayclasses/acme';
const FAST = { pollMs: 5 };

type Obj = Record<string, unknown> & { metadata: { name: string; namespace?: string; labels?: Record<string, string>; generation?: number; [k: string]: unknown } };

/** An object store behind the fake API server: GET, server-side apply and DELETE of single objects, and pod lists by label selector. */
class Cluster {
  readonly objects = new Map<string, Obj>();
  /** Paths whose DELETE is accepted but whose object stays (a finalizer nobody removes). */
  readonly stuck = new Set<string>();
  constructor(fake: FakeApiServer) {
    fake.respond((req) => {
      const list = /^\/api\/v1(?:\/namespaces\/([^/]+))?\/(pods|services)$/.exec(req.path);
      if (req.method === 'GET' && list) return { status: 200, body: { items: this.listed(list[2] ?? '', list[1], req.query['labelSelector'] ?? '') } };
      if (req.method === 'GET' && req.path === '/apis/gateway.networking.k8s.io/v1/gatewayclasses') {
        return { status: 200, body: { items: [...this.objects.entries()].filter(([p]) => p.includes('/gatewayclasses/')).map(([, o]) => o) } };
      }
      if (req.method === 'GET') {
        const o = this.objects.get(req.path);
        return o ? { status: 200, body: o } : { status: 404, body: { kind: 'Status', code: 404, reason: 'NotFound', message: `${req.path} not found` } };
      }
      if (req.method === 'PATCH' && req.contentType === PATCH.apply) {
        const stored = { ...(req.body as Obj) };
        stored.metadata = { ...stored.metadata, generation: 1 };
        this.objects.set(req.path, stored);
        this.onApply?.(req.path, stored);
        return { status: 200, body: stored };
      }
      if (req.method === 'DELETE') {
        if (!this.stuck.has(req.path)) this.objects.delete(req.path);
        return { status: 200, body: { kind: 'Status', status: 'Success' } };
      }
      return undefined;
    });
  }

  /** The controller the test plays: called after each server-side apply. */
  onApply: ((path: string, object: Obj) => void) | undefined;

  put(path: string, object: Obj): void {
    this.objects.set(path, object);
  }

  private listed(plural: string, namespace: string | undefined, selector: string): Obj[] {
    const wanted = selector.split(',').filter(Boolean).map((kv) => kv.split('='));
    return [...this.objects.entries()]
      .filter(([path]) => new RegExp(`/${plural}/[^/]+$`).test(path) && (namespace === undefined || path.startsWith(`/api/v1/namespaces/${namespace}/`)))
      .map(([, o]) => o)
      .filter((o) => wanted.every(([k, v]) => o.metadata.labels?.[k ?? ''] === v));
  }
}

function condition(type: string, status: string, observedGeneration: number, reason = type) {
  return { type, status, observedGeneration, reason, message: `${type} ${status}` };
}

function pod(namespace: string, name: string, labels: Record<string, string>, extra: Partial<Obj['metadata']> = {}): Obj {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace, labels, ...extra }, spec: { containers: [{ name: 'envoy' }] } };
}

describe('--gateway-class: the flow against a fake API server', () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });
  async function setup() {
    fake = await new FakeApiServer().listen();
    return { client: KubeClient.forServer(fake.url), cluster: new Cluster(fake) };
  }

  describe('GatewayClass', () => {
    it('is ready when Accepted at its current generation, and says its controller and features', async () => {
      const { client, cluster } = await setup();
      cluster.put(CLASS_PATH, {
        metadata: { name: 'acme', generation: 2 },
        spec: { controllerName: 'acme.io/gateway' },
        status: { conditions: [condition('Accepted', 'True', 2)], supportedFeatures: [{ name: 'Gateway' }, { name: 'HTTPRoute' }, { name: 'UDPRoute' }] },
      });
      await expect(waitForGatewayClass(client, 'acme', { timeoutMs: 1_000, ...FAST })).resolves.toEqual({
        name: 'acme',
        controllerName: 'acme.io/gateway',
        supportedFeatures: ['Gateway', 'HTTPRoute', 'UDPRoute'],
      });
    });

    it('reads supportedFeatures written as plain strings (releases before v1.2)', async () => {
      const { client, cluster } = await setup();
      cluster.put(CLASS_PATH, { metadata: { name: 'acme', generation: 1 }, spec: { controllerName: 'a' }, status: { conditions: [condition('Accepted', 'True', 1)], supportedFeatures: ['HTTPRoute'] } });
      expect((await waitForGatewayClass(client, 'acme', { timeoutMs: 1_000, ...FAST })).supportedFeatures).toEqual(['HTTPRoute']);
    });

    it('mutant: Accepted=True for an older generation is not ready, and the timeout says so', async () => {
      const { client, cluster } = await setup();
      cluster.put(CLASS_PATH, { metadata: { name: 'acme', generation: 3 }, spec: { controllerName: 'acme.io/gateway' }, status: { conditions: [condition('Accepted', 'True', 2)] } });
      const started = Date.now();
      const error = await waitForGatewayClass(client, 'acme', { timeoutMs: 150, ...FAST }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(GatewayClassError);
      expect(String(error)).toMatch(/GatewayClass acme not Accepted within 0\.\d s: Accepted=True/);
      expect(String(error)).toContain('for generation 2 (current 3)');
      expect(String(error)).toContain('acme.io/gateway');
      expect(String(error)).toContain('gatewayTimeouts.gatewayClassMustBeAccepted');
      expect(Date.now() - started).toBeGreaterThanOrEqual(150);
    });

    it('waits through Accepted=False until the controller accepts it', async () => {
      const { client, cluster } = await setup();
      const path = CLASS_PATH;
      cluster.put(path, { metadata: { name: 'acme', generation: 1 }, spec: { controllerName: 'a' }, status: { conditions: [condition('Accepted', 'False', 1, 'Pending')] } });
      setTimeout(() => cluster.put(path, { metadata: { name: 'acme', generation: 1 }, spec: { controllerName: 'a' }, status: { conditions: [condition('Accepted', 'True', 1)] } }), 50);
      await expect(waitForGatewayClass(client, 'acme', { timeoutMs: 2_000, ...FAST })).resolves.toMatchObject({ name: 'acme' });
    });

    it('a missing class fails at once, naming the installed ones', async () => {
      const { client, cluster } = await setup();
      cluster.put('/apis/gateway.networking.k8s.io/v1/gatewayclasses/eg', { metadata: { name: 'eg' } });
      const started = Date.now();
      await expect(waitForGatewayClass(client, 'acme', { timeoutMs: 60_000, ...FAST })).rejects.toThrow('GatewayClass acme not found; installed: eg');
      expect(Date.now() - started).toBeLessThan(5_000);
    });

    it("uses the conformance suite's 180 s waits by default", () => {
      expect(CONFORMANCE_TIMEOUTS).toEqual({ gatewayClassMustBeAccepted: 180_000, gatewayMustHaveCondition: 180_000, gatewayMustHaveAddress: 180_000 });
    });
  });

  describe('Gateway', () => {
    const gw = (conditions: unknown[], addresses?: unknown[]): Obj => ({ metadata: { name: 'zerodrop', namespace: NS, generation: 1 }, status: { conditions, ...(addresses ? { addresses } : {}) } });
    const waits = { conditionMs: 100, addressMs: 100, ...FAST };

    it('is ready when Accepted and Programmed, and returns status.addresses', async () => {
      const { client, cluster } = await setup();
      cluster.put(GW_PATH, gw([condition('Accepted', 'True', 1), condition('Programmed', 'True', 1)], [{ type: 'IPAddress', value: '172.18.0.5' }]));
      await expect(waitForGateway(client, NS, 'zerodrop', waits)).resolves.toEqual([{ type: 'IPAddress', value: '172.18.0.5' }]);
    });

    it('mutant: Accepted without Programmed times out naming Programmed', async () => {
      const { client, cluster } = await setup();
      cluster.put(GW_PATH, gw([condition('Accepted', 'True', 1), condition('Programmed', 'False', 1, 'AddressNotAssigned')], [{ value: '10.0.0.1' }]));
      await expect(waitForGateway(client, NS, 'zerodrop', waits)).rejects.toThrow(/not Accepted and Programmed within 0\.1 s: Accepted=True \(Accepted: Accepted True\), Programmed=False \(AddressNotAssigned/);
    });

    it('mutant: Programmed without an address times out on the address wait', async () => {
      const { client, cluster } = await setup();
      cluster.put(GW_PATH, gw([condition('Accepted', 'True', 1), condition('Programmed', 'True', 1)]));
      await expect(waitForGateway(client, NS, 'zerodrop', waits)).rejects.toThrow(/Programmed but has no status.addresses after 0\.1 s.*gatewayMustHaveAddress/);
    });
  });

  describe('dataplane pods: which rule found them', () => {
    it('GEP-1762 label in the Gateway namespace comes first', async () => {
      const { client, cluster } = await setup();
      cluster.put(`/api/v1/namespaces/${NS}/pods/gw-1`, pod(NS, 'gw-1', { 'gateway.networking.k8s.io/gateway-name': 'zerodrop' }));
      cluster.put('/api/v1/namespaces/envoy-gateway-system/pods/envoy-1', pod('envoy-gateway-system', 'envoy-1', { 'gateway.envoyproxy.io/owning-gateway-name': 'zerodrop', 'gateway.envoyproxy.io/owning-gateway-namespace': NS }));
      const found = await findDataplanePods(client, { namespace: NS, gateway: 'zerodrop' });
      expect(found.rule).toBe('gep-1762');
      expect(found.pods.map((p) => p.metadata.name)).toEqual(['gw-1']);
      expect(found.explanation).toBe(`dataplane pods of Gateway ${NS}/zerodrop found by the GEP-1762 label: gateway.networking.k8s.io/gateway-name=zerodrop in namespace ${NS}`);
    });

    it("Envoy Gateway's owning-gateway labels, in the controller's namespace, when nothing carries GEP-1762's", async () => {
      const { client, cluster } = await setup();
      cluster.put('/api/v1/namespaces/envoy-gateway-system/pods/envoy-1', pod('envoy-gateway-system', 'envoy-1', { 'gateway.envoyproxy.io/owning-gateway-name': 'zerodrop', 'gateway.envoyproxy.io/owning-gateway-namespace': NS }));
      // Another run's Gateway of the same name: the namespace label keeps it out.
      cluster.put('/api/v1/namespaces/envoy-gateway-system/pods/envoy-other', pod('envoy-gateway-system', 'envoy-other', { 'gateway.envoyproxy.io/owning-gateway-name': 'zerodrop', 'gateway.envoyproxy.io/owning-gateway-namespace': 'zerodrop-other' }));
      const found = await findDataplanePods(client, { namespace: NS, gateway: 'zerodrop' });
      expect(found.rule).toBe('envoy-gateway');
      expect(found.pods.map((p) => p.metadata.name)).toEqual(['envoy-1']);
      expect(found.explanation).toContain("found by Envoy Gateway's owning-gateway labels");
      expect(found.explanation).toContain('(nothing by the GEP-1762 label (gateway.networking.k8s.io/gateway-name=zerodrop in namespace');
    });

    it("STUNner's related-gateway labels", async () => {
      const { client, cluster } = await setup();
      cluster.put(`/api/v1/namespaces/${NS}/pods/stunner-1`, pod(NS, 'stunner-1', { 'stunner.l7mp.io/related-gateway-name': 'zerodrop', 'stunner.l7mp.io/related-gateway-namespace': NS }));
      const found = await findDataplanePods(client, { namespace: NS, gateway: 'zerodrop' });
      expect(found.rule).toBe('stunner');
      expect(found.explanation).toContain("STUNner's related-gateway labels");
    });

    it("Traefik's shared dataplane by its controller, on the run's own cluster only; mutant: another controller's pods with the same labels are not taken", async () => {
      const { client, cluster } = await setup();
      cluster.put('/api/v1/namespaces/traefik/pods/traefik-1', pod('traefik', 'traefik-1', { 'app.kubernetes.io/name': 'traefik' }));
      const traefik = { namespace: NS, gateway: 'zerodrop', controllerName: 'traefik.io/gateway-controller' };
      const found = await findDataplanePods(client, { ...traefik, sharedDataplane: true });
      expect(found).toMatchObject({ rule: 'traefik', selector: 'app.kubernetes.io/name=traefik', namespace: undefined });
      expect(found.pods.map((p) => p.metadata.name)).toEqual(['traefik-1']);
      expect(found.explanation).toContain("Traefik's shared dataplane");
      const shared = String(await findDataplanePods(client, traefik).catch((e: unknown) => e));
      expect(shared).toContain('is not disrupted unasked on a cluster shared with others: name it with --dataplane-selector app.kubernetes.io/name=traefik');
      const other = String(await findDataplanePods(client, { ...traefik, controllerName: 'example.com/gateway', sharedDataplane: true }).catch((e: unknown) => e));
      expect(other).toContain('no running dataplane pods found');
    });

    it('--dataplane-selector replaces the rules, even where GEP-1762 would find pods', async () => {
      const { client, cluster } = await setup();
      cluster.put(`/api/v1/namespaces/${NS}/pods/gw-1`, pod(NS, 'gw-1', { 'gateway.networking.k8s.io/gateway-name': 'zerodrop' }));
      cluster.put('/api/v1/namespaces/edge/pods/proxy-1', pod('edge', 'proxy-1', { app: 'edge-proxy' }));
      const found = await findDataplanePods(client, { namespace: NS, gateway: 'zerodrop', selector: 'app=edge-proxy' });
      expect(found).toMatchObject({ rule: 'dataplane-selector', selector: 'app=edge-proxy', namespace: undefined });
      expect(found.pods.map((p) => p.metadata.name)).toEqual(['proxy-1']);
    });

    it('terminating pods do not count, and nothing found is an error naming every rule tried and the flag', async () => {
      const { client, cluster } = await setup();
      cluster.put(`/api/v1/namespaces/${NS}/pods/gw-old`, pod(NS, 'gw-old', { 'gateway.networking.k8s.io/gateway-name': 'zerodrop' }, { deletionTimestamp: '2026-01-01T00:00:00Z' }));
      const error = String(await findDataplanePods(client, { namespace: NS, gateway: 'zerodrop' }).catch((e: unknown) => e));
      expect(error).toContain(`no running dataplane pods found for Gateway ${NS}/zerodrop`);
      expect(error).toContain('the GEP-1762 label');
      expect(error).toContain("Envoy Gateway's owning-gateway labels");
      expect(error).toContain("STUNner's related-gateway labels");
      expect(error).toContain('--dataplane-selector KEY=VALUE');
    });
  });

  describe('owning workload: what can be scaled', () => {
    const owned = (kind: string, name: string, controller = true) => ({ ownerReferences: [{ kind, name, controller }] });
    const dataplane = pod(NS, 'gw-1', {}, owned('ReplicaSet', 'gw-5f7')) as PodLike;

    it('pod -> ReplicaSet -> Deployment; scalable when nothing controls the Deployment', async () => {
      const { client, cluster } = await setup();
      cluster.put(`/apis/apps/v1/namespaces/${NS}/replicasets/gw-5f7`, { metadata: { name: 'gw-5f7', ...owned('Deployment', 'gw') } });
      cluster.put(`/apis/apps/v1/namespaces/${NS}/deployments/gw`, { metadata: { name: 'gw' } });
      const workload = await owningWorkload(client, dataplane);
      expect(workload).toEqual({ kind: 'Deployment', namespace: NS, name: 'gw', controlledBy: undefined });
      expect(scaleProblem(workload, 'gep-1762')).toBeUndefined();
    });

    it('mutant: a Deployment the Gateway controls is skipped for scaling, with the reason', async () => {
      const { client, cluster } = await setup();
      cluster.put(`/apis/apps/v1/namespaces/${NS}/replicasets/gw-5f7`, { metadata: { name: 'gw-5f7', ...owned('Deployment', 'gw') } });
      cluster.put(`/apis/apps/v1/namespaces/${NS}/deployments/gw`, { metadata: { name: 'gw', ...owned('Gateway', 'zerodrop') } });
      const workload = await owningWorkload(client, dataplane);
      expect(scaleProblem(workload, 'gep-1762')).toBe(`Gateway zerodrop controls Deployment ${NS}/gw and owns its replicas`);
    });

    it('a DaemonSet, a bare pod, and a per-controller rule are skipped with their reasons', async () => {
      const { client, cluster } = await setup();
      cluster.put(`/apis/apps/v1/namespaces/${NS}/daemonsets/gw`, { metadata: { name: 'gw' } });
      const ds = await owningWorkload(client, pod(NS, 'gw-1', {}, owned('DaemonSet', 'gw')) as PodLike);
      expect(scaleProblem(ds, 'gep-1762')).toMatch(/DaemonSet .*\/gw: it runs one pod per node and has no replicas to scale/);
      const bare = await owningWorkload(client, pod(NS, 'gw-1', {}) as PodLike);
      expect(scaleProblem(bare, 'gep-1762')).toBe(`pod ${NS}/gw-1 has no owning workload`);
      const deployment = { kind: 'Deployment' as const, namespace: 'envoy-gateway-system', name: 'envoy-zerodrop', controlledBy: undefined };
      expect(scaleProblem(deployment, 'envoy-gateway')).toBe('Envoy Gateway renders Deployment envoy-gateway-system/envoy-zerodrop from its own configuration and owns its replicas');
    });
  });

  describe('teardown', () => {
    const objects = () =>
      gatewayObjects({
        namespace: NS,
        runId: RUN,
        gatewayName: 'zerodrop',
        className: 'acme',
        supportedFeatures: ['HTTPRoute', 'UDPRoute'],
        listeners: [
          { kind: 'HTTPRoute', port: 8080, backend: { service: 'backend', port: 8080 } },
          { kind: 'UDPRoute', port: 9000, backend: { service: 'udp-echo', port: 9000 } },
        ],
      });

    it('routes first, each gone before the Gateway is deleted; the class is never touched', async () => {
      const { client, cluster } = await setup();
      cluster.put(CLASS_PATH, { metadata: { name: 'acme' } });
      const created = objects();
      await applyGatewayObjects(client, created);
      const deleted = await teardownGatewayObjects(client, created, { runId: RUN, timeoutMs: 1_000, pollMs: 5 });
      const http = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/zerodrop-httproute-8080`;
      const udp = `/apis/gateway.networking.k8s.io/v1alpha2/namespaces/${NS}/udproutes/zerodrop-udproute-9000`;
      expect(deleted).toEqual([http, udp, GW_PATH]);
      const writes = fake.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
      expect(writes).toEqual([`PATCH ${GW_PATH}`, `PATCH ${http}`, `PATCH ${udp}`, `DELETE ${http}`, `DELETE ${udp}`, `DELETE ${GW_PATH}`]);
      // The Gateway's DELETE comes after a GET that saw each route gone (404).
      const gatewayDelete = fake.requests.findIndex((r) => r.method === 'DELETE' && r.path === GW_PATH);
      const lastRouteCheck = fake.requests.findLastIndex((r, i) => i < gatewayDelete && r.method === 'GET' && r.path === udp);
      expect(lastRouteCheck).toBeGreaterThan(fake.requests.findIndex((r) => r.method === 'DELETE' && r.path === udp));
      expect(cluster.objects.has(CLASS_PATH)).toBe(true);
    });

    it('mutant: a route held by a finalizer stops the teardown before the Gateway, naming it', async () => {
      const { client, cluster } = await setup();
      const created = objects();
      await applyGatewayObjects(client, created);
      const http = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/zerodrop-httproute-8080`;
      cluster.stuck.add(http);
      await expect(teardownGatewayObjects(client, created, { runId: RUN, timeoutMs: 50, pollMs: 5 })).rejects.toThrow(`${http} still exists 0.1 s after its delete`);
      expect(fake.requests.some((r) => r.method === 'DELETE' && r.path === GW_PATH)).toBe(false);
    });

    it("refuses to delete an object without the run's label", async () => {
      const { client, cluster } = await setup();
      const created = objects();
      cluster.put(GW_PATH, { metadata: { name: 'zerodrop', namespace: NS, labels: { team: 'edge' } } });
      await expect(teardownGatewayObjects(client, { gateway: created.gateway, routes: [] }, { runId: RUN, timeoutMs: 50, pollMs: 5 })).rejects.toThrow(`not labelled zerodrop.dev/run=${RUN}; refusing to delete it`);
      expect(fake.requests.some((r) => r.method === 'DELETE')).toBe(false);
    });

    it('an invalid object creates nothing', async () => {
      const { client } = await setup();
      const created = objects();
      (created.routes[0]!['spec'] as { rules: unknown }).rules = 'not a list';
      await expect(applyGatewayObjects(client, created)).rejects.toThrow(/invalid manifests:\n {2}gateway.networking.k8s.io\/v1\/HTTPRoute zerodrop-httproute-8080/);
      expect(fake.requests).toEqual([]);
    });
  });

  describe('moving a route (gateway-route-swap-http)', () => {
    const HTTP = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/zerodrop-httproute-8080`;
    const created = () =>
      gatewayObjects({ namespace: NS, runId: RUN, gatewayName: 'zerodrop', className: 'acme', supportedFeatures: ['HTTPRoute'], listeners: [{ kind: 'HTTPRoute', port: 8080, backend: { service: 'backend', port: 8080 } }] });
    const route = () => created().routes[0]!;
    const backendRefs = (o: Obj | undefined) => (o?.['spec'] as { rules: { backendRefs: unknown[] }[] } | undefined)?.rules[0]?.backendRefs;

    it('in place: the route applied again with the new backendRefs, never deleted', async () => {
      const { client, cluster } = await setup();
      await applyGatewayObjects(client, created());
      const moved = await moveRoute(client, route(), { service: 'backend-b', port: 8080 }, { recreate: false, runId: RUN, timeoutMs: 1_000, pollMs: 5 });
      expect(backendRefs(cluster.objects.get(HTTP))).toEqual([{ name: 'backend-b', port: 8080 }]);
      expect(backendRefs(moved as Obj)).toEqual([{ name: 'backend-b', port: 8080 }]);
      expect(fake.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`)).toEqual([`PATCH ${GW_PATH}`, `PATCH ${HTTP}`, `PATCH ${HTTP}`]);
    });

    it('recreated: deleted, seen gone, then created with the new backendRefs; a route not of the run is refused', async () => {
      const { client, cluster } = await setup();
      await applyGatewayObjects(client, created());
      await moveRoute(client, route(), { service: 'backend-b', port: 8080 }, { recreate: true, runId: RUN, timeoutMs: 1_000, pollMs: 5 });
      const writes = fake.requests.filter((r) => r.method !== 'GET').map((r) => `${r.method} ${r.path}`);
      expect(writes.slice(-2)).toEqual([`DELETE ${HTTP}`, `PATCH ${HTTP}`]);
      const create = fake.requests.findLastIndex((r) => r.method === 'PATCH' && r.path === HTTP);
      expect(fake.requests.findLastIndex((r, i) => i < create && r.method === 'GET' && r.path === HTTP)).toBeGreaterThan(fake.requests.findIndex((r) => r.method === 'DELETE'));
      expect(backendRefs(cluster.objects.get(HTTP))).toEqual([{ name: 'backend-b', port: 8080 }]);
      cluster.put(HTTP, { metadata: { name: 'zerodrop-httproute-8080', namespace: NS, labels: { team: 'edge' } } });
      await expect(moveRoute(client, route(), { service: 'backend-b', port: 8080 }, { recreate: true, runId: RUN, timeoutMs: 50, pollMs: 5 })).rejects.toThrow(`not labelled zerodrop.dev/run=${RUN}; refusing to delete it`);
    });
  });
});

describe('--gateway-class: where the harness sends traffic', () => {
  const published = new Map([[30800, 30800], [30801, 30801]]);
  const service = (nodePort: number) => ({ metadata: { name: 'envoy-zerodrop', namespace: 'envoy-gateway-system' }, spec: { type: 'NodePort', ports: [{ port: 8080, nodePort }] } });

  it('on kind: the generated Service through a published NodePort', () => {
    expect(chooseEndpoint({ provider: 'kind', gateway: 'zerodrop', listenerPort: 8080, addresses: [{ value: '10.96.0.10' }], services: [service(30801)], published })).toEqual({
      host: '127.0.0.1',
      port: 30801,
      via: 'Service envoy-gateway-system/envoy-zerodrop NodePort 30801',
    });
  });

  it("on netns: the same NodePort, at the first node's address where the cluster publishes it", () => {
    expect(chooseEndpoint({ provider: 'netns', gateway: 'zerodrop', listenerPort: 8080, addresses: [], services: [service(30801)], published, publishedHost: '198.18.0.10' })).toMatchObject({ host: '198.18.0.10', port: 30801 });
  });

  it('mutant: on kind a NodePort kind does not publish fails, naming it and the published ones', () => {
    expect(() => chooseEndpoint({ provider: 'kind', gateway: 'zerodrop', listenerPort: 8080, addresses: [{ value: '10.96.0.10' }], services: [service(31234)], published })).toThrow(
      'Gateway zerodrop is not reachable from the host: envoy-zerodrop has NodePort 31234, and kind publishes only NodePorts 30800, 30801',
    );
    expect(() => chooseEndpoint({ provider: 'kind', gateway: 'zerodrop', listenerPort: 8080, addresses: [], services: [], published })).toThrow('no Service of its dataplane has a NodePort for port 8080');
  });

  it('on a cluster: the first IPAddress or Hostname of status.addresses, untyped counting as IPAddress', () => {
    const addresses = [{ type: 'example.com/pod-network', value: 'x' }, { type: 'Hostname', value: 'lb.example.com' }, { value: '1.2.3.4' }];
    expect(chooseEndpoint({ provider: 'cluster', gateway: 'zerodrop', listenerPort: 80, addresses, services: [], published: new Map() })).toEqual({ host: 'lb.example.com', port: 80, via: 'status.addresses Hostname lb.example.com' });
    expect(() => chooseEndpoint({ provider: 'cluster', gateway: 'zerodrop', listenerPort: 80, addresses: [addresses[0]!], services: [], published: new Map() })).toThrow('has no IPAddress or Hostname in status.addresses (example.com/pod-network:x)');
  });

  describe('reachability', () => {
    let server: Server | undefined;
    afterEach(async () => {
      await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
      server = undefined;
    });

    it('passes when the endpoint accepts a connection; mutant: a closed port fails naming the endpoint', async () => {
      server = createServer((s) => s.end());
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as { port: number };
      await expect(probeTcp({ host: '127.0.0.1', port, via: 'test' })).resolves.toBeUndefined();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      server = undefined;
      await expect(probeTcp({ host: '127.0.0.1', port, via: 'Service x NodePort 30800' })).rejects.toThrow(`the Gateway at 127.0.0.1:${port} (Service x NodePort 30800) is not reachable from the host: connect ECONNREFUSED`);
    });
  });
});

describe('--gateway-class: drain bounds from the pod spec', () => {
  it('grace period and a sleep preStop', () => {
    const p = { metadata: { name: 'gw-1' }, spec: { terminationGracePeriodSeconds: 900, containers: [{ name: 'envoy', lifecycle: { preStop: { sleep: { seconds: 15 } } } }, { name: 'shutdown-manager' }] } };
    expect(drainBoundsOf(p)).toEqual({ minDrainSeconds: 15, drainTimeoutSeconds: 900, source: 'pod gw-1: terminationGracePeriodSeconds 900, preStop envoy: sleep 15 s' });
  });

  it("an exec preStop states no minimum; no grace period is Kubernetes' default 30 s", () => {
    const p = { metadata: { name: 'gw-1' }, spec: { containers: [{ name: 'envoy', lifecycle: { preStop: { exec: { command: ['/shutdown'] } } } }] } };
    expect(drainBoundsOf(p)).toEqual({ minDrainSeconds: 0, drainTimeoutSeconds: 30, source: 'pod gw-1: terminationGracePeriodSeconds 30 (default), preStop envoy: exec' });
  });

  it('a sleep longer than the grace period is cut at the grace period', () => {
    const p = { metadata: { name: 'gw-1' }, spec: { terminationGracePeriodSeconds: 10, containers: [{ name: 'c', lifecycle: { preStop: { sleep: { seconds: 60 } } } }] } };
    expect(drainBoundsOf(p).minDrainSeconds).toBe(10);
  });
});

describe('--gateway-class: the whole flow for one run', () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });
  const EG_NS = 'envoy-gateway-system';
  const egLabels = { 'gateway.envoyproxy.io/owning-gateway-name': 'zerodrop', 'gateway.envoyproxy.io/owning-gateway-namespace': NS };
  const settings = { name: 'acme', timeouts: { gatewayClassMustBeAccepted: 500, gatewayMustHaveCondition: 500, gatewayMustHaveAddress: 500 } };
  const listeners = [{ kind: 'HTTPRoute' as const, port: 8080, backend: { service: 'backend', port: 8080 } }];

  /** A cluster with an Envoy-Gateway-like controller: it programs the Gateway and runs its proxy in its own namespace. */
  async function cluster(opts: { features?: string[]; nodePort?: number } = {}) {
    fake = await new FakeApiServer().listen();
    const c = new Cluster(fake);
    c.put(CLASS_PATH, { metadata: { name: 'acme', generation: 1 }, spec: { controllerName: 'acme.io/gateway' }, status: { conditions: [condition('Accepted', 'True', 1)], supportedFeatures: (opts.features ?? ['Gateway', 'HTTPRoute']).map((name) => ({ name })) } });
    c.onApply = (path, object) => {
      if (path !== GW_PATH) return;
      setTimeout(() => {
        c.put(GW_PATH, { ...object, status: { conditions: [condition('Accepted', 'True', 1), condition('Programmed', 'True', 1)], addresses: [{ type: 'IPAddress', value: '10.96.7.7' }] } });
        c.put(`/api/v1/namespaces/${EG_NS}/pods/envoy-1`, {
          ...pod(EG_NS, 'envoy-1', egLabels, { ownerReferences: [{ kind: 'ReplicaSet', name: 'envoy-5f7', controller: true }] }),
          spec: { terminationGracePeriodSeconds: 900, containers: [{ name: 'envoy', lifecycle: { preStop: { httpGet: { path: '/shutdown/ready', port: 19002 } } } }] },
        });
        c.put(`/apis/apps/v1/namespaces/${EG_NS}/replicasets/envoy-5f7`, { metadata: { name: 'envoy-5f7', ownerReferences: [{ kind: 'Deployment', name: 'envoy-zerodrop', controller: true }] } });
        c.put(`/apis/apps/v1/namespaces/${EG_NS}/deployments/envoy-zerodrop`, { metadata: { name: 'envoy-zerodrop' } });
        c.put(`/api/v1/namespaces/${EG_NS}/services/envoy-zerodrop`, { metadata: { name: 'envoy-zerodrop', namespace: EG_NS, labels: egLabels }, spec: { type: 'NodePort', ports: [{ port: 8080, nodePort: opts.nodePort ?? 30800 }] } });
      }, 20);
    };
    return { client: KubeClient.forServer(fake.url), c };
  }
  const probes: string[] = [];
  const base = { settings, provider: 'kind' as const, namespace: NS, runId: RUN, listeners, published: new Map([[30800, 30800]]), pollMs: 5, probe: async (e: { host: string; port: number }) => void probes.push(`${e.host}:${e.port}`) };

  it('class -> Gateway and route -> Programmed -> pods by rule -> endpoint -> workload and drain bounds; teardown routes then Gateway', async () => {
    const { client, c } = await cluster();
    const run = await openGatewayClassRun(client, base);
    if ('skipped' in run) throw new Error(run.skipped);
    expect(run.discovery.rule).toBe('envoy-gateway');
    expect(run.endpoints.get(8080)).toEqual({ host: '127.0.0.1', port: 30800, via: `Service ${EG_NS}/envoy-zerodrop NodePort 30800` });
    expect(probes).toContain('127.0.0.1:30800');
    expect(run.workload).toEqual({ kind: 'Deployment', namespace: EG_NS, name: 'envoy-zerodrop', controlledBy: undefined });
    expect(run.scaleProblem).toBe(`Envoy Gateway renders Deployment ${EG_NS}/envoy-zerodrop from its own configuration and owns its replicas`);
    expect(run.drain).toMatchObject({ minDrainSeconds: 0, drainTimeoutSeconds: 900 });
    expect(run.notes).toEqual([
      'GatewayClass acme: controller acme.io/gateway, supportedFeatures Gateway, HTTPRoute',
      expect.stringContaining("found by Envoy Gateway's owning-gateway labels"),
      `listener 8080 reached at 127.0.0.1:30800 (Service ${EG_NS}/envoy-zerodrop NodePort 30800)`,
      'drain bounds from pod envoy-1: terminationGracePeriodSeconds 900, preStop envoy: httpGet',
    ]);
    const http = `/apis/gateway.networking.k8s.io/v1/namespaces/${NS}/httproutes/zerodrop-httproute-8080`;
    expect(await run.teardown()).toEqual([http, GW_PATH]);
    expect(c.objects.has(CLASS_PATH)).toBe(true);
    expect(fake.requests.filter((r) => r.path.includes('/gatewayclasses') && r.method !== 'GET')).toEqual([]);
  });

  it('a route kind the class does not support: skipped with the reason, nothing created', async () => {
    const { client } = await cluster();
    const run = await openGatewayClassRun(client, { ...base, listeners: [{ kind: 'UDPRoute', port: 9000, backend: { service: 'udp-echo', port: 9000 } }] });
    expect(run).toEqual({ skipped: 'GatewayClass acme does not list UDPRoute in status.supportedFeatures (it lists Gateway, HTTPRoute)' });
    expect(fake.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('mutant: a Gateway the host cannot reach fails clearly, and what the run created is deleted before the error', async () => {
    const { client, c } = await cluster({ nodePort: 31999 });
    await expect(openGatewayClassRun(client, base)).rejects.toThrow(`Gateway ${NS}/zerodrop is not reachable from the host: envoy-zerodrop has NodePort 31999, and kind publishes only NodePorts 30800`);
    expect(c.objects.has(GW_PATH)).toBe(false);
    expect(fake.requests.filter((r) => r.method === 'DELETE').map((r) => r.path.split('/').at(-2))).toEqual(['httproutes', 'gateways']);
  });

  it('mutant: a controller that never programs the Gateway times out on the override, and the objects go', async () => {
    const { client, c } = await cluster();
    c.onApply = undefined;
    await expect(openGatewayClassRun(client, { ...base, settings: { ...settings, timeouts: { ...settings.timeouts, gatewayMustHaveCondition: 60 } } })).rejects.toThrow(/not Accepted and Programmed within 0\.1 s: Accepted: no condition yet/);
    expect(c.objects.has(GW_PATH)).toBe(false);
  });
});
