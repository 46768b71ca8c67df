// The read-only Kubernetes API over the EndpointStores: list and watch of EndpointSlices and legacy
// Endpoints in the API's JSON shapes, resume and 410 Expired, and refused writes. No processes.

/* eslint-disable @typescript-eslint/no-explicit-any -- API JSON is checked field by field against the Kubernetes shapes */
import http from 'node:http';

import * as k8s from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';

import { Recorder } from '../../observe/recorder.ts';
import { LocalApiServer, parseLabelSelector } from './api-server.ts';
import { EndpointStore, type EndpointSource } from './endpoints.ts';
import { endpointSource } from '../../../test-support/local-provider.ts';

const service = {
  name: 'media-plane',
  selector: 'media-plane',
  ports: [{ name: 'udp', port: 9001, targetPort: 9001, protocol: 'UDP' as const }],
  programmingDelayMs: 0,
};

function pod(name: string, ip: string, overrides: Partial<EndpointSource> = {}): EndpointSource {
  return endpointSource(name, 'media-plane', ip, overrides);
}

let server: LocalApiServer | undefined;
afterEach(() => {
  server?.close();
  server = undefined;
});

async function setup(history?: number) {
  const store = new EndpointStore(service, new Recorder());
  server = new LocalApiServer({ host: '127.0.0.1', ...(history !== undefined ? { history } : {}), bookmarkIntervalMs: 50 });
  const address = await server.listen();
  server.addService(store);
  const base = `http://${address.host}:${address.port}`;
  return { store, base, server };
}

async function get(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  return { status: res.status, body: await res.json() };
}

/** Opens a watch and collects its events until `until` holds or the stream ends. */
function watch(url: string, until: (events: any[]) => boolean): Promise<{ status: number; events: any[] }> {
  return new Promise((resolve, reject) => {
    const events: any[] = [];
    const req = http.get(url, (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      const done = () => {
        req.destroy();
        resolve({ status: res.statusCode ?? 0, events });
      };
      res.on('data', (chunk: string) => {
        buffer += chunk;
        let i;
        while ((i = buffer.indexOf('\n')) >= 0) {
          events.push(JSON.parse(buffer.slice(0, i)));
          buffer = buffer.slice(i + 1);
        }
        if (until(events)) done();
      });
      res.on('end', done);
    });
    req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
  });
}

const slices = (base: string, query = '') =>
  `${base}/apis/discovery.k8s.io/v1/namespaces/zerodrop/endpointslices?labelSelector=${encodeURIComponent('kubernetes.io/service-name=media-plane')}${query}`;

