// A small API server for the kube provider's own tests: it speaks the list/watch protocol
// (https://kubernetes.io/docs/reference/using-api/api-concepts/) for any collection path, and
// records every other request (method, path, query, content type, body) so that chaos calls can be
// checked for exactly what they send. It listens on 127.0.0.1 only.
//
// What it models, because the watch code must handle it:
// - one resourceVersion counter for the whole server, as etcd's revision;
// - GET collection -> a List with metadata.resourceVersion;
// - GET collection?watch=true&resourceVersion=N -> a chunked stream of newline-delimited JSON
//   events after N, then live events; BOOKMARK events on request when allowWatchBookmarks=true;
// - a version older than the compacted history -> 200 and an ERROR event with a 410 Status (what
//   the real server does for an expired version), or HTTP 410 when `goneAsHttp` is set;
// - `dropWatches()` cuts every open watch connection (a load balancer or apiserver restart);
// - `missing(path)` makes a collection answer 404 (a server without the EndpointSlice API);
// - `labelSelector` (equality `k=v` and existence `k` terms) on lists and watches, and the
//   all-namespaces list (`/api/v1/pods`) as the union of the namespaced collections served.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  contentType: string | undefined;
  body: unknown;
}

type Obj = { metadata: { name: string; resourceVersion?: string; [k: string]: unknown }; [k: string]: unknown };

interface StoredEvent {
  rv: number;
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Obj;
}

interface Collection {
  objects: Map<string, Obj>;
  history: StoredEvent[];
  watchers: Set<{ res: ServerResponse; bookmarks: boolean; selector: string }>;
}

/** Whether an object's labels match an equality-based selector (`k=v`, `k==v`, `k!=v`, `k`). */
export function selects(selector: string | undefined, object: Obj): boolean {
  const labels = (object.metadata['labels'] ?? {}) as Record<string, string>;
  return (selector ?? '').split(',').map((t) => t.trim()).filter(Boolean).every((term) => {
    const m = /^([^!=]+)(!=|==|=)(.*)$/.exec(term);
    if (!m) return term in labels;
    const [, key = '', op, value] = m;
    return op === '!=' ? labels[key] !== value : labels[key] === value;
  });
}

export type Responder = (req: RecordedRequest) => { status: number; body?: unknown } | undefined;

export class FakeApiServer {
  readonly requests: RecordedRequest[] = [];
  private readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly collections = new Map<string, Collection>();
  private readonly missingPaths = new Set<string>();
  private revision = 100;
  /** History at or below this version is compacted away. */
  private compactedAt = 0;
  private responders: Responder[] = [];
  /** Answer an expired watch version with HTTP 410 instead of a 200 + ERROR event. */
  goneAsHttp = false;
  /** Count of watch requests, by collection path. */
  readonly watchRequests: { path: string; resourceVersion: string | undefined }[] = [];
  /** TCP connections clients opened to it. */
  connections = 0;
  url = '';

