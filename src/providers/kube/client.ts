// The one door to a Kubernetes API server. Configuration and authentication come from
// @kubernetes/client-node (KubeConfig: certificates, tokens, exec plugins; Watch: the newline-
// delimited JSON watch stream). Requests are written out by path, method and content type so that
// every call the harness makes is visible in one place and testable against a fake API server:
// a chaos step is a specific PATCH with a specific patch type, not whatever a generated client does.

import type { AgentOptions } from 'node:https';
import { HttpMethod, KubeConfig, RequestContext } from '@kubernetes/client-node';
import { Agent, fetch, getGlobalDispatcher, type Dispatcher } from 'undici';
import { redact, registerSecret } from '../../observe/redact.ts';

/** Patch types the API server accepts (https://kubernetes.io/docs/tasks/manage-kubernetes-objects/update-api-object-kubectl-patch/). */
export const PATCH = {
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  json: 'application/json-patch+json',
  /** Server-side apply (https://kubernetes.io/docs/reference/using-api/server-side-apply/). JSON is valid YAML. */
  apply: 'application/apply-patch+yaml',
} as const;

export type ContentType = (typeof PATCH)[keyof typeof PATCH] | 'application/json';

/** The field manager the harness applies and patches as: `kubectl get --show-managed-fields` names it. */
export const FIELD_MANAGER = 'zerodrop';

export type Query = Record<string, string | number | boolean | undefined>;

/** One of a Status's details.causes: `type` says what refused, e.g. `DisruptionBudget` for an eviction. */
/**
 * A metav1.StatusCause. Its Go field `Type` is `reason` on the wire (`json:"reason,omitempty"`,
 * apimachinery pkg/apis/meta/v1/types.go): a real API server's eviction refusal carries
 * `{ reason: 'DisruptionBudget', message }`, never a `type`.
 */
export interface StatusCause {
  reason?: string;
  message?: string;
  /** The field the cause is about, e.g. `spec.ports[0].port`. */
  field?: string;
}

export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string | undefined;
  /** The server's own message, redacted. */
  readonly serverMessage: string | undefined;
  readonly causes: StatusCause[];
  constructor(method: string, path: string, status: number, body: unknown) {
    const status_ = body as { message?: string; reason?: string; details?: { causes?: StatusCause[] } } | undefined;
    // The server's message may quote the request's credentials back: never carry them on.
    const message = status_?.message === undefined ? undefined : redact(status_.message);
    super(redact(`${method} ${path}: ${status}${message ? ` ${message}` : ''}`));
    this.status = status;
    this.reason = status_?.reason;
    this.serverMessage = message;
    this.causes = (Array.isArray(status_?.details?.causes) ? status_.details.causes : []).map((c) => ({
      ...(typeof c.reason === 'string' ? { reason: c.reason } : {}),
      ...(typeof c.message === 'string' ? { message: redact(c.message) } : {}),
      ...(typeof c.field === 'string' ? { field: c.field } : {}),
    }));
  }
}

export interface RawWatchEvent {
  type: string;
  object: Record<string, unknown>;
}

export class KubeClient {
  readonly config: KubeConfig;
  /**
   * The connection pool every request and watch shares, as client-go keeps one transport per config.
   * client-node builds a new undici Agent at each authentication, so using each would open a new TLS
   * connection per request (and leave it idle) in loops that poll every 250 ms.
   */
  private pool: Promise<Dispatcher | undefined> | undefined;
  /** The same pool for streams, without a body timeout (stream()). */
  private streamDispatcher: Dispatcher | undefined;

  /** `opts.dispatcher`: the pool to use instead of client-node's (tests: one with short timeouts). */
  constructor(config: KubeConfig, opts: { dispatcher?: Dispatcher } = {}) {
    this.config = config;
    if (opts.dispatcher) this.pool = Promise.resolve(opts.dispatcher);
    // Whatever authenticates this client is kept out of logs and reports (redact.ts).
    for (const user of config.users) {
      registerSecret(user.token);
      registerSecret(user.password);
      registerSecret(user.keyData);
    }
  }

  /** A client for a bare API server URL with no credentials (fake API servers in tests). */
  static forServer(server: string, opts: { dispatcher?: Dispatcher } = {}): KubeClient {
    const config = new KubeConfig();
    config.loadFromOptions({
      clusters: [{ name: 'zerodrop', server, skipTLSVerify: true }],
      users: [{ name: 'zerodrop' }],
      contexts: [{ name: 'zerodrop', cluster: 'zerodrop', user: 'zerodrop' }],
      currentContext: 'zerodrop',
    });
    return new KubeClient(config, opts);
  }

  /** The shared pool, built at the first request (TLS settings come from the config, which does not change). */
  private dispatcherOf(ctx: RequestContext): Promise<Dispatcher | undefined> {
    this.pool ??= this.buildPool(ctx);
    return this.pool;
  }

  /**
   * HTTP/1.1 only. undici 8 speaks HTTP/2 to any https origin that offers it (its `allowH2` now
   * defaults to true), and its HTTP/2 client can let a connection's "other side closed" escape as an
   * unhandled 'error' event on the socket, which ends the whole process (nodejs/undici#5525,
   * forcedotcom/cli#3622): when a netns cluster's API server stopped under a Ctrl-C'd run, the run
   * exited 1 with that error instead of 130. Its HTTP/1.1 client has no such path, and a watch or a
   * followed log holding a connection of its own costs a local API server nothing.
   */
  private async buildPool(ctx: RequestContext): Promise<Dispatcher | undefined> {
    const tls: AgentOptions = {};
    await this.config.applyToHTTPSOptions(tls);
    const options = this.config.createDispatcherOptions(this.config.getCurrentCluster(), tls);
    if (options.type === 'agent') return new Agent({ connect: options.connect, allowH2: false });
    // A proxy (client-node builds its tunnel) or plain http (undici's own pool).
    return ctx.getDispatcher() as unknown as Dispatcher | undefined;
  }

