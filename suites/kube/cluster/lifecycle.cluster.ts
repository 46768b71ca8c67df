// What the kube observers see on a real cluster when a pod is deleted and a node is drained: the
// EndpointSlice conditions of a terminating pod (ready:false, serving:true, terminating:true), the
// exit reported by the kubelet, and evictions that honour the PodDisruptionBudget.

import { describe, expect, inject, it } from 'vitest';
import { Recorder } from '../../../src/observe/recorder.ts';
import { referenceProfile } from '../../../src/profiles/reference.ts';
import { KubeProvider } from '../../../src/providers/kube/kube-provider.ts';
import { packageRoot } from '../../../src/paths.ts';
import { optionsFor } from '../../../src/runner/run-matrix.ts';
import { catalog } from '../../../src/scenarios/index.ts';
import { clusterClient, clusterSession, skipReason, title } from './context.ts';

function backendTopology(overrides: Record<string, number>) {
  const def = catalog.find((d) => d.id === 'backend-delete-http');
  if (!def) throw new Error('catalog changed');
  return def.build(referenceProfile, optionsFor(def, overrides, false)).topology;
}

describe.skipIf(skipReason !== '')(title('kube observers'), () => {
  it('sees a deleted pod go serving+terminating, announce SIGTERM after its preStop, exit 0, and leave the slice', async () => {
    const recorder = new Recorder();
    await using provider = clusterSession().create({ recorder, cwd: packageRoot });
    await provider.deploy(backendTopology({ preStopSeconds: 3, graceSeconds: 20 }), { timeoutMs: 300_000 });
    const [victim] = provider.pods('backend');
    if (!victim) throw new Error('no pod');
    await provider.deletePod(victim.name);
    await provider.waitForPodGone(victim.name, { timeoutMs: 60_000 });
    const events = recorder.timeline.events.filter((e) => e.pod === victim.name);
    const changes = events.filter((e) => e.kind === 'endpoint-changed').map((e) => e.detail);
    expect(changes).toContainEqual(expect.objectContaining({ ready: false, serving: true, terminating: true }));
    expect(changes.at(-1)).toMatchObject({ removed: true });
    expect(events.find((e) => e.kind === 'exit')?.detail).toMatchObject({ code: 0 });
    // The reference backend announces SIGTERM in its log; it comes after the 3 s preStop sleep.
    const sigterm = events.find((e) => e.kind === 'sigterm');
    const deleted = events.find((e) => e.kind === 'delete-issued');
    expect(sigterm?.detail).toMatchObject({ observed: 'pod-log' });
    expect((sigterm?.t ?? 0) - (deleted?.t ?? 0)).toBeGreaterThanOrEqual(2500);
    expect(events.filter((e) => e.kind === 'delete-issued')).toHaveLength(1);
  });

  // Cordoning a node of a cluster someone else owns is out of bounds: only on a cluster this run created.
  it.skipIf(!inject('clusterCreated'))('drains a worker through the Eviction API, one pod at a time as the PodDisruptionBudget allows', async () => {
    const recorder = new Recorder();
    await using provider = clusterSession().create({ recorder, cwd: packageRoot }) as KubeProvider;
    await provider.deploy(backendTopology({ replicas: 4, preStopSeconds: 1, graceSeconds: 10 }), { timeoutMs: 300_000 });
    const { body } = await clusterClient().request<{ items: { spec?: { nodeName?: string } }[] }>('GET', `/api/v1/namespaces/${provider.namespace}/pods`);
    const node = body.items.map((p) => p.spec?.nodeName).find((n) => n && !n.endsWith('control-plane'));
    if (!node) throw new Error('no worker runs a backend pod');
    try {
      const evicted = await provider.drainNode(node, { retryMs: 5000, timeoutMs: 180_000 });
      expect(evicted.length).toBeGreaterThan(0);
    } finally {
      // Uncordon: the shared cluster must stay schedulable for the next file.
      await clusterClient().request('PATCH', `/api/v1/nodes/${node}`, { contentType: 'application/strategic-merge-patch+json', body: { spec: { unschedulable: false } } });
    }
  });
});