  constructor() {
    this.server = createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (socket) => {
      this.connections++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
  }

  async listen(): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
    return this;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  /** Answers requests that are not list/watch (first responder that returns something wins). */
  respond(responder: Responder, opts: { first?: boolean } = {}): void {
    if (opts.first) this.responders.unshift(responder);
    else this.responders.push(responder);
  }

  /** Serves an (empty) collection at `path`, so that it can be listed and watched before anything is put. */
  serve(path: string): void {
    this.collection(path);
  }

  missing(path: string): void {
    this.missingPaths.add(path);
  }

  get resourceVersion(): number {
    return this.revision;
  }

  /** Creates or replaces an object in a collection and notifies its watchers. */
  put(path: string, object: Obj): Obj {
    const collection = this.collection(path);
    const stored: Obj = structuredClone(object);
    stored.metadata.resourceVersion = String(++this.revision);
    const type = collection.objects.has(stored.metadata.name) ? 'MODIFIED' : 'ADDED';
    collection.objects.set(stored.metadata.name, stored);
    this.publish(collection, { rv: this.revision, type, object: stored });
    return stored;
  }

  remove(path: string, name: string): void {
    const collection = this.collection(path);
    const current = collection.objects.get(name);
    if (!current) return;
    collection.objects.delete(name);
    const stored: Obj = structuredClone(current);
    stored.metadata.resourceVersion = String(++this.revision);
    this.publish(collection, { rv: this.revision, type: 'DELETED', object: stored });
  }

  /** Forgets history up to now: a watch from an older version gets 410 Gone. */
  compact(): void {
    this.compactedAt = this.revision;
    for (const c of this.collections.values()) c.history = [];
  }

  /** Changes that happen while no one watches, and history compacted behind them. */
  putQuietly(path: string, object: Obj): void {
    const collection = this.collection(path);
    const stored: Obj = structuredClone(object);
    stored.metadata.resourceVersion = String(++this.revision);
    collection.objects.set(stored.metadata.name, stored);
    collection.history.push({ rv: this.revision, type: 'MODIFIED', object: stored });
  }

  removeQuietly(path: string, name: string): void {
    const collection = this.collection(path);
    const current = collection.objects.get(name);
    if (!current) return;
    collection.objects.delete(name);
    ++this.revision;
    collection.history.push({ rv: this.revision, type: 'DELETED', object: current });
  }

  /** Sends a BOOKMARK carrying the current version to every watcher that asked for bookmarks. */
  bookmark(path: string): void {
    const collection = this.collection(path);
    for (const w of collection.watchers) {
      if (w.bookmarks) w.res.write(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'Bookmark', metadata: { resourceVersion: String(this.revision) } } })}\n`);
    }
  }

  /** Cuts every open watch connection, as a dropped TCP connection would. */
  dropWatches(): void {
    for (const c of this.collections.values()) {
      for (const w of c.watchers) w.res.socket?.destroy();
      c.watchers.clear();
    }
  }

  openWatches(path: string): number {
    return this.collection(path).watchers.size;
  }

  private collection(path: string): Collection {
    let c = this.collections.get(path);
    if (!c) {
      c = { objects: new Map(), history: [], watchers: new Set() };
      this.collections.set(path, c);
    }
    return c;
  }

  private publish(collection: Collection, event: StoredEvent): void {
    collection.history.push(event);
    for (const w of collection.watchers) if (selects(w.selector, event.object)) w.res.write(`${JSON.stringify({ type: event.type, object: event.object })}\n`);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = undefined;
    if (raw) {
      try {
        body = JSON.parse(raw);
      } catch {
        body = raw;
      }
    }
    const query = Object.fromEntries(url.searchParams);
    const path = url.pathname;
    const json = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload));
    };

    if (req.method === 'GET' && this.missingPaths.has(path)) {
      return json(404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'the server could not find the requested resource' });
    }
    if (req.method === 'GET' && path.endsWith('/log')) return this.serveLog(path, query, res);
    if (req.method === 'GET' && this.collections.has(path) && query['watch'] === 'true') return this.serveWatch(path, query, res);
    if (req.method === 'GET' && this.collections.has(path)) {
      const collection = this.collection(path);
      return json(200, { kind: 'List', metadata: { resourceVersion: String(this.revision) }, items: [...collection.objects.values()].filter((o) => selects(query['labelSelector'], o)) });
    }
    const across = req.method === 'GET' && query['watch'] !== 'true' ? /^(\/api\/v1|\/apis\/[^/]+\/[^/]+)\/([a-z]+)$/.exec(path) : null;
    const namespaced = across ? [...this.collections.entries()].filter(([p]) => p.startsWith(`${across[1]}/namespaces/`) && p.endsWith(`/${across[2]}`) && p.split('/').length === across[1]!.split('/').length + 3) : [];
    if (namespaced.length > 0) {
      const items = namespaced.flatMap(([, c]) => [...c.objects.values()]).filter((o) => selects(query['labelSelector'], o));
      return json(200, { kind: 'List', metadata: { resourceVersion: String(this.revision) }, items });
    }

    const recorded: RecordedRequest = { method: req.method ?? 'GET', path, query, contentType: req.headers['content-type'], body };
    this.requests.push(recorded);
    for (const responder of this.responders) {
      const answer = responder(recorded);
      if (answer) return json(answer.status, answer.body ?? {});
    }
    json(req.method === 'POST' ? 201 : 200, { kind: 'Status', status: 'Success' });
  }

  /** Appends a line to a pod's log (path: /api/v1/namespaces/NS/pods/NAME/log) and sends it to its followers. */
  writeLog(path: string, line: string, timestamp = new Date().toISOString()): void {
    const log = this.log(path);
    const entry = `${timestamp} ${line}\n`;
    log.lines.push(entry);
    for (const res of log.followers) res.write(entry);
  }

  /** The log requests received, with their query (follow, timestamps, container). */
  readonly logRequests: { path: string; query: Record<string, string> }[] = [];
  private readonly logs = new Map<string, { lines: string[]; followers: Set<ServerResponse> }>();

  private log(path: string) {
    let log = this.logs.get(path);
    if (!log) {
      log = { lines: [], followers: new Set() };
      this.logs.set(path, log);
    }
    return log;
  }

  private serveLog(path: string, query: Record<string, string>, res: ServerResponse): void {
    this.logRequests.push({ path, query });
    const log = this.log(path);
    res.writeHead(200, { 'content-type': 'text/plain', 'transfer-encoding': 'chunked' });
    res.flushHeaders();
    for (const line of log.lines) res.write(line);
    if (query['follow'] !== 'true') {
      res.end();
      return;
    }
    log.followers.add(res);
    res.on('close', () => log.followers.delete(res));
  }

  private serveWatch(path: string, query: Record<string, string>, res: ServerResponse): void {
    const from = query['resourceVersion'];
    this.watchRequests.push({ path, resourceVersion: from });
    const collection = this.collection(path);
    const since = from === undefined || from === '' ? undefined : Number(from);
    if (since !== undefined && since < this.compactedAt) {
      const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'Expired', code: 410, message: `too old resource version: ${since} (${this.compactedAt})` };
      if (this.goneAsHttp) {
        res.writeHead(410, { 'content-type': 'application/json' });
        res.end(JSON.stringify(status));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
      res.write(`${JSON.stringify({ type: 'ERROR', object: status })}\n`);
      res.end();
      return;
    }
    res.writeHead(200, { 'content-type': 'application/json', 'transfer-encoding': 'chunked' });
    // The real server answers a watch with its headers at once, before any event.
    res.flushHeaders();
    // No version: the server starts with synthetic ADDED events for the current state.
    const selector = query['labelSelector'] ?? '';
    if (since === undefined) {
      for (const object of collection.objects.values()) if (selects(selector, object)) res.write(`${JSON.stringify({ type: 'ADDED', object })}\n`);
    } else {
      for (const e of collection.history) if (e.rv > since && selects(selector, e.object)) res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
    }
    const watcher = { res, bookmarks: query['allowWatchBookmarks'] === 'true', selector };
    collection.watchers.add(watcher);
    res.on('close', () => collection.watchers.delete(watcher));
  }
}