  get server(): string {
    const cluster = this.config.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    return cluster.server.replace(/\/+$/, '');
  }

  async request<T = Record<string, unknown>>(
    method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    opts: { query?: Query; body?: unknown; contentType?: ContentType; signal?: AbortSignal; allow?: number[] } = {},
  ): Promise<{ status: number; body: T }> {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(opts.query ?? {})) if (value !== undefined) url.searchParams.set(key, String(value));
    const ctx = new RequestContext(url.toString(), HttpMethod[method]);
    await this.config.applySecurityAuthentication(ctx);
    const headers = ctx.getHeaders() as unknown as Record<string, string>;
    headers['accept'] = 'application/json';
    if (opts.body !== undefined) headers['content-type'] = opts.contentType ?? 'application/json';
    const dispatcher = await this.dispatcherOf(ctx);
    const response = await fetch(url, {
      method,
      headers,
      ...(opts.body !== undefined ? { body: JSON.stringify(opts.body) } : {}),
      ...(dispatcher ? { dispatcher } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = { message: text.slice(0, 200) };
    }
    if (response.status >= 400 && !(opts.allow ?? []).includes(response.status)) {
      throw new KubeApiError(method, url.pathname, response.status, body);
    }
    return { status: response.status, body: body as T };
  }

  /**
   * Follows a streaming GET (a pod's log with follow=true) line by line until the server ends it or
   * the signal aborts. Resolves when the stream ends; rejects on an HTTP error. No body timeout: a
   * followed log is silent for as long as its app says nothing (a backend between its start and its
   * SIGTERM), and undici's default bodyTimeout ("Default: 300e3 ... Monitors time between receiving
   * body data", undici docs/api/Client.md) cut such a stream after five quiet minutes.
   */
  async stream(path: string, query: Query, onLine: (line: string) => void, signal: AbortSignal): Promise<void> {
    const url = new URL(this.server + path);
    for (const [key, value] of Object.entries(query)) if (value !== undefined) url.searchParams.set(key, String(value));
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await this.config.applySecurityAuthentication(ctx);
    this.streamDispatcher ??= ((await this.dispatcherOf(ctx)) ?? getGlobalDispatcher()).compose((dispatch) => (opts, handler) => dispatch({ ...opts, bodyTimeout: 0 }, handler));
    const dispatcher = this.streamDispatcher;
    const response = await fetch(url, {
      headers: ctx.getHeaders() as unknown as Record<string, string>,
      signal,
      ...(dispatcher ? { dispatcher } : {}),
    });
    if (response.status >= 400 || !response.body) {
      const text = await response.text();
      let body: unknown;
      try {
        body = JSON.parse(text);
      } catch {
        body = { message: text.slice(0, 200) };
      }
      throw new KubeApiError('GET', url.pathname, response.status, body);
    }
    const decoder = new TextDecoder();
    let pending = '';
    try {
      for await (const chunk of response.body) {
        pending += decoder.decode(chunk as Uint8Array, { stream: true });
        let nl;
        while ((nl = pending.indexOf('\n')) >= 0) {
          onLine(pending.slice(0, nl));
          pending = pending.slice(nl + 1);
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
    if (pending) onLine(pending);
  }

  /**
   * Opens one watch request (`watch=true`: newline-delimited JSON, one event a line) on the shared
   * pool, and hands back at once the controller that ends it. `done` is called once: with null when
   * the stream ends or the controller aborts it, with the error when it fails; a non-200 answer
   * arrives there as a KubeApiError (statusOf reads it).
   * No inactivity timer: the caller's `timeoutSeconds` has the server end the watch.
   */
  async watch(path: string, query: Query, onEvent: (e: RawWatchEvent) => void, done: (err: unknown) => void): Promise<AbortController> {
    const controller = new AbortController();
    let ended = false;
    const end = (err: unknown) => {
      if (ended) return;
      ended = true;
      controller.abort();
      done(err);
    };
    const onLine = (line: string) => {
      if (ended || !line.trim()) return;
      let event: { type?: unknown; object?: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        return; // a line cut by the end of the stream
      }
      if (typeof event.type === 'string' && event.object && typeof event.object === 'object') onEvent({ type: event.type, object: event.object as Record<string, unknown> });
    };
    this.stream(path, { ...query, watch: true }, onLine, controller.signal).then(
      () => end(null),
      // Aborted by the caller: an end it asked for, not a failure (whether headers had come or not).
      (err: unknown) => end(controller.signal.aborted ? null : err),
    );
    return controller;
  }
}

/** The HTTP status of an error from `request` or a watch's `done`, when it has one. */
export function statusOf(err: unknown): number | undefined {
  if (err instanceof KubeApiError) return err.status;
  const code = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof code === 'number' ? code : undefined;
}

/**
 * The release the API server says it is (/version's gitVersion): what results.json records, since
 * the version asked for (a kind node image's tag, a minor) need not be the one that runs.
 */
export async function serverVersion(client: KubeClient): Promise<string | undefined> {
  try {
    const version = (await client.request<{ gitVersion?: unknown }>('GET', '/version')).body.gitVersion;
    return typeof version === 'string' ? version : undefined;
  } catch {
    // Only recorded, never judged: a server that will not say its version stops nothing (the run's
    // own requests meet and report whatever is wrong with it).
    return undefined;
  }
}