describe('local read-only Kubernetes API', () => {
  it('lists EndpointSlices by service name, in the discovery.k8s.io/v1 shape', async () => {
    const { store, base } = await setup();
    store.sync(pod('media-plane-1', '127.0.0.10'));
    const { status, body } = await get(slices(base));
    expect(status).toBe(200);
    expect(body.kind).toBe('EndpointSliceList');
    expect(body.apiVersion).toBe('discovery.k8s.io/v1');
    expect(typeof body.metadata.resourceVersion).toBe('string');
    expect(body.items).toHaveLength(1);
    const slice = body.items[0];
    expect(slice.metadata.name).toMatch(/^media-plane-/);
    expect(slice.metadata.namespace).toBe('zerodrop');
    expect(slice.metadata.labels['kubernetes.io/service-name']).toBe('media-plane');
    expect(slice.addressType).toBe('IPv4');
    expect(slice.ports).toEqual([{ name: 'udp', protocol: 'UDP', port: 9001 }]);
    expect(slice.endpoints).toEqual([
      {
        addresses: ['127.0.0.10'],
        conditions: { ready: true, serving: true, terminating: false },
        targetRef: { kind: 'Pod', namespace: 'zerodrop', name: 'media-plane-1', uid: expect.stringMatching(/^[0-9a-f-]{36}$/) },
        nodeName: 'zerodrop-local',
      },
    ]);
    // Another service's selector, or another namespace, lists nothing.
    const other = await get(`${base}/apis/discovery.k8s.io/v1/namespaces/zerodrop/endpointslices?labelSelector=kubernetes.io%2Fservice-name%3Dother`);
    expect(other.body.items).toEqual([]);
    const elsewhere = await get(`${base}/apis/discovery.k8s.io/v1/namespaces/default/endpointslices`);
    expect(elsewhere.body.items).toEqual([]);
  });

  it('keeps a terminating pod in the EndpointSlice but drops it from the legacy Endpoints at once', async () => {
    const { store, base } = await setup();
    store.sync(pod('media-plane-1', '127.0.0.10'));
    store.sync(pod('media-plane-2', '127.0.0.11', { ready: false }));
    store.sync(pod('media-plane-3', '127.0.0.12', { terminating: true }));

    const slice = (await get(slices(base))).body.items[0];
    expect(slice.endpoints.map((e: any) => [e.addresses[0], e.conditions])).toEqual([
      ['127.0.0.10', { ready: true, serving: true, terminating: false }],
      ['127.0.0.11', { ready: false, serving: false, terminating: false }],
      ['127.0.0.12', { ready: false, serving: true, terminating: true }],
    ]);

    const endpoints = await get(`${base}/api/v1/namespaces/zerodrop/endpoints/media-plane`);
    expect(endpoints.status).toBe(200);
    expect(endpoints.body.kind).toBe('Endpoints');
    expect(endpoints.body.apiVersion).toBe('v1');
    expect(endpoints.body.subsets).toHaveLength(1);
    const [subset] = endpoints.body.subsets;
    expect(subset.addresses.map((a: any) => a.ip)).toEqual(['127.0.0.10']);
    expect(subset.notReadyAddresses.map((a: any) => a.ip)).toEqual(['127.0.0.11']);
    expect(subset.ports).toEqual([{ name: 'udp', port: 9001, protocol: 'UDP' }]);

    // With only the terminating pod left the Endpoints have no subsets at all (seed 000).
    store.sync(pod('media-plane-1', '127.0.0.10', { removed: true }));
    store.sync(pod('media-plane-2', '127.0.0.11', { removed: true }));
    const empty = await get(`${base}/api/v1/namespaces/zerodrop/endpoints?fieldSelector=metadata.name%3Dmedia-plane`);
    expect(empty.body.kind).toBe('EndpointsList');
    expect(empty.body.items).toHaveLength(1);
    expect(empty.body.items[0].subsets).toBeUndefined();
    expect((await get(slices(base))).body.items[0].endpoints).toHaveLength(1);

    const missing = await get(`${base}/api/v1/namespaces/zerodrop/endpoints/nope`);
    expect(missing.status).toBe(404);
    expect(missing.body).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'NotFound', code: 404 });
  });

  it('watches from a list resourceVersion: newline-delimited ADDED/MODIFIED events with full objects', async () => {
    const { store, base } = await setup();
    store.sync(pod('media-plane-1', '127.0.0.10'));
    const list = await get(slices(base));
    const rv = list.body.metadata.resourceVersion;
    const events = watch(slices(base, `&watch=1&resourceVersion=${rv}`), (ev) => ev.length >= 2);
    await new Promise((r) => setTimeout(r, 50));
    store.sync(pod('media-plane-1', '127.0.0.10', { terminating: true }));
    store.sync(pod('media-plane-1', '127.0.0.10', { removed: true }));
    const { status, events: got } = await events;
    expect(status).toBe(200);
    expect(got.map((e) => e.type)).toEqual(['MODIFIED', 'MODIFIED']);
    expect(got[0].object.kind).toBe('EndpointSlice');
    expect(got[0].object.apiVersion).toBe('discovery.k8s.io/v1');
    expect(got[0].object.endpoints[0].conditions).toEqual({ ready: false, serving: true, terminating: true });
    expect(got[1].object.endpoints).toEqual([]);
    expect(Number(got[1].object.metadata.resourceVersion)).toBeGreaterThan(Number(got[0].object.metadata.resourceVersion));

    // Without a resourceVersion, a watch starts with the current state as ADDED.
    const fresh = await watch(slices(base, '&watch=true'), (ev) => ev.length >= 1);
    expect(fresh.events[0].type).toBe('ADDED');

    // Bookmarks when asked for, with the current resourceVersion.
    const bookmarks = await watch(slices(base, `&watch=1&allowWatchBookmarks=true&resourceVersion=${server!.resourceVersion}`), (ev) => ev.length >= 1);
    expect(bookmarks.events[0]).toEqual({
      type: 'BOOKMARK',
      object: { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1', metadata: { resourceVersion: String(server!.resourceVersion) } },
    });
  });

  it('streams legacy Endpoints changes only when the legacy view changes', async () => {
    const { store, base } = await setup();
    store.sync(pod('media-plane-1', '127.0.0.10'));
    const rv = (await get(`${base}/api/v1/namespaces/zerodrop/endpoints`)).body.metadata.resourceVersion;
    const url = `${base}/api/v1/namespaces/zerodrop/endpoints?watch=1&fieldSelector=metadata.name%3Dmedia-plane&resourceVersion=${rv}`;
    const events = watch(url, (ev) => ev.length >= 1);
    await new Promise((r) => setTimeout(r, 50));
    store.sync(pod('media-plane-1', '127.0.0.10', { terminating: true }));
    const { events: got } = await events;
    expect(got[0].type).toBe('MODIFIED');
    expect(got[0].object.kind).toBe('Endpoints');
    expect(got[0].object.subsets).toBeUndefined();
  });

  it('answers a watch from a compacted resourceVersion with an ERROR event carrying 410 Expired', async () => {
    const { store, base } = await setup(3);
    for (let i = 0; i < 5; i++) store.sync(pod('media-plane-1', '127.0.0.10', { ready: i % 2 === 0 }));
    const { status, events } = await watch(slices(base, '&watch=1&resourceVersion=1'), () => false);
    expect(status).toBe(200);
    expect(events).toHaveLength(1);
    expect(events[0].type).toBe('ERROR');
    expect(events[0].object).toMatchObject({ kind: 'Status', status: 'Failure', reason: 'Expired', code: 410 });
    expect(events[0].object.message).toMatch(/^too old resource version: 1 \(\d+\)$/);
  });

  it('refuses writes with 405 and unknown paths with 404', async () => {
    const { base } = await setup();
    const post = await get(`${base}/apis/discovery.k8s.io/v1/namespaces/zerodrop/endpointslices`, { method: 'POST', body: '{}' });
    expect(post.status).toBe(405);
    expect(post.body).toMatchObject({ kind: 'Status', reason: 'MethodNotAllowed', code: 405 });
    const del = await get(`${base}/api/v1/namespaces/zerodrop/endpoints/media-plane`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    expect((await get(`${base}/api/v1/namespaces/zerodrop/pods`)).status).toBe(404);
  });

  it('serves the official JavaScript client: typed list and read, and an informer that sees the pod terminate', async () => {
    const { store, base } = await setup();
    store.sync(pod('media-plane-1', '127.0.0.10'));
    const kc = new k8s.KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'local', server: base, skipTLSVerify: true }],
      users: [{ name: 'none' }],
      contexts: [{ name: 'local', cluster: 'local', user: 'none', namespace: 'zerodrop' }],
      currentContext: 'local',
    });
    const discovery = kc.makeApiClient(k8s.DiscoveryV1Api);
    const list = await discovery.listNamespacedEndpointSlice({ namespace: 'zerodrop', labelSelector: 'kubernetes.io/service-name=media-plane' });
    expect(list.items[0]?.endpoints?.[0]?.conditions).toEqual({ ready: true, serving: true, terminating: false });
    const legacy = await kc.makeApiClient(k8s.CoreV1Api).readNamespacedEndpoints({ name: 'media-plane', namespace: 'zerodrop' });
    expect(legacy.subsets?.[0]?.addresses?.[0]?.ip).toBe('127.0.0.10');

    const informer = k8s.makeInformer(
      kc,
      '/apis/discovery.k8s.io/v1/namespaces/zerodrop/endpointslices',
      () => discovery.listNamespacedEndpointSlice({ namespace: 'zerodrop', labelSelector: 'kubernetes.io/service-name=media-plane' }),
      'kubernetes.io/service-name=media-plane',
    );
    const updated = new Promise<k8s.V1EndpointSlice>((resolve) => informer.on('update', resolve));
    await informer.start();
    await new Promise((r) => setTimeout(r, 100));
    store.sync(pod('media-plane-1', '127.0.0.10', { terminating: true }));
    const slice = await updated;
    await informer.stop();
    expect(slice.endpoints?.[0]?.conditions).toEqual({ ready: false, serving: true, terminating: true });
  });

  it('parses equality and existence label selectors', () => {
    const labels = { 'kubernetes.io/service-name': 'a', app: 'x' };
    expect(parseLabelSelector('kubernetes.io/service-name=a')(labels)).toBe(true);
    expect(parseLabelSelector('kubernetes.io/service-name==a,app')(labels)).toBe(true);
    expect(parseLabelSelector('app!=x')(labels)).toBe(false);
    expect(parseLabelSelector('!app')(labels)).toBe(false);
    expect(parseLabelSelector('')(labels)).toBe(true);
    expect(() => parseLabelSelector('app in (x)')).toThrow(/unsupported/);
  });
});
