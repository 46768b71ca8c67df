// zerodrop's own Kubernetes code against a real API server, for what a real one does and a fake only
// imitates: how it refuses an invalid object, a watch it ends being resumed without losing a change,
// and an eviction a PodDisruptionBudget refuses (429 with its DisruptionBudget cause). What a real
// server cannot be made to show on demand (an expired resourceVersion: 410 Gone after etcd's
// compaction, a watch cut mid-stream) stays with the fake API server's tests (src/providers/kube/).

import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { serverSideApply } from '../../src/providers/kube/apply.ts';
import { evictPod } from '../../src/providers/kube/chaos.ts';
import { KubeApiError } from '../../src/providers/kube/client.ts';
import { ListWatch, type Change, type KubeObject } from '../../src/providers/kube/list-watch.ts';
import { skipReason, title, useNetnsCluster } from './context.ts';

const NS = 'zerodrop-api-checks';

describe.skipIf(skipReason !== '')(title('zerodrop\'s Kubernetes code on a real API server'), () => {
  const cluster = useNetnsCluster(1);

  it('an invalid object is refused with 422 and a cause naming the field, and nothing is created', async () => {
    const client = cluster.client();
    await serverSideApply(client, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const bad = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'bad', namespace: NS }, spec: { ports: [{ port: 70_000, protocol: 'TCP' }] } };
    const err = await serverSideApply(client, bad).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(KubeApiError);
    expect((err as KubeApiError).status).toBe(422);
    expect((err as KubeApiError).causes).toContainEqual(expect.objectContaining({ field: 'spec.ports[0].port', message: expect.stringMatching(/between 1 and 65535/) }));
    await expect(client.request('GET', `/api/v1/namespaces/${NS}/services/bad`)).rejects.toMatchObject({ status: 404 });
  });

  it('a watch the server ends (its timeout) is reopened from the last resourceVersion: every change seen once, nothing relisted', async () => {
    const client = cluster.client();
    const stop = new AbortController();
    const changes: Change<KubeObject>[] = [];
    const watch = new ListWatch<KubeObject>({ client, path: `/api/v1/namespaces/${NS}/configmaps`, labelSelector: 'zerodrop.dev/check=watch', onChange: (c) => changes.push(c), signal: stop.signal, watchTimeoutSeconds: 1 });
    await watch.start();
    try {
      // Changes spread over several server-ended watches.
      for (let i = 0; i < 6; i++) {
        await serverSideApply(client, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}`, namespace: NS, labels: { 'zerodrop.dev/check': 'watch' } }, data: { i: String(i) } });
        await sleep(600);
      }
      const deadline = Date.now() + 10_000;
      while (changes.length < 6 && Date.now() < deadline) await sleep(100);
      expect(changes.map((c) => `${c.type} ${c.object.metadata?.name}`)).toEqual([0, 1, 2, 3, 4, 5].map((i) => `ADDED cm-${i}`));
      expect(watch.stats.watches).toBeGreaterThan(1);
      expect(watch.stats.relists).toBe(0);
    } finally {
      stop.abort();
      await watch.stopped();
    }
  });

  it('an eviction its PodDisruptionBudget refuses is a 429 whose cause zerodrop reports in the API server\'s own words', async () => {
    const client = cluster.client();
    const labels = { 'zerodrop.dev/check': 'eviction' };
    await cluster.kubectl(['-n', NS, 'run', 'guarded', '--image=node:24-alpine', '--labels=zerodrop.dev/check=eviction', '--command', '--', 'node', '-e', 'setInterval(() => {}, 1000)']);
    await serverSideApply(client, { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'guard', namespace: NS }, spec: { minAvailable: 1, selector: { matchLabels: labels } } });
    // The budget counts a pod once it is Ready and the disruption controller has seen it.
    await cluster.kubectl(['-n', NS, 'wait', '--for=condition=Ready', 'pod/guarded', '--timeout=60s']);
    const deadline = Date.now() + 30_000;
    let observed = false;
    while (!observed && Date.now() < deadline) {
      const pdb = await client.request<{ status?: { observedGeneration?: number; currentHealthy?: number } }>('GET', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/guard`);
      observed = pdb.body.status?.currentHealthy === 1;
      if (!observed) await sleep(200);
    }
    expect(observed).toBe(true);
    expect(await evictPod(client, NS, 'guarded')).toBe('refused by its PodDisruptionBudget (429): The disruption budget guard needs 1 healthy pods and has 1 currently');
    // Without the budget the same eviction is accepted.
    await client.request('DELETE', `/apis/policy/v1/namespaces/${NS}/poddisruptionbudgets/guard`);
    expect(await evictPod(client, NS, 'guarded')).toBe(true);
  });
});
