// HTTP/1.1 load generator on undici. It records one RequestRecord per request, on the run clock,
// with the pod that served it and the client socket it used, so that the harness can join each
// request to the load balancer's connection record (by local port) and to the pods' shutdown steps.
//
// No retries anywhere, by rule (DESIGN.md "Traffic and accounting"): each worker owns one undici
// `Client` (one socket at a time, pipelining 1) and sends one request at a time, so a request that
// fails is recorded as failed and never sent again. A bare undici 8 Client follows no redirects
// (request-level maxRedirections is gone; redirects and retries only exist as interceptors, and
// none is composed here) and, with one request at a time, has no pipelined request to re-dispatch.
//
// Modes:
// - open: requests are scheduled at a fixed total rate, k / rate after the start, regardless of
//   responses, and dispatched to an idle worker (at most `connections`). When no worker is idle the
//   request waits; one that starts more than LATE_THRESHOLD_MS after its scheduled time counts as
//   `late`, which makes a run inconclusive upstream. Requests are never dropped or skipped.
// - closed: `connections` workers each send back to back, each at most `ratePerWorker` per second
//   (the shape of `hey -c 100 -q 10`).
// - single: one request (a long request in flight during a drain, for instance).

import type { Socket } from 'node:net';
import { Client, buildConnector, type Dispatcher } from 'undici';
import type { HttpLoadSpec, SingleRequestSpec } from '../model/load.ts';
import type { Outcome, RequestRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import { classifyError, classifyStatus, harnessError } from './outcome.ts';
import { headerValue, nextDue, RequestLoad, requestRecord, type InFlightRequest } from './request-load.ts';

export interface LoadTarget {
  host: string;
  port: number;
}

export interface LoadSummary {
  load: string;
  mode: 'open' | 'closed' | 'single';
  /** Requests started; every one of them has a RequestRecord, `completed + failed === sent`. */
  sent: number;
  /** Requests with outcome `ok`. */
  completed: number;
  /** Requests with any other outcome. */
  failed: number;
  /** Run-clock time the load started. */
  startedAt: number;
  /** Run-clock time the load was fully stopped: every request finished and every client closed. */
  stoppedAt: number;
  /** open: spec.rate; closed: connections × ratePerWorker when capped. */
  targetRate?: number;
  /** Requests per second over the time the load was starting requests (start to stop of scheduling). */
  achievedRate?: number;
  /** open mode: requests that started more than 50 ms after their scheduled time */
  late: number;
}

export interface LoadHandle {
  readonly id: string;
  /** Stops starting requests, waits for in-flight ones (bounded by their timeout), closes all clients. */
  stop(): Promise<LoadSummary>;
  /**
   * Resolves when the load has ended: for `single` when its request completes; for open and closed
   * loads once they stop (stop(), abort, or a maxRequests / maxDurationMs bound reached).
   */
  done: Promise<LoadSummary>;
}

export interface HttpLoadOptions {
  /** Aborting stops the load and aborts in-flight requests, recorded as `error` "aborted". */
  signal?: AbortSignal;
  /** The load stops by itself after this many requests. Bounds memory: one record per request. */
  maxRequests?: number;
  /** The load stops by itself after this long, a backstop for a runner that forgets to stop it. */
  maxDurationMs?: number;
}

/** A request starting later than this after its scheduled time is `late` (open mode). */
export const LATE_THRESHOLD_MS = 50;
export { DEFAULT_MAX_DURATION_MS, DEFAULT_MAX_REQUESTS } from './request-load.ts';
/** Header by which reference apps and gateway configs say which pod served a request. */
export const POD_HEADER = 'x-zerodrop-pod';
/**
 * Header by which gateway configs say which gateway pod forwarded a request. When present, the
 * request's `pod` is that gateway pod (the client-facing pod whose drain is under test) and the
 * backend's x-zerodrop-pod goes to `backendPod`.
 */
export const GATEWAY_HEADER = 'x-zerodrop-gateway';

/** Fills pod, gateway and backendPod of a record from the response's identifying headers. */
export function attributeResponse(rec: Pick<RequestRecord, 'pod' | 'gateway' | 'backendPod'>, pod: string | undefined, gateway: string | undefined): void {
  if (gateway !== undefined) {
    rec.gateway = gateway;
    rec.pod = gateway;
    if (pod !== undefined) rec.backendPod = pod;
  } else if (pod !== undefined) {
    rec.pod = pod;
  }
}
/** undici's own timers back up the generator's per-request timer, which should always fire first. */
const UNDICI_TIMEOUT_SLACK_MS = 1_000;
/** After the generator cancels a request, how long undici gets to hand it back before the worker moves on. */
const CANCEL_GRACE_MS = 2_000;
const MAX_CONNECTIONS = 10_000;

export function startHttpLoad(
  id: string,
  spec: HttpLoadSpec | SingleRequestSpec,
  target: LoadTarget,
  recorder: Recorder,
  opts: HttpLoadOptions = {},
): LoadHandle {
  validate(spec);
  const load = new HttpLoad(id, spec, target, recorder, opts);
  load.start();
  return load;
}

function validate(spec: HttpLoadSpec | SingleRequestSpec): void {
  const positive = (name: string, v: number | undefined) => {
    if (v === undefined || !Number.isFinite(v) || v <= 0) throw new RangeError(`load spec: ${name} must be a positive number, got ${v}`);
  };
  positive('timeoutMs', spec.timeoutMs);
  if (!spec.path.startsWith('/')) throw new RangeError(`load spec: path must start with "/", got ${JSON.stringify(spec.path)}`);
  if (spec.kind === 'single') return;
  if (!Number.isInteger(spec.connections) || spec.connections < 1 || spec.connections > MAX_CONNECTIONS) {
    throw new RangeError(`load spec: connections must be an integer in [1, ${MAX_CONNECTIONS}], got ${spec.connections}`);
  }
  if (spec.mode === 'open') positive('rate', spec.rate);
  if (spec.mode === 'closed' && spec.ratePerWorker !== undefined) positive('ratePerWorker', spec.ratePerWorker);
}

/** The socket a worker's client currently has open, as the connector saw it open. */
interface Conn {
  socket: Socket;
  localPort: number | undefined;
  /** Run-clock time the TCP connection was established. */
  openedAt: number;
  /** Requests started on this socket so far. */
  uses: number;
  /** First error the socket emitted (a reset shows here even when undici reports something else). */
  error?: Error;
}

/** One connection slot: one undici Client, one socket at a time, one request at a time. */
class Worker {
  client: Client;
  conn: Conn | undefined;
  /** open mode: puts the worker back in the idle list (made once per worker). */
  onIdle: (() => void) | undefined;
  private readonly origin: string;
  private readonly timeoutMs: number;
  private readonly now: () => number;

  constructor(origin: string, timeoutMs: number, now: () => number) {
    this.origin = origin;
    this.timeoutMs = timeoutMs;
    this.now = now;
    this.client = this.newClient();
  }

  private newClient(): Client {
    const base = buildConnector({ timeout: this.timeoutMs });
    const connect: buildConnector.connector = (options, callback) => {
      base(options, (err, socket) => {
        if (err !== null) {
          callback(err, null);
          return;
        }
        // A late connect of a client that was replaced must not become the worker's socket.
        if (this.client === client) {
          const conn: Conn = { socket, localPort: socket.localPort, openedAt: this.now(), uses: 0 };
          socket.once('error', (e) => (conn.error ??= e));
          this.conn = conn;
        }
        callback(null, socket);
      });
    };
    const client: Client = new Client(this.origin, {
      pipelining: 1,
      allowH2: false,
      connect,
      headersTimeout: this.timeoutMs + UNDICI_TIMEOUT_SLACK_MS,
      bodyTimeout: this.timeoutMs + UNDICI_TIMEOUT_SLACK_MS,
    });
    return client;
  }

  /** Abandons the current client (its queued request fails with `err`) and starts a fresh one. */
  replaceClient(err: Error): void {
    const old = this.client;
    this.conn = undefined;
    this.client = this.newClient();
    old.destroy(err).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.client.destroy().catch(() => undefined);
  }
}

/** What an exchange needs from its load: where to record, and how to count and forget it. */
interface ExchangeSink {
  readonly id: string;
  readonly recorder: Recorder;
  readonly spec: HttpLoadSpec | SingleRequestSpec;
  finished(exchange: Exchange, outcome: Outcome): void;
  released(exchange: Exchange): void;
}

/**
 * One request on one worker: undici's handler for it, its timeout, and the record it leaves. A class
 * rather than closures, because the generator makes tens of thousands of these a second and each
 * allocation is paid for again in garbage collection.
 */
class Exchange implements Dispatcher.DispatchHandler, InFlightRequest {
  private readonly sink: ExchangeSink;
  private readonly worker: Worker;
  /** Called once the worker is free again, on a later microtask (never inside undici's callbacks). */
  private readonly onFree: () => void;
  private readonly start: number;
  private readonly timeoutTimer: NodeJS.Timeout;
  private graceTimer: NodeJS.Timeout | undefined;
  private controller: Dispatcher.DispatchController | undefined;
  private conn: Conn | undefined;
  private recorded = false;
  private released = false;
  private status: number | undefined;
  private pod: string | undefined;
  private gateway: string | undefined;
  private newConnection = false;
  private settle: (() => void) | undefined;
  private donePromise: Promise<void> | undefined;

  constructor(sink: ExchangeSink, worker: Worker, onFree: () => void) {
    this.sink = sink;
    this.worker = worker;
    this.onFree = onFree;
    this.start = sink.recorder.now();
    this.timeoutTimer = setTimeout(Exchange.onTimeout, sink.spec.timeoutMs, this);
  }

  private static onTimeout(this: void, exchange: Exchange): void {
    exchange.cancel(harnessError('ZERODROP_TIMEOUT', `no complete response within ${exchange.sink.spec.timeoutMs} ms`));
  }

  /** Resolves once the worker is free again: at most timeoutMs + CANCEL_GRACE_MS after the start. Made only when asked for (on stop). */
  get done(): Promise<void> {
    this.donePromise ??= this.released ? Promise.resolve() : new Promise<void>((resolve) => (this.settle = resolve));
    return this.donePromise;
  }

  dispatch(): void {
    const keepAlive = this.sink.spec.kind === 'http' && this.sink.spec.keepAlive;
    try {
      this.worker.client.dispatch(
        // reset: true sends `connection: close` and closes the socket after the response.
        { path: this.sink.spec.path, method: 'GET', headers: REQUEST_HEADERS, reset: !keepAlive, idempotent: true },
        this,
      );
    } catch (err) {
      this.fail(err);
    }
  }

  private record(outcome: Outcome, error?: string): void {
    if (this.recorded) return;
    this.recorded = true;
    clearTimeout(this.timeoutTimer);
    const { sink, conn } = this;
    const rec = requestRecord(sink.recorder, { load: sink.id, start: this.start, outcome, newConnection: this.newConnection, path: sink.spec.path, service: sink.spec.service });
    if (this.status !== undefined) rec.status = this.status;
    attributeResponse(rec, this.pod, this.gateway);
    if (conn?.localPort !== undefined) rec.localPort = conn.localPort;
    if (conn !== undefined) rec.connectionStart = conn.openedAt;
    if (error !== undefined) rec.error = error;
    sink.recorder.request(rec);
    sink.finished(this, outcome);
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    clearTimeout(this.timeoutTimer);
    clearTimeout(this.graceTimer);
    this.sink.released(this);
    this.settle?.();
    queueMicrotask(this.onFree);
  }

  private fail(err: unknown): void {
    const c = classifyError(err, this.conn?.error);
    this.record(c.outcome, c.error);
    this.release();
  }

  /** The generator's own timeout (or an abort): record now, then make undici let go of the request. */
  cancel(err: Error): void {
    if (this.recorded) return;
    const c = classifyError(err);
    this.record(c.outcome, c.error);
    if (this.controller) this.controller.abort(err);
    else this.worker.replaceClient(err); // still connecting: only destroying the client stops it
    this.graceTimer = setTimeout(() => this.release(), CANCEL_GRACE_MS);
    // A backstop only: during a run the harness's listeners keep the process up anyway, and an
    // interrupted harness that has torn everything down must not wait for it to exit.
    this.graceTimer.unref();
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // One request at a time per client: the request is being written to the worker's socket.
    const conn = this.worker.conn;
    if (conn) {
      this.conn = conn;
      this.newConnection = conn.uses === 0;
      conn.uses++;
    }
  }

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: ResponseHeaders): void {
    this.status = statusCode;
    this.pod = headerValue(headers[POD_HEADER]);
    this.gateway = headerValue(headers[GATEWAY_HEADER]);
  }

  onResponseData(): void {}

  onResponseEnd(): void {
    this.record(classifyStatus(this.status ?? 0));
    this.release();
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    this.fail(err);
  }
}

