// A read-only slice of the Kubernetes API for the pods the local provider runs, so that a gateway
// that discovers its backends (STUNner's operator, the reference UDP relay) runs unchanged locally
// and in a cluster. It serves, from the EndpointStores, in the API's own JSON shapes:
//
//   GET /apis/discovery.k8s.io/v1/namespaces/{ns}/endpointslices[/{name}]   (and cluster-wide)
//   GET /api/v1/namespaces/{ns}/endpoints[/{name}]                            (and cluster-wide)
//   GET /version
//
// Lists take labelSelector (`k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-joined) and fieldSelector
// (`metadata.name=`, `metadata.namespace=`); `?watch=1` streams newline-delimited watch events
// (`{"type":"ADDED|MODIFIED|DELETED|BOOKMARK|ERROR","object":{...}}`) from `resourceVersion`, with
// `timeoutSeconds` and `allowWatchBookmarks` (https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes).
// A watch from a resourceVersion older than the retained history gets what the real apiserver sends
// for it: HTTP 200 and one ERROR event whose object is a Status with code 410 and reason Expired
// ("too old resource version: N (M)"); the client re-lists. Every write is refused with 405.
//
// Semantics of the two APIs (the point of https://github.com/l7mp/stunner/issues/138, seed 000):
// - EndpointSlice (discovery.k8s.io/v1) lists every endpoint of the Service with its conditions;
//   a terminating pod stays listed as `ready:false, serving:<readiness>, terminating:true` until it
//   is removed (https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#conditions).
// - Endpoints (v1, legacy) lists ready pods in `addresses` and not-ready ones in
//   `notReadyAddresses`, and drops a terminating pod at once; with no address left the object has
//   no `subsets` at all, as in the seed's empty `media-plane` Endpoints.
//
// Local deviations, documented: plain HTTP without a token (pods get KUBERNETES_SERVICE_HOST,
// KUBERNETES_SERVICE_PORT and, zerodrop's own, KUBERNETES_SERVICE_SCHEME=http; in a cluster the
// same client uses https with the service account token), one namespace (`zerodrop`, other
// namespaces are empty), one EndpointSlice per Service, and one resourceVersion counter for all objects.

import { createHash, randomBytes, randomUUID } from 'node:crypto';
import http from 'node:http';

import type { ServiceAddress } from '../provider.ts';
import type { Endpoint, EndpointStore } from './endpoints.ts';

export const NAMESPACE = 'zerodrop';
const NODE_NAME = 'zerodrop-local';
/** Watch events kept for resuming watches; older resourceVersions get 410 Expired. */
const DEFAULT_HISTORY = 1_000;
const BOOKMARK_INTERVAL_MS = 1_000;

type Resource = 'endpointslices' | 'endpoints';
type Json = Record<string, unknown>;

interface StoredObject {
  resource: Resource;
  name: string;
  service: string;
  labels: Record<string, string>;
  /** The object as the API returns it, without kind and apiVersion (lists omit them). */
  body: Json;
  deleted: boolean;
}

interface HistoryEntry {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: StoredObject;
  body: Json;
}

interface Watcher {
  resource: Resource;
  namespace: string | undefined;
  match: (o: StoredObject) => boolean;
  res: http.ServerResponse;
}

const KINDS: Record<Resource, { kind: string; apiVersion: string }> = {
  endpointslices: { kind: 'EndpointSlice', apiVersion: 'discovery.k8s.io/v1' },
  endpoints: { kind: 'Endpoints', apiVersion: 'v1' },
};

