import { afterEach, describe, expect, it } from 'vitest';
import { Recorder } from '../../observe/recorder.ts';
import { packageRoot } from '../../paths.ts';
import { catalog } from '../../scenarios/index.ts';
import { referenceProfile } from '../../profiles/reference.ts';
import { optionsFor } from '../../runner/run-matrix.ts';
import { PUBLISHED_NODE_PORTS } from '../kind/kind.ts';
import { KubeClient } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import { KubeProvider, type KubeProviderOptions, type Exposure } from './kube-provider.ts';

const RUN = 'feedbeef';
const NS = `zerodrop-${RUN}`;
const PODS = `/api/v1/namespaces/${NS}/pods`;
const SLICES = `/apis/discovery.k8s.io/v1/namespaces/${NS}/endpointslices`;
const DEPLOYMENT = `/apis/apps/v1/namespaces/${NS}/deployments/backend`;

function pod(name: string, extra: Record<string, unknown> = {}) {
  return {
    metadata: { name, labels: { 'zerodrop.dev/workload': 'backend' }, ...extra },
    status: { podIP: `10.244.0.${name.slice(-1)}`, conditions: [{ type: 'Ready', status: 'True' }], containerStatuses: [{ name: 'main', restartCount: 0, state: { running: {} } }] },
  };
}