type ResponseHeaders = Parameters<NonNullable<Dispatcher.DispatchHandler['onResponseStart']>>[2];

/** The same headers object for every request; undici only reads it. */
const REQUEST_HEADERS = Object.freeze({ 'user-agent': 'zerodrop' });

class HttpLoad extends RequestLoad implements ExchangeSink {
  readonly spec: HttpLoadSpec | SingleRequestSpec;
  private readonly mode: LoadSummary['mode'];

  private readonly workers: Worker[] = [];
  private readonly idle: Worker[] = [];
  private timer: NodeJS.Timeout | undefined;

  /** open mode: index of the next request to start; it is due at startedAt + next / rate. */
  private next = 0;
  private late = 0;

  constructor(id: string, spec: HttpLoadSpec | SingleRequestSpec, target: LoadTarget, recorder: Recorder, opts: HttpLoadOptions) {
    super(id, target, recorder, opts);
    this.spec = spec;
    this.mode = spec.kind === 'single' ? 'single' : spec.mode;
    this.notesBounds = this.mode !== 'single';
  }

  finished(_exchange: Exchange, outcome: Outcome): void {
    this.count(outcome);
  }

  released(exchange: Exchange): void {
    this.inFlight.delete(exchange);
  }

  protected schedule(): void {
    const spec = this.spec;
    if (spec.kind === 'single') {
      const worker = this.newWorker();
      this.sent++;
      this.loops.push(new Promise<void>((resolve) => this.send(worker, resolve)).then(() => void this.stop()));
    } else if (spec.mode === 'closed') {
      for (let i = 0; i < spec.connections; i++) this.loops.push(this.closedWorker(this.newWorker(), spec.ratePerWorker));
    } else {
      this.pump();
    }
  }