/** A stable UUID-shaped uid for a pod name (the local provider's pods have none of their own). */
function podUid(runSalt: string, pod: string): string {
  const h = createHash('sha256').update(`${runSalt}/${pod}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

function timestamp(): string {
  return new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function status(code: number, reason: string, message: string, details?: Json): Json {
  return { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason, ...(details ? { details } : {}), code };
}

/** Parses a label selector of equality and existence requirements; throws on what it does not support. */
export function parseLabelSelector(selector: string): (labels: Record<string, string>) => boolean {
  const tests: ((labels: Record<string, string>) => boolean)[] = [];
  for (const raw of selector.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    let m: RegExpMatchArray | null;
    if ((m = /^([^!=\s]+)\s*!=\s*(\S*)$/.exec(part))) {
      const [, key = '', value = ''] = m;
      tests.push((l) => l[key] !== value);
    } else if ((m = /^([^!=\s]+)\s*==?\s*(\S*)$/.exec(part))) {
      const [, key = '', value = ''] = m;
      tests.push((l) => l[key] === value);
    } else if ((m = /^!\s*(\S+)$/.exec(part))) {
      const [, key = ''] = m;
      tests.push((l) => !(key in l));
    } else if (/^[^\s!=()]+$/.test(part)) {
      tests.push((l) => part in l);
    } else {
      throw new Error(`unsupported label selector requirement ${JSON.stringify(part)}`);
    }
  }
  return (labels) => tests.every((t) => t(labels));
}

function parseFieldSelector(selector: string): (o: StoredObject) => boolean {
  const tests: ((o: StoredObject) => boolean)[] = [];
  for (const raw of selector.split(',')) {
    const part = raw.trim();
    if (part === '') continue;
    const m = /^(metadata\.name|metadata\.namespace)\s*(==?|!=)\s*(\S*)$/.exec(part);
    if (!m) throw new Error(`unsupported field selector ${JSON.stringify(part)}`);
    const [, field, op, value] = m;
    const get = (o: StoredObject) => (field === 'metadata.name' ? o.name : NAMESPACE);
    tests.push(op === '!=' ? (o) => get(o) !== value : (o) => get(o) === value);
  }
  return (o) => tests.every((t) => t(o));
}

export interface ApiServerOptions {
  host: string;
  /** Watch events retained for resuming; older resourceVersions get 410 Expired. */
  history?: number;
  /** Bookmark period for watches that ask for them. */
  bookmarkIntervalMs?: number;
}

export class LocalApiServer {
  private readonly host: string;
  private readonly historySize: number;
  private readonly bookmarkIntervalMs: number;
  private readonly salt = randomBytes(8).toString('hex');
  private readonly server: http.Server;
  private readonly objects = new Map<string, StoredObject>();
  private readonly history: HistoryEntry[] = [];
  private readonly watchers = new Set<Watcher>();
  private readonly unwatch: (() => void)[] = [];
  private rv = 0;
  /** Highest resourceVersion no longer in `history`. */
  private compacted = 0;
  private port = 0;
  private closed = false;

  constructor(opts: ApiServerOptions) {
    this.host = opts.host;
    this.historySize = opts.history ?? DEFAULT_HISTORY;
    this.bookmarkIntervalMs = opts.bookmarkIntervalMs ?? BOOKMARK_INTERVAL_MS;
    this.server = http.createServer((req, res) => this.handle(req, res));
    this.server.on('error', () => undefined);
  }

  get resourceVersion(): number {
    return this.rv;
  }

  listen(): Promise<ServiceAddress> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen({ host: this.host, port: 0, exclusive: true }, () => {
        this.server.off('error', reject);
        const address = this.server.address();
        this.port = typeof address === 'object' && address ? address.port : 0;
        resolve({ host: this.host, port: this.port });
      });
    });
  }

  /** What the kubelet tells every container about the API server (plus the scheme, zerodrop's own). */
  env(): Record<string, string> {
    return {
      KUBERNETES_SERVICE_HOST: this.host,
      KUBERNETES_SERVICE_PORT: String(this.port),
      KUBERNETES_SERVICE_SCHEME: 'http',
    };
  }

  /** Serves the Service's EndpointSlice and Endpoints from now on, following the store. */
  addService(store: EndpointStore): void {
    const service = store.service.name;
    const labels = { 'kubernetes.io/service-name': service, 'endpointslice.kubernetes.io/managed-by': 'endpointslice-controller.k8s.io' };
    const created = timestamp();
    const sliceName = `${service}-${randomBytes(3).toString('hex').slice(0, 5)}`;
    const slice: StoredObject = {
      resource: 'endpointslices',
      name: sliceName,
      service,
      labels,
      body: {},
      deleted: false,
    };
    const legacy: StoredObject = { resource: 'endpoints', name: service, service, labels: {}, body: {}, deleted: false };
    const meta = (o: StoredObject, uid: string, extra: Json = {}) => ({
      name: o.name,
      namespace: NAMESPACE,
      uid,
      creationTimestamp: created,
      ...(Object.keys(o.labels).length > 0 ? { labels: o.labels } : {}),
      ...extra,
    });
    const sliceUid = randomUUID();
    const legacyUid = randomUUID();
    const ports = store.service.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: p.targetPort }));
    const ref = (e: Endpoint) => ({ kind: 'Pod', namespace: NAMESPACE, name: e.pod, uid: podUid(this.salt, e.pod) });
    const render = (endpoints: Endpoint[]) => {
      slice.body = {
        metadata: meta(slice, sliceUid, {
          generateName: `${service}-`,
          ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name: service, uid: podUid(this.salt, `service/${service}`), controller: true, blockOwnerDeletion: true }],
        }),
        addressType: 'IPv4',
        endpoints: endpoints.map((e) => ({
          addresses: [e.ip],
          conditions: { ...e.conditions },
          targetRef: ref(e),
          nodeName: NODE_NAME,
        })),
        ports,
      };
      // Legacy Endpoints: terminating pods are left out at once; not-ready ones are notReadyAddresses.
      const address = (e: Endpoint) => ({ ip: e.ip, nodeName: NODE_NAME, targetRef: ref(e) });
      const ready = endpoints.filter((e) => e.conditions.ready).map(address);
      const notReady = endpoints.filter((e) => !e.conditions.ready && !e.conditions.terminating).map(address);
      const subset: Json = { ...(ready.length > 0 ? { addresses: ready } : {}), ...(notReady.length > 0 ? { notReadyAddresses: notReady } : {}) };
      const before = JSON.stringify(legacy.body['subsets'] ?? null);
      legacy.body = {
        metadata: meta(legacy, legacyUid),
        ...(ready.length + notReady.length > 0 ? { subsets: [{ ...subset, ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol })) }] } : {}),
      };
      return before !== JSON.stringify(legacy.body['subsets'] ?? null);
    };
    render(store.list());
    this.commit('ADDED', slice);
    this.commit('ADDED', legacy);
    this.unwatch.push(
      store.watch(() => {
        const legacyChanged = render(store.list());
        this.commit('MODIFIED', slice);
        if (legacyChanged) this.commit('MODIFIED', legacy);
      }),
    );
  }

  /** Ends every open watch, as an apiserver restart or a load balancer timeout would; clients must resume. */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
  }

  /** Ends every watch and stops listening. Synchronous. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const stop of this.unwatch) stop();
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    this.server.close();
    this.server.closeAllConnections();
  }

  private commit(type: HistoryEntry['type'], object: StoredObject): void {
    this.rv++;
    const metadata = { ...(object.body['metadata'] as Json), resourceVersion: String(this.rv) };
    object.body = { ...object.body, metadata };
    this.objects.set(`${object.resource}/${object.name}`, object);
    const entry: HistoryEntry = { rv: this.rv, type, object, body: object.body };
    this.history.push(entry);
    while (this.history.length > this.historySize) {
      const dropped = this.history.shift();
      if (dropped) this.compacted = dropped.rv;
    }
    for (const w of this.watchers) if (this.matches(w, object)) this.send(w.res, type, object.resource, entry.body);
  }

  private matches(w: Watcher, o: StoredObject): boolean {
    return o.resource === w.resource && (w.namespace === undefined || w.namespace === NAMESPACE) && w.match(o);
  }

  private send(res: http.ServerResponse, type: string, resource: Resource, body: Json): void {
    res.write(`${JSON.stringify({ type, object: { ...KINDS[resource], ...body } })}\n`);
  }

  private reply(res: http.ServerResponse, code: number, body: Json): void {
    const text = JSON.stringify(body);
    res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse): void {
    const url = new URL(req.url ?? '/', 'http://api');
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      this.reply(res, 405, status(405, 'MethodNotAllowed', `the local zerodrop API is read-only: ${req.method ?? ''} is not allowed`));
      return;
    }
    if (url.pathname === '/version') {
      this.reply(res, 200, { major: '1', minor: '33', gitVersion: 'v1.33.0-zerodrop-local', platform: `${process.platform}/${process.arch}` });
      return;
    }
    const m =
      /^\/apis\/discovery\.k8s\.io\/v1\/(?:namespaces\/([^/]+)\/)?(endpointslices)(?:\/([^/]+))?\/?$/.exec(url.pathname) ??
      /^\/api\/v1\/(?:namespaces\/([^/]+)\/)?(endpoints)(?:\/([^/]+))?\/?$/.exec(url.pathname);
    if (!m) {
      this.reply(res, 404, status(404, 'NotFound', 'the server could not find the requested resource'));
      return;
    }
    const [, namespace, resourceName, name] = m;
    const resource = resourceName as Resource;
    let match: (o: StoredObject) => boolean;
    try {
      const labels = parseLabelSelector(url.searchParams.get('labelSelector') ?? '');
      const fields = parseFieldSelector(url.searchParams.get('fieldSelector') ?? '');
      match = (o) => !o.deleted && labels(o.labels) && fields(o) && (name === undefined || o.name === name);
    } catch (err) {
      this.reply(res, 400, status(400, 'BadRequest', err instanceof Error ? err.message : String(err)));
      return;
    }
    const watch = ['1', 'true'].includes(url.searchParams.get('watch') ?? '');
    if (watch) {
      this.watch(res, resource, namespace, match, url.searchParams);
      return;
    }
    const inNamespace = namespace === undefined || namespace === NAMESPACE;
    const items = inNamespace ? [...this.objects.values()].filter((o) => o.resource === resource && match(o)) : [];
    if (name !== undefined) {
      const item = items[0];
      if (!item) {
        this.reply(res, 404, status(404, 'NotFound', `${resource} "${name}" not found`, { name, kind: resource === 'endpoints' ? 'endpoints' : 'endpointslices' }));
        return;
      }
      this.reply(res, 200, { ...KINDS[resource], ...item.body });
      return;
    }
    this.reply(res, 200, {
      kind: `${KINDS[resource].kind}List`,
      apiVersion: KINDS[resource].apiVersion,
      metadata: { resourceVersion: String(this.rv) },
      items: items.map((o) => o.body),
    });
  }

  private watch(
    res: http.ServerResponse,
    resource: Resource,
    namespace: string | undefined,
    match: (o: StoredObject) => boolean,
    params: URLSearchParams,
  ): void {
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
    res.flushHeaders();
    const raw = params.get('resourceVersion') ?? '';
    const from = raw === '' || raw === '0' ? undefined : Number(raw);
    if (from !== undefined && (!Number.isInteger(from) || from < this.compacted)) {
      res.write(
        `${JSON.stringify({ type: 'ERROR', object: status(410, 'Expired', `too old resource version: ${raw} (${this.rv})`) })}\n`,
      );
      res.end();
      return;
    }
    const watcher: Watcher = { resource, namespace, match, res };
    if (from === undefined) {
      // "Get State and Start at Most Recent": synthetic ADDED for everything that exists now.
      if (namespace === undefined || namespace === NAMESPACE) {
        for (const o of this.objects.values()) if (this.matches(watcher, o)) this.send(res, 'ADDED', resource, o.body);
      }
    } else {
      for (const e of this.history) if (e.rv > from && this.matches(watcher, e.object)) this.send(res, e.type, resource, e.body);
    }
    this.watchers.add(watcher);
    const timers: NodeJS.Timeout[] = [];
    const timeoutSeconds = Number(params.get('timeoutSeconds') ?? '');
    if (Number.isFinite(timeoutSeconds) && timeoutSeconds > 0) timers.push(setTimeout(() => res.end(), timeoutSeconds * 1000));
    if (params.get('allowWatchBookmarks') === 'true') {
      timers.push(
        setInterval(() => {
          res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { ...KINDS[resource], metadata: { resourceVersion: String(this.rv) } } })}\n`);
        }, this.bookmarkIntervalMs),
      );
    }
    const done = () => {
      this.watchers.delete(watcher);
      for (const t of timers) clearTimeout(t);
    };
    res.once('close', done);
    res.once('finish', done);
  }
}
