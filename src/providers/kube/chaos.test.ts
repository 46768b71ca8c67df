import { afterEach, describe, expect, it } from 'vitest';
import { deleteRunNamespace, serverSideApply } from './apply.ts';
import { cordon, deletePod, drainNode, evictPod, RESTARTED_AT, rolloutRestart, scaleDeployment } from './chaos.ts';
import { KubeClient } from './client.ts';
import { FakeApiServer, type RecordedRequest } from '../../../test-support/fake-api-server.ts';

const NS = 'zerodrop-abcd1234';

describe('chaos and apply calls: method, path, content type and body', () => {
  let fake: FakeApiServer;
  afterEach(async () => {
    await fake.close();
  });

  async function setup() {
    fake = await new FakeApiServer().listen();
    return KubeClient.forServer(fake.url);
  }

  const calls = (): Pick<RecordedRequest, 'method' | 'path' | 'contentType'>[] =>
    fake.requests.map(({ method, path, contentType }) => ({ method, path, contentType }));

  it('deletes a pod with its grace period, and force-deletes with grace 0', async () => {
    const client = await setup();
    await deletePod(client, NS, 'backend-1');
    await deletePod(client, NS, 'backend-2', 0);
    await deletePod(client, NS, 'backend-3', 30);
    expect(calls()).toEqual([
      { method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods/backend-1`, contentType: 'application/json' },
      { method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods/backend-2`, contentType: 'application/json' },
      { method: 'DELETE', path: `/api/v1/namespaces/${NS}/pods/backend-3`, contentType: 'application/json' },
    ]);
    // No gracePeriodSeconds: the pod's own terminationGracePeriodSeconds applies.
    expect(fake.requests[0]?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions' });
    expect(fake.requests[1]?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0 });
    expect(fake.requests[2]?.body).toEqual({ apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 30 });
  });

  it('scales through the scale subresource with a merge patch', async () => {
    const client = await setup();
    fake.respond((r) => (r.method === 'GET' && r.path.endsWith('/scale') ? { status: 200, body: { kind: 'Scale', spec: { replicas: 3 } } } : undefined));
    const from = await scaleDeployment(client, NS, 'gateway', 1);
    expect(from).toBe(3);
    const patch = fake.requests.find((r) => r.method === 'PATCH');
    expect(patch).toEqual({
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${NS}/deployments/gateway/scale`,
      query: {},
      contentType: 'application/merge-patch+json',
      body: { spec: { replicas: 1 } },
    });
  });

  it('restarts a rollout with a strategic merge patch of the restartedAt annotation, as kubectl does', async () => {
    const client = await setup();
    fake.respond((r) => (r.method === 'PATCH' ? { status: 200, body: { metadata: { generation: 4 } } } : undefined));
    const generation = await rolloutRestart(client, NS, 'backend', new Date('2026-01-02T03:04:05.000Z'));
    expect(generation).toBe(4);
    expect(fake.requests[0]).toEqual({
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${NS}/deployments/backend`,
      query: {},
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { template: { metadata: { annotations: { [RESTARTED_AT]: '2026-01-02T03:04:05.000Z' } } } } },
    });
  });

  it('cordons with a strategic merge patch of spec.unschedulable', async () => {
    const client = await setup();
    await cordon(client, 'zerodrop-worker');
    expect(fake.requests[0]).toMatchObject({
      method: 'PATCH',
      path: '/api/v1/nodes/zerodrop-worker',
      contentType: 'application/strategic-merge-patch+json',
      body: { spec: { unschedulable: true } },
    });
  });

  it('evicts through the Eviction API and reports a PodDisruptionBudget refusal (429) with what the budget needs', async () => {
    const client = await setup();
    let refusals = 1;
    fake.respond((r) =>
      r.path.endsWith('/eviction') && refusals-- > 0
        ? {
            status: 429,
            // As the eviction registry answers (k8s.io/kubernetes pkg/registry/core/pod/storage/eviction.go).
            body: {
              kind: 'Status',
              code: 429,
              reason: 'TooManyRequests',
              message: "Cannot evict pod as it would violate the pod's disruption budget.",
              details: { causes: [{ reason: 'DisruptionBudget', message: 'The disruption budget backend needs 2 healthy pods and has 2 currently' }] },
            },
          }
        : undefined,
    );
    expect(await evictPod(client, NS, 'backend-1')).toBe('refused by its PodDisruptionBudget (429): The disruption budget backend needs 2 healthy pods and has 2 currently');
    expect(await evictPod(client, NS, 'backend-1', 10)).toBe(true);
    expect(fake.requests[1]).toEqual({
      method: 'POST',
      path: `/api/v1/namespaces/${NS}/pods/backend-1/eviction`,
      query: {},
      contentType: 'application/json',
      body: { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: 'backend-1', namespace: NS }, deleteOptions: { gracePeriodSeconds: 10 } },
    });
  });

  it("tells the API server's own throttling (a 429 with no DisruptionBudget cause) from a budget's refusal", async () => {
    const client = await setup();
    // API Priority and Fairness rejects with 429 and a Retry-After, and no details.causes.
    fake.respond((r) => (r.path.endsWith('/eviction') ? { status: 429, body: { kind: 'Status', code: 429, reason: 'TooManyRequests', message: 'Too many requests, please try again later.' } } : undefined));
    expect(await evictPod(client, NS, 'backend-1')).toBe(
      'refused with 429 by the API server without a DisruptionBudget cause (its own throttling, not a budget): Too many requests, please try again later.',
    );
  });

  it('drains a node: cordon, list only the run namespace pods on it, evict each, waiting while a budget refuses', async () => {
    const client = await setup();
    let refusals = 2;
    fake.respond((r) => {
      if (r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}/pods`) {
        return {
          status: 200,
          body: { items: [{ metadata: { name: 'backend-1' } }, { metadata: { name: 'backend-2', deletionTimestamp: '2026-01-01T00:00:00Z' } }, { metadata: { name: 'backend-3' } }] },
        };
      }
      if (r.path.endsWith('backend-3/eviction') && refusals-- > 0) {
        return { status: 429, body: { code: 429, details: { causes: [{ reason: 'DisruptionBudget', message: `refusal ${refusals}` }] } } };
      }
      return undefined;
    });
    const refused: string[] = [];
    const evicted = await drainNode(client, NS, 'zerodrop-worker2', { retryMs: 20, timeoutMs: 5000, onRefused: (p, why) => refused.push(`${p} ${why}`) });
    expect(evicted).toEqual(['backend-1', 'backend-3']);
    expect(refused).toEqual(['backend-3 refused by its PodDisruptionBudget (429): refusal 1', 'backend-3 refused by its PodDisruptionBudget (429): refusal 0']);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'PATCH /api/v1/nodes/zerodrop-worker2',
      `GET /api/v1/namespaces/${NS}/pods`,
      `POST /api/v1/namespaces/${NS}/pods/backend-1/eviction`,
      `POST /api/v1/namespaces/${NS}/pods/backend-3/eviction`,
      `POST /api/v1/namespaces/${NS}/pods/backend-3/eviction`,
      `POST /api/v1/namespaces/${NS}/pods/backend-3/eviction`,
    ]);
    expect(fake.requests[1]?.query).toEqual({ fieldSelector: 'spec.nodeName=zerodrop-worker2' });
  });

  it('gives up a drain a budget keeps blocking, naming the pod', async () => {
    const client = await setup();
    fake.respond((r) => {
      if (r.method === 'GET') return { status: 200, body: { items: [{ metadata: { name: 'backend-1' } }] } };
      if (r.path.endsWith('/eviction')) return { status: 429, body: { code: 429 } };
      return undefined;
    });
    await expect(drainNode(client, NS, 'n1', { retryMs: 20, timeoutMs: 100 })).rejects.toThrow(/PodDisruptionBudget still blocks eviction of backend-1/);
  });

  it('applies server-side: PATCH with apply-patch+yaml, the zerodrop field manager and force', async () => {
    const client = await setup();
    const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'backend', namespace: NS }, spec: { replicas: 3 } };
    await serverSideApply(client, deployment);
    await serverSideApply(client, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    expect(fake.requests[0]).toEqual({
      method: 'PATCH',
      path: `/apis/apps/v1/namespaces/${NS}/deployments/backend`,
      query: { fieldManager: 'zerodrop', force: 'true' },
      contentType: 'application/apply-patch+yaml',
      body: deployment,
    });
    expect(fake.requests[1]?.path).toBe(`/api/v1/namespaces/${NS}`);
  });

  it('tears down only a namespace labelled with its run id', async () => {
    const client = await setup();
    fake.respond((r) =>
      r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}`
        ? { status: 200, body: { metadata: { name: NS, labels: { 'zerodrop.dev/run': 'someone-else' } } } }
        : undefined,
    );
    await expect(deleteRunNamespace(client, NS, 'abcd1234')).rejects.toThrow(/refusing to delete/);
    expect(fake.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
  });

  it('tears down its own namespace: controllers (orphaning), then pods at once, Services awaited, then the namespace', async () => {
    const client = await setup();
    fake.respond((r) => {
      if (r.method === 'GET' && r.path === `/api/v1/namespaces/${NS}`) return { status: 200, body: { metadata: { name: NS, labels: { 'zerodrop.dev/run': 'abcd1234' } } } };
      if (r.method === 'GET' && r.path.endsWith('/services')) return { status: 200, body: { items: [] } };
      return undefined;
    });
    await deleteRunNamespace(client, NS, 'abcd1234');
    expect(fake.requests.filter((r) => r.method === 'DELETE').map((r) => `${r.path} ${JSON.stringify(r.query)}`)).toEqual([
      `/apis/apps/v1/namespaces/${NS}/deployments {}`,
      `/apis/apps/v1/namespaces/${NS}/replicasets {}`,
      `/api/v1/namespaces/${NS}/pods {"gracePeriodSeconds":"0"}`,
      `/api/v1/namespaces/${NS}/services {}`,
      `/api/v1/namespaces/${NS} {}`,
    ]);
    // A ReplicaSet left behind would replace the pods deleted at once with ones the namespace delete waits for.
    const controllers = fake.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/apis/apps/v1/'));
    for (const r of controllers) expect(r.body).toMatchObject({ kind: 'DeleteOptions', propagationPolicy: 'Orphan' });
  });
});
