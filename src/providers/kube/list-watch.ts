// List then watch, the way Kubernetes clients keep a cache
// (https://kubernetes.io/docs/reference/using-api/api-concepts/#efficient-detection-of-changes):
// list the collection, remember its resourceVersion, watch from there, and move the remembered
// version forward with every event and BOOKMARK. When the watch connection drops, watch again from
// the last version seen; when the server says that version is too old (410 Gone, as an HTTP status
// or as an ERROR event), list again and turn the difference into ADDED/MODIFIED/DELETED, so that
// the consumer never misses a deletion that happened while it was disconnected.
//
// Each reconnect and relist is reported (`onGap`) so that a run shows where observation had a hole;
// the time of a change is the time this process saw it, never a time the stream did not deliver.

import { statusOf, type KubeClient, type RawWatchEvent } from './client.ts';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; uid?: string; [k: string]: unknown };
  [k: string]: unknown;
}

export type Change<T> =
  | { type: 'ADDED'; object: T; relisted: boolean }
  | { type: 'MODIFIED'; object: T; previous: T; relisted: boolean }
  | { type: 'DELETED'; object: T; relisted: boolean };

export interface ListWatchOptions<T extends KubeObject> {
  client: KubeClient;
  /** Collection path, e.g. /api/v1/namespaces/ns/pods. */
  path: string;
  labelSelector?: string;
  onChange: (change: Change<T>) => void;
  /** A watch ended unexpectedly or had to relist: where observation had a gap. */
  onGap?: (what: string) => void;
  /** Called once after the first list, with the items it returned. */
  onSynced?: (items: T[]) => void;
  signal: AbortSignal;
  /** Delay before reconnecting after an error; doubles up to 8x. */
  retryDelayMs?: number;
  /** Server-side watch timeout: the server ends the watch cleanly and it is reopened. */
  watchTimeoutSeconds?: number;
}

/** Raised by `start` when the collection does not exist on this server (404): e.g. no EndpointSlice API. */
export class CollectionMissing extends Error {}

export class ListWatch<T extends KubeObject> {
  readonly cache = new Map<string, T>();
  private resourceVersion = '';
  private readonly opts: ListWatchOptions<T>;
  private current?: AbortController;
  private failures = 0;
  private loop?: Promise<void>;
  /** Counters for tests and reports: how often the stream had to be reopened or relisted. */
  readonly stats = { lists: 0, watches: 0, reconnects: 0, relists: 0, bookmarks: 0 };

  constructor(opts: ListWatchOptions<T>) {
    this.opts = opts;
    opts.signal.addEventListener('abort', () => this.current?.abort(), { once: true });
  }

  /** Lists once (throws CollectionMissing on 404), then keeps watching in the background until the signal aborts. */
  async start(): Promise<void> {
    await this.list(false);
    this.opts.onSynced?.([...this.cache.values()]);
    this.loop = this.run();
  }

  /** Resolves once the background loop has stopped (after the signal aborted). */
  async stopped(): Promise<void> {
    await this.loop;
  }

  get version(): string {
    return this.resourceVersion;
  }

  private async run(): Promise<void> {
    while (!this.opts.signal.aborted) {
      const outcome = await this.watchOnce();
      if (this.opts.signal.aborted) return;
      if (outcome === 'gone') {
        this.stats.relists++;
        this.opts.onGap?.(`watch ${this.opts.path}: resourceVersion ${this.resourceVersion} expired (410 Gone), relisting`);
        try {
          await this.list(true);
          this.failures = 0;
        } catch (err) {
          this.opts.onGap?.(`list ${this.opts.path} failed: ${(err as Error).message}`);
          await this.backoff();
        }
        continue;
      }
      if (outcome === 'closed') {
        // A clean end (server timeout) is routine: reopen at once from the last version.
        this.failures = 0;
        continue;
      }
      this.stats.reconnects++;
      this.opts.onGap?.(`watch ${this.opts.path} dropped (${outcome.error}); reconnecting from resourceVersion ${this.resourceVersion}`);
      await this.backoff();
    }
  }

