// The kube observers against the local provider's read-only Kubernetes API (src/providers/local/
// api-server.ts): a second, independent server speaking list/watch, bookmarks and 410 Expired, fed
// by the local provider's EndpointSlice store. What the kube provider sees there must be what the
// local provider itself recorded.

import { afterEach, describe, expect, it } from 'vitest';
import { Recorder } from '../../observe/recorder.ts';
import { LocalApiServer, NAMESPACE } from '../local/api-server.ts';
import { EndpointStore, type EndpointSource } from '../local/endpoints.ts';
import { KubeClient } from './client.ts';
import { ListWatch } from './list-watch.ts';
import { EndpointObserver, type EndpointSliceObject } from './observers.ts';

const service = { name: 'backend', selector: 'backend', ports: [{ name: 'http', port: 8080, targetPort: 8080, protocol: 'TCP' as const }], programmingDelayMs: 0 };

function pod(name: string, overrides: Partial<EndpointSource> = {}): EndpointSource {
  return { name, workload: { name: 'backend' }, ip: `127.0.0.${name.slice(-1)}`, started: true, ready: true, terminating: false, forceDeleted: false, exited: false, removed: false, ...overrides };
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('kube observers against the local provider API', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  it('sees the same endpoint conditions the local provider recorded, across a dropped watch and a 410 relist', async () => {
    const local = new Recorder();
    const store = new EndpointStore(service, local);
    const server = new LocalApiServer({ host: '127.0.0.1', history: 2, bookmarkIntervalMs: 50 });
    const address = await server.listen();
    server.addService(store);
    cleanups.push(() => server.close());

    const seen = new Recorder();
    const observer = new EndpointObserver(seen, () => 'backend');
    const controller = new AbortController();
    const lw = new ListWatch<EndpointSliceObject>({
      client: KubeClient.forServer(`http://${address.host}:${address.port}`),
      path: `/apis/discovery.k8s.io/v1/namespaces/${NAMESPACE}/endpointslices`,
      onChange: (c) => observer.handleSlice(c),
      signal: controller.signal,
      retryDelayMs: 20,
    });
    cleanups.push(async () => {
      controller.abort();
      await lw.stopped();
    });
    await lw.start();

    store.sync(pod('backend-1'));
    store.sync(pod('backend-2'));
    await until(() => observer.readyPods('backend').length === 2, 'two ready endpoints');
    await until(() => lw.stats.bookmarks > 0, 'a bookmark');

    store.sync(pod('backend-1', { terminating: true }));
    // Cut the stream, then change more than the server's history holds: the resume must relist.
    server.closeWatches();
    store.sync(pod('backend-2', { terminating: true }));
    store.sync(pod('backend-1', { terminating: true, exited: true }));
    store.sync(pod('backend-1', { removed: true }));
    store.sync(pod('backend-3'));
    await until(() => observer.readyPods('backend').join() === 'backend-3', 'the state after the gap');

    const show = (r: Recorder) =>
      r.timeline.events
        .filter((e) => e.kind === 'endpoint-changed')
        .map((e) => `${e.pod} ${e.detail?.['removed'] ? 'removed' : (['ready', 'serving', 'terminating'] as const).filter((k) => e.detail?.[k]).join('+') || 'none'}`);
    // Every change the watch delivered is seen as it happened; changes inside the gap collapse to the
    // state the relist found (the last one per pod), never to a state that did not happen.
    const localChanges = show(local);
    const seenChanges = show(seen);
    expect(seenChanges.slice(0, 3)).toEqual(localChanges.slice(0, 3));
    for (const change of seenChanges) expect(localChanges).toContain(change);
    expect(seenChanges).toContain('backend-3 ready+serving');
    expect(seenChanges).toContain('backend-1 removed');
    expect(lw.stats.relists + lw.stats.reconnects).toBeGreaterThan(0);
  });
});