describe('KubeProvider against a fake API server', () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });

  async function setup(
    opts: { allowNodeOperations?: boolean; exposure?: Exposure; dataplaneReady?: KubeProviderOptions['dataplaneReady']; routeWatch?: KubeProviderOptions['routeWatch']; kubeProxyProgrammed?: KubeProviderOptions['kubeProxyProgrammed'] } = {},
  ) {
    fake = await new FakeApiServer().listen();
    for (const p of [PODS, SLICES, `/api/v1/namespaces/${NS}/events`]) fake.serve(p);
    const deployment = { generation: 1, observed: 1, replicas: 3, updated: 3 };
    let namespaceApplied = false;
    fake.respond((r) => {
      if (r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}`) {
        return namespaceApplied ? { status: 200, body: { metadata: { name: NS, labels: { 'zerodrop.dev/run': RUN } } } } : { status: 404, body: { code: 404 } };
      }
      if (r.method === 'PATCH' && r.contentType === 'application/apply-patch+yaml') {
        const body = r.body as { kind: string };
        if (body.kind === 'Namespace') namespaceApplied = true;
        // The "controllers": once the Deployment is applied, its pods appear ready and in the slice.
        if (body.kind === 'Deployment') {
          setTimeout(() => {
            for (const n of ['backend-1', 'backend-2', 'backend-3']) fake.put(PODS, pod(n));
            fake.put(SLICES, {
              metadata: { name: 'backend-x', labels: { 'kubernetes.io/service-name': 'backend' } },
              endpoints: ['backend-1', 'backend-2', 'backend-3'].map((n) => ({ addresses: ['10.0.0.1'], conditions: { ready: true }, targetRef: { kind: 'Pod', name: n } })),
            });
          }, 20);
        }
        return { status: 200, body: r.body };
      }
      if (r.method === 'GET' && r.path === DEPLOYMENT) {
        return {
          status: 200,
          body: {
            metadata: { generation: deployment.generation },
            spec: { replicas: deployment.replicas },
            status: { observedGeneration: deployment.observed, replicas: deployment.replicas, updatedReplicas: deployment.updated, readyReplicas: deployment.replicas, availableReplicas: deployment.replicas },
          },
        };
      }
      if (r.method === 'GET' && r.path === `${DEPLOYMENT}/scale`) return { status: 200, body: { spec: { replicas: deployment.replicas } } };
      if (r.method === 'PATCH' && r.path === DEPLOYMENT) {
        deployment.generation = 2;
        deployment.updated = 0;
        return { status: 200, body: { metadata: { generation: 2 } } };
      }
      if (r.method === 'GET' && r.path.endsWith('/services')) return { status: 200, body: { items: [] } };
      return undefined;
    });
    const recorder = new Recorder();
    const provider = new KubeProvider({
      name: 'kind',
      client: KubeClient.forServer(fake.url),
      recorder,
      runId: RUN,
      cwd: packageRoot,
      exposure: opts.exposure ?? { kind: 'nodePort', host: '127.0.0.1', ports: [...PUBLISHED_NODE_PORTS] },
      capabilities: { multiNode: true, udp: true },
      allowNodeOperations: opts.allowNodeOperations ?? false,
      pollMs: 20,
      minDeployTimeoutMs: 0,
      dataplaneReady: opts.dataplaneReady ?? { probe: async () => {}, programmingBoundMs: 0 },
      ...(opts.routeWatch ? { routeWatch: opts.routeWatch } : {}),
      ...(opts.kubeProxyProgrammed ? { kubeProxyProgrammed: opts.kubeProxyProgrammed } : {}),
    });
    const def = catalog.find((d) => d.id === 'backend-delete-http');
    if (!def) throw new Error('catalog changed');
    const topology = def.build(referenceProfile, optionsFor(def, {}, false)).topology;
    return { provider, recorder, deployment, topology };
  }

  it('validates, applies in order, waits for ready endpoints, and publishes the Service on the host', async () => {
    const { provider, topology } = await setup();
    await provider.deploy(topology, { timeoutMs: 5000 });
    const applied = fake.requests.filter((r) => r.contentType === 'application/apply-patch+yaml').map((r) => (r.body as { kind: string }).kind);
    expect(applied).toEqual(['Namespace', 'ConfigMap', 'Role', 'RoleBinding', 'Service', 'Deployment', 'PodDisruptionBudget']);
    expect(provider.pods('backend').map((p) => [p.name, p.phase, p.ready])).toEqual([
      ['backend-1', 'Running', true],
      ['backend-2', 'Running', true],
      ['backend-3', 'Running', true],
    ]);
    expect(provider.serviceAddress('backend')).toEqual({ host: '127.0.0.1', port: PUBLISHED_NODE_PORTS[0]?.hostPort });
    await provider.teardown();
  });

  it('starts no load before the dataplane answers: each TCP Service port probed until it connects, then the programming bound', async () => {
    // Ready endpoints are the API's view; kube-proxy programs them later. A deploy that returned at
    // once let a real cluster refuse the first requests.
    const probed: string[] = [];
    let refusals = 3;
    const { provider, topology } = await setup({
      dataplaneReady: {
        probe: async (endpoint) => {
          probed.push(`${endpoint.host}:${endpoint.port}`);
          if (refusals-- > 0) throw new Error('ECONNREFUSED');
        },
        programmingBoundMs: 300,
      },
    });
    const started = performance.now();
    await provider.deploy(topology, { timeoutMs: 5000 });
    expect(probed).toHaveLength(4);
    expect(new Set(probed)).toEqual(new Set([`127.0.0.1:${PUBLISHED_NODE_PORTS[0]?.hostPort}`]));
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    await provider.teardown();
  });

  it('where kube-proxy\'s rules can be read, starts the load once they send the Service to every ready pod, without waiting out the bound', async () => {
    const asked: unknown[] = [];
    const { provider, topology } = await setup({
      dataplaneReady: { probe: async () => {}, programmingBoundMs: 60_000 },
      // Programmed at the third look.
      kubeProxyProgrammed: async (services) => asked.push(services) >= 3,
    });
    await provider.deploy(topology, { timeoutMs: 5000 });
    expect(asked).toHaveLength(3);
    expect(asked[0]).toEqual([{ namespace: NS, service: 'backend', addresses: ['10.244.0.1', '10.244.0.2', '10.244.0.3'] }]);
    await provider.teardown();
  });

  it('starts the load at the bound when the rules never show every ready pod (a Service programmed only partly on some nodes)', async () => {
    const { provider, topology } = await setup({
      dataplaneReady: { probe: async () => {}, programmingBoundMs: 300 },
      kubeProxyProgrammed: async () => false,
    });
    const started = performance.now();
    await provider.deploy(topology, { timeoutMs: 5000 });
    expect(performance.now() - started).toBeGreaterThanOrEqual(300);
    await provider.teardown();
  });

  it('returns from deploy only once the route watch has seen a connection, probing again until it has', async () => {
    // A watch that listens late (conntrack still subscribing) missed every connection a load opened
    // as deploy returned: the watch starts before the probes, and deploy probes on until it hears one.
    // It hears the fourth probe: the first three went out before it listened.
    let probes = 0;
    const { provider, recorder, topology } = await setup({
      dataplaneReady: { probe: async () => void probes++, programmingBoundMs: 0 },
      routeWatch: () => ({ seenAny: () => probes >= 4, stop: async () => [] }),
    });
    await provider.deploy(topology, { timeoutMs: 5000 });
    expect(probes).toBe(4);
    expect(recorder.timeline.events.filter((e) => e.kind === 'note' && /route watch/.test(e.message ?? ''))).toEqual([]);
    await provider.teardown();
  });

  it('names the NodePort another Service of the cluster holds, and how to find it', async () => {
    const { provider, topology } = await setup();
    const port = PUBLISHED_NODE_PORTS[0]?.nodePort ?? 0;
    fake.respond((r) => {
      if (r.method !== 'PATCH' || (r.body as { kind?: string }).kind !== 'Service') return undefined;
      // The API server's 422 Invalid (Kubernetes' own e2e service helpers match "provided port is already allocated").
      const message = `Service "backend" is invalid: spec.ports[0].nodePort: Invalid value: ${port}: provided port is already allocated`;
      return { status: 422, body: { kind: 'Status', status: 'Failure', reason: 'Invalid', code: 422, message } };
    }, { first: true });
    await expect(provider.deploy(topology, { timeoutMs: 5000 })).rejects.toThrow(
      new RegExp(`NodePort ${port} for Service backend is already allocated on this cluster: another Service holds it \\(find it: kubectl get services -A -o wide \\| grep ':${port}/'\\)`),
    );
    await provider.teardown();
  });

  it('records one delete-issued per delete it sends, scale and rollout events, and tears down only its namespace', async () => {
    const { provider, recorder, deployment, topology } = await setup();
    await provider.deploy(topology, { timeoutMs: 5000 });
    await provider.deletePod('backend-1', { gracePeriodSeconds: 0 });
    fake.put(PODS, pod('backend-1', { deletionTimestamp: '2026-01-01T00:00:00Z', deletionGracePeriodSeconds: 0 }));
    fake.remove(PODS, 'backend-1');
    await provider.waitForPodGone('backend-1', { timeoutMs: 2000 });
    const deletes = recorder.timeline.events.filter((e) => e.kind === 'delete-issued');
    expect(deletes).toHaveLength(1);
    expect(deletes[0]).toMatchObject({ pod: 'backend-1', workload: 'backend', detail: { gracePeriodSeconds: 0, observed: 'api-response' } });

    await provider.scale('backend', 2);
    expect(recorder.timeline.events.find((e) => e.kind === 'scale')?.detail).toEqual({ from: 3, to: 2 });

    await provider.rolloutRestart('backend');
    expect(recorder.timeline.events.find((e) => e.kind === 'rollout-start')?.detail).toEqual({ generation: 2 });
    setTimeout(() => {
      deployment.observed = 2;
      deployment.updated = 3;
    }, 50);
    await provider.waitForRollout('backend', { timeoutMs: 2000 });
    expect(recorder.timeline.events.find((e) => e.kind === 'rollout-complete')?.detail).toEqual({ generation: 2 });

    await expect(provider.drainNode('zerodrop-worker', { retryMs: 50, timeoutMs: 1000 })).rejects.toThrow(/does not cordon or drain nodes of a cluster it did not create/);

    await provider.teardown();
    const deletesSent = fake.requests.filter((r) => r.method === 'DELETE').map((r) => r.path);
    expect(deletesSent).toEqual([
      `${PODS}/backend-1`,
      `/apis/apps/v1/namespaces/${NS}/deployments`,
      `/apis/apps/v1/namespaces/${NS}/replicasets`,
      PODS,
      `/api/v1/namespaces/${NS}/services`,
      `/api/v1/namespaces/${NS}`,
    ]);
    // Nothing outside the run's namespace was ever written.
    for (const r of fake.requests.filter((x) => x.method !== 'GET')) expect(r.path).toMatch(new RegExp(`/namespaces/${NS}(/|$)`));
  });

  it('on an existing cluster: type LoadBalancer, and waits for the address the cloud assigns', async () => {
    const { provider, topology } = await setup({ exposure: { kind: 'loadBalancer' } });
    let asked = 0;
    fake.respond(
      (r) =>
        r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}/services/backend`
          ? { status: 200, body: { status: { loadBalancer: ++asked < 3 ? {} : { ingress: [{ ip: '203.0.113.7' }] } } } }
          : undefined,
      { first: true },
    );
    await provider.deploy(topology, { timeoutMs: 5000 });
    const service = fake.requests.find((r) => r.contentType === 'application/apply-patch+yaml' && (r.body as { kind: string }).kind === 'Service');
    expect((service?.body as { spec: { type: string; ports: Record<string, unknown>[] } }).spec.type).toBe('LoadBalancer');
    expect((service?.body as { spec: { ports: Record<string, unknown>[] } }).spec.ports[0]).not.toHaveProperty('nodePort');
    expect(asked).toBe(3);
    expect(provider.serviceAddress('backend')).toEqual({ host: '203.0.113.7', port: 8080 });
    await provider.teardown();
  });

  it('refuses to deploy into a namespace that already exists', async () => {
    const { provider, topology } = await setup();
    // The namespace exists before the run.
    fake.respond(
      (r) => (r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}` ? { status: 200, body: { metadata: { name: NS, labels: { team: 'payments' } } } } : undefined),
      { first: true },
    );
    await expect(provider.deploy(topology, { timeoutMs: 2000 })).rejects.toThrow(/already exists .*zerodrop only deletes namespaces it created/);
    await provider.teardown();
    expect(fake.requests.filter((r) => r.method !== 'GET')).toEqual([]);
  });
});
