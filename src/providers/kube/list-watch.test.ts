import { afterEach, describe, expect, it } from 'vitest';
import { KubeClient } from './client.ts';
import { FakeApiServer } from '../../../test-support/fake-api-server.ts';
import { CollectionMissing, ListWatch, type Change, type KubeObject } from './list-watch.ts';

const PODS = '/api/v1/namespaces/ns/pods';

function pod(name: string, phase = 'Running'): KubeObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, status: { phase } };
}

async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ListWatch against a list/watch API server', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  async function setup() {
    const fake = await new FakeApiServer().listen();
    const controller = new AbortController();
    const changes: Change<KubeObject>[] = [];
    const gaps: string[] = [];
    const lw = new ListWatch<KubeObject>({
      client: KubeClient.forServer(fake.url),
      path: PODS,
      onChange: (c) => changes.push(c),
      onGap: (g) => gaps.push(g),
      signal: controller.signal,
      retryDelayMs: 20,
    });
    cleanups.push(async () => {
      controller.abort();
      await lw.stopped();
      await fake.close();
    });
    return { fake, lw, changes, gaps, controller };
  }

  const summary = (changes: Change<KubeObject>[]) =>
    changes.map((c) => `${c.type} ${c.object.metadata.name}${c.relisted ? ' (relist)' : ''}`);

  it('lists, then watches from the list resourceVersion and follows ADDED/MODIFIED/DELETED', async () => {
    const { fake, lw, changes } = await setup();
    fake.put(PODS, pod('a'));
    const listedAt = fake.resourceVersion;
    await lw.start();
    expect(summary(changes)).toEqual(['ADDED a']);
    await until(() => fake.openWatches(PODS) === 1, 'the watch to open');
    expect(fake.watchRequests[0]?.resourceVersion).toBe(String(listedAt));

    fake.put(PODS, pod('b'));
    fake.put(PODS, pod('a', 'Succeeded'));
    fake.remove(PODS, 'b');
    await until(() => changes.length === 4, 'three watch events');
    expect(summary(changes)).toEqual(['ADDED a', 'ADDED b', 'MODIFIED a', 'DELETED b']);
    expect(lw.version).toBe(String(fake.resourceVersion));
    expect([...lw.cache.keys()]).toEqual(['a']);
  });

  it('moves its resourceVersion forward on BOOKMARK and reconnects from it after a dropped connection', async () => {
    const { fake, lw, changes, gaps } = await setup();
    fake.serve(PODS);
    await lw.start();
    await until(() => fake.openWatches(PODS) === 1, 'the watch to open');
    // Changes elsewhere in the server move the global version; a bookmark carries it to the client.
    fake.put('/api/v1/namespaces/other/pods', pod('elsewhere'));
    fake.bookmark(PODS);
    await until(() => lw.stats.bookmarks === 1, 'the bookmark');
    const bookmarked = String(fake.resourceVersion);
    expect(lw.version).toBe(bookmarked);

    fake.dropWatches();
    await until(() => fake.watchRequests.length >= 2 && fake.openWatches(PODS) === 1, 'the watch to reopen');
    expect(fake.watchRequests[1]?.resourceVersion).toBe(bookmarked);
    expect(gaps.some((g) => g.includes('dropped'))).toBe(true);

    // Nothing was lost across the reconnect, and nothing is replayed twice.
    fake.put(PODS, pod('c'));
    await until(() => changes.length === 1, 'the event after reconnect');
    expect(summary(changes)).toEqual(['ADDED c']);
  });

  it('replays events that happened while disconnected, from the last version seen', async () => {
    const { fake, lw, changes } = await setup();
    fake.put(PODS, pod('a'));
    await lw.start();
    await until(() => fake.openWatches(PODS) === 1, 'the watch to open');
    fake.dropWatches();
    fake.putQuietly(PODS, pod('a', 'Failed'));
    await until(() => changes.length === 2, 'the replayed change');
    expect(summary(changes)).toEqual(['ADDED a', 'MODIFIED a']);
    expect(lw.stats.relists).toBe(0);
  });

  it('relists on a 410 Gone ERROR event and reports deletions it missed', async () => {
    const { fake, lw, changes, gaps } = await setup();
    fake.put(PODS, pod('a'));
    fake.put(PODS, pod('b'));
    await lw.start();
    await until(() => fake.openWatches(PODS) === 1, 'the watch to open');
    fake.dropWatches();
    fake.removeQuietly(PODS, 'a');
    fake.putQuietly(PODS, pod('c'));
    fake.compact();
    await until(() => lw.stats.relists === 1 && changes.length === 4, 'the relist');
    expect(summary(changes)).toEqual(['ADDED a', 'ADDED b', 'ADDED c (relist)', 'DELETED a (relist)']);
    expect(gaps.some((g) => g.includes('410 Gone'))).toBe(true);
    // After the relist it watches from the new list's version.
    await until(() => fake.openWatches(PODS) === 1, 'the watch to reopen');
    expect(fake.watchRequests.at(-1)?.resourceVersion).toBe(String(fake.resourceVersion));
  });

  it('relists on an HTTP 410 answer too', async () => {
    const { fake, lw, changes } = await setup();
    fake.goneAsHttp = true;
    fake.put(PODS, pod('a'));
    await lw.start();
    await until(() => fake.openWatches(PODS) === 1, 'the watch to open');
    fake.dropWatches();
    fake.removeQuietly(PODS, 'a');
    fake.compact();
    await until(() => lw.stats.relists === 1 && changes.length === 2, 'the relist');
    expect(summary(changes)).toEqual(['ADDED a', 'DELETED a (relist)']);
  });

  it('says when the collection is not served (404)', async () => {
    const { fake, lw } = await setup();
    fake.missing(PODS);
    await expect(lw.start()).rejects.toBeInstanceOf(CollectionMissing);
  });
});