  protected override onSchedulingEnd(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  protected async closeConnections(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.close()));
  }

  protected summary(stoppedAt: number): LoadSummary {
    const summary = this.baseSummary(this.mode, stoppedAt, this.late);
    const spec = this.spec;
    if (spec.kind === 'http') {
      if (spec.mode === 'open') summary.targetRate = spec.rate;
      else if (spec.ratePerWorker !== undefined) summary.targetRate = spec.ratePerWorker * spec.connections;
      const rate = this.achievedRate(stoppedAt);
      if (rate !== undefined) summary.achievedRate = rate;
    }
    return summary;
  }

  private newWorker(): Worker {
    const worker = new Worker(this.origin, this.spec.timeoutMs, () => this.recorder.now());
    this.workers.push(worker);
    return worker;
  }

  /** open mode: start every request that is due, on idle workers, and arm a timer for the next one. */
  private pump(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const spec = this.spec;
    if (spec.kind !== 'http' || spec.rate === undefined) return;
    const interval = 1000 / spec.rate;
    const now = this.recorder.now();
    while (this.mayStart(now)) {
      const due = this.startedAt + this.next * interval;
      if (due > now) {
        this.timer = setTimeout(() => this.pump(), Math.max(1, Math.ceil(due - now)));
        return;
      }
      const worker = this.idle.pop() ?? (this.workers.length < spec.connections ? this.newWorker() : undefined);
      // No idle worker: the request waits (and may turn late); the worker's release calls pump() again.
      if (!worker) return;
      if (now - due > LATE_THRESHOLD_MS) this.late++;
      this.next++;
      this.sent++;
      this.send(worker, (worker.onIdle ??= () => {
        this.idle.push(worker);
        this.pump();
      }));
    }
  }

  /** closed mode: one worker sending back to back, at most ratePerWorker requests per second. */
  private closedWorker(worker: Worker, ratePerWorker: number | undefined): Promise<void> {
    const interval = ratePerWorker === undefined ? 0 : 1000 / ratePerWorker;
    return new Promise<void>((loopDone) => {
      let due = this.recorder.now();
      const go = (): void => {
        if (!this.mayStart()) return loopDone();
        this.sent++;
        this.send(worker, afterSend);
      };
      const next = (): void => {
        if (!this.mayStart()) return loopDone();
        const wait = interval > 0 ? due - this.recorder.now() : 0;
        if (wait > 0) void this.sleepers.sleep(wait).then(go);
        else go();
      };
      const afterSend = (): void => {
        if (interval > 0) due = nextDue(due, interval, this.recorder.now());
        next();
      };
      next();
    });
  }

  /** Sends one request on `worker` and records it; `onFree` runs once the worker is free again. */
  private send(worker: Worker, onFree: () => void): void {
    const exchange = new Exchange(this, worker, onFree);
    this.inFlight.add(exchange);
    exchange.dispatch();
  }
}