  private async backoff(): Promise<void> {
    const base = this.opts.retryDelayMs ?? 250;
    const ms = base * 2 ** Math.min(this.failures++, 3);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.opts.signal.addEventListener('abort', () => {
        clearTimeout(timer);
        resolve();
      }, { once: true });
    });
  }

  private async list(relisted: boolean): Promise<void> {
    this.stats.lists++;
    let response;
    try {
      response = await this.opts.client.request<{ metadata?: { resourceVersion?: string }; items?: T[] }>('GET', this.opts.path, {
        query: { labelSelector: this.opts.labelSelector },
        signal: this.opts.signal,
      });
    } catch (err) {
      if (statusOf(err) === 404) throw new CollectionMissing(`${this.opts.path} is not served by this API server`);
      throw err;
    }
    const items = response.body.items ?? [];
    this.resourceVersion = response.body.metadata?.resourceVersion ?? '';
    const seen = new Set<string>();
    for (const item of items) {
      const key = item.metadata.name;
      seen.add(key);
      this.apply('upsert', item, relisted);
    }
    for (const [key, object] of [...this.cache]) {
      if (!seen.has(key)) {
        this.cache.delete(key);
        this.opts.onChange({ type: 'DELETED', object, relisted });
      }
    }
  }

  private apply(kind: 'upsert' | 'delete', object: T, relisted: boolean): void {
    const key = object.metadata.name;
    const previous = this.cache.get(key);
    if (kind === 'delete') {
      this.cache.delete(key);
      this.opts.onChange({ type: 'DELETED', object, relisted });
      return;
    }
    // A relist returns objects we already hold unchanged: no change to report.
    if (previous && previous.metadata.resourceVersion === object.metadata.resourceVersion && object.metadata.resourceVersion) return;
    this.cache.set(key, object);
    if (previous) this.opts.onChange({ type: 'MODIFIED', object, previous, relisted });
    else this.opts.onChange({ type: 'ADDED', object, relisted });
  }

  /** One watch request; resolves with how it ended. */
  private watchOnce(): Promise<'gone' | 'closed' | { error: string }> {
    this.stats.watches++;
    return new Promise((resolve) => {
      let gone = false;
      const onEvent = (e: RawWatchEvent) => {
        const object = e.object as unknown as T;
        const rv = (object?.metadata as { resourceVersion?: string } | undefined)?.resourceVersion;
        switch (e.type) {
          case 'BOOKMARK':
            this.stats.bookmarks++;
            if (rv) this.resourceVersion = rv;
            return;
          case 'ERROR': {
            // The server ends a watch whose version it no longer has with a Status event, code 410.
            const code = (e.object as { code?: number }).code;
            if (code === 410) gone = true;
            this.current?.abort();
            return;
          }
          case 'ADDED':
          case 'MODIFIED':
            if (rv) this.resourceVersion = rv;
            this.failures = 0;
            this.apply('upsert', object, false);
            return;
          case 'DELETED':
            if (rv) this.resourceVersion = rv;
            this.apply('delete', object, false);
            return;
        }
      };
      let finished = false;
      const done = (err: unknown) => {
        finished = true;
        this.current = undefined;
        if (gone || statusOf(err) === 410) resolve('gone');
        else if (err && !this.opts.signal.aborted) resolve({ error: err instanceof Error ? err.message : String(err) });
        else resolve('closed');
      };
      this.opts.client
        .watch(
          this.opts.path,
          {
            resourceVersion: this.resourceVersion || undefined,
            allowWatchBookmarks: true,
            labelSelector: this.opts.labelSelector,
            timeoutSeconds: this.opts.watchTimeoutSeconds ?? 25,
          },
          onEvent,
          done,
        )
        .then(
          (controller) => {
            // Watch hands its controller back only once the response headers arrived; by then the
            // stream may already have ended (its `done` ran first) or the run may be over.
            if (finished || this.opts.signal.aborted || gone) controller.abort();
            else this.current = controller;
          },
          (err: unknown) => done(err),
        );
    });
  }
}
