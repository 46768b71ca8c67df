// HTTP/1.1 load generator on node:net. It records one RequestRecord per request, on the run clock,
// with the pod that served it and the client socket it used, so that the harness can join each
// request to the load balancer's connection record (by local port) and to the pods' shutdown steps.
//
// No retries anywhere, by rule (docs/architecture.md): each worker owns one socket at
// a time and writes one request at a time on it, and a request that fails is recorded as failed and
// never written again. Nothing between the generator and the socket could retry or redirect: the
// client is ours (http1-response.ts parses the responses), so every outcome is what the socket saw.
//
// Modes:
// - open: requests are scheduled at a fixed total rate, k / rate after the start, regardless of
//   responses, and dispatched to an idle worker (at most `connections`). When no worker is idle the
//   request waits; one that starts more than LATE_THRESHOLD_MS after its scheduled time counts as
//   `late`, which makes a run inconclusive upstream. Requests are never dropped or skipped.
// - closed: `connections` workers each send back to back, each at most `ratePerWorker` per second
//   (the shape of `hey -c 100 -q 10`).
// - single: one request (a long request in flight during a drain, for instance).

import net, { type Socket } from 'node:net';
import type { HttpLoadSpec, SingleRequestSpec } from '../model/load.ts';
import type { ConnectionRecord, Outcome, RequestRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import { classifyError, classifyStatus, harnessError } from './outcome.ts';
import { DEFAULT_NAME_HEADERS, ResponseParser, type NameHeaders } from './http1-response.ts';
import { closeOwnConnection, openOwnConnection, ownConnectionAnswered, type OwnConnections } from './own-connection.ts';
import { nextDue, RequestLoad, requestRecord, type InFlightRequest } from './request-load.ts';

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
  /** open: spec.rate; closed: connections × ratePerWorker when capped, else × heldRatePerWorker when set. */
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
  /**
   * The headers the target's pods name themselves with (DEFAULT_NAME_HEADERS when absent): a
   * profile's `attribution`. A header left undefined is not read; its requests are attributed
   * through the balancer's connection records.
   */
  names?: NameHeaders;
  /**
   * Where no Service load balancer of the harness's own records connections (a cluster): the
   * Service this load targets, and the load records each of its connections as the client saw it
   * (own-connection.ts). Its pod is the one its first response named (the gateway first): conntrack
   * keeps a connection on one pod.
   */
  clientConnections?: OwnConnections;
  /**
   * Every request goes straight to this pod (a lagging node's, lagging-node.ts): each is its pod's
   * whether or not a response named it, and, without keep-alive, each was a new connection's attempt
   * even when refused.
   */
  pod?: string;
}

/**
 * A request starting later than this after its scheduled time is `late` (open mode). Tighter than
 * harnessResponsive's 100 ms on purpose: a late start leaves a hole in the probing as long as the
 * stall (the requests due in it go out together after it), and a window that drops connections can
 * be that short: HAProxy without a preStop refused new connections for the 55 to 70 ms between its
 * stop signal and kube-proxy deprogramming it (docs/campaign.md). A 100 ms hole could hide it.
 */
export const LATE_THRESHOLD_MS = 50;
export { DEFAULT_MAX_DURATION_MS, DEFAULT_MAX_REQUESTS } from './request-load.ts';

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
  // The path goes into the request line as it is: a space or a CR/LF there would make another request.
  if ([...spec.path].some((ch) => ch.charCodeAt(0) <= 0x20 || ch.charCodeAt(0) === 0x7f)) throw new RangeError(`load spec: path must not contain spaces or control characters, got ${JSON.stringify(spec.path)}`);
  if (spec.kind === 'single') return;
  if (!Number.isInteger(spec.connections) || spec.connections < 1 || spec.connections > MAX_CONNECTIONS) {
    throw new RangeError(`load spec: connections must be an integer in [1, ${MAX_CONNECTIONS}], got ${spec.connections}`);
  }
  if (spec.mode === 'open') positive('rate', spec.rate);
  if (spec.mode === 'closed' && spec.ratePerWorker !== undefined) positive('ratePerWorker', spec.ratePerWorker);
  if (spec.mode === 'closed' && spec.heldRatePerWorker !== undefined) positive('heldRatePerWorker', spec.heldRatePerWorker);
  if (spec.mode === 'closed' && spec.thinkMs !== undefined && !(Number.isFinite(spec.thinkMs) && spec.thinkMs >= 0)) throw new RangeError(`load spec: thinkMs must be 0 or more, got ${spec.thinkMs}`);
  if (spec.postBytes !== undefined && !(Number.isInteger(spec.postBytes) && spec.postBytes >= 0 && spec.postBytes <= MAX_POST_BYTES)) throw new RangeError(`load spec: postBytes must be an integer in [0, ${MAX_POST_BYTES}], got ${spec.postBytes}`);
}

/** One TCP connection of a worker. */
class Connection {
  readonly socket: Socket;
  connected = false;
  /** False once the server closed it, it failed, or it must not carry another request. */
  usable = true;
  localPort: number | undefined;
  /** Run-clock time the connect started. */
  readonly startedAt: number;
  /** Run-clock time the TCP connection was established. */
  openedAt = 0;
  /** Requests written on this connection so far. */
  uses = 0;
  /** Run-clock time its last response completed, and the pod that sent it (gateway first). */
  idleSince = 0;
  lastPod: string | undefined;
  /** The load's own record of this connection (HttpLoadOptions.clientConnections). */
  record: ConnectionRecord | undefined;

  constructor(socket: Socket, startedAt: number) {
    this.socket = socket;
    this.startedAt = startedAt;
  }
}

/** What a worker needs from its load. */
interface WorkerSink {
  readonly id: string;
  readonly recorder: Recorder;
  readonly spec: HttpLoadSpec | SingleRequestSpec;
  readonly target: LoadTarget;
  /** The request's bytes, the same for every request of the load. */
  readonly request: Buffer;
  /** Where every connection of the load reads into: each read is parsed before the next one. */
  readonly readBuffer: Buffer;
  readonly keepAlive: boolean;
  readonly names: NameHeaders;
  readonly clientConnections: OwnConnections | undefined;
  readonly pod: string | undefined;
  /** The exchange recorded its request: count it. */
  finished(outcome: Outcome): void;
}

/**
 * One connection slot: one socket at a time, one request at a time, and one timer for the request in
 * flight. Every outcome comes straight from the socket: an error event (refused, reset), its end
 * before a complete response (eof), or the timer.
 *
 * The timer is not moved at each request (at tens of thousands of requests a second, moving it was a
 * measurable part of the generator's work): when it fires, it times out the request in flight if
 * that one is due, and otherwise sets itself for when that one will be.
 */
class Worker {
  private readonly sink: WorkerSink;
  private conn: Connection | undefined;
  /** The request in flight, if any. */
  private exchange: Exchange | undefined;
  private readonly parser: ResponseParser;
  private timer: NodeJS.Timeout | undefined;
  /** open mode: puts the worker back in the idle list (made once per worker). */
  onIdle: (() => void) | undefined;

  constructor(sink: WorkerSink) {
    this.sink = sink;
    this.parser = new ResponseParser(sink.names);
  }

  /** The request in flight, if any. */
  get inFlight(): Exchange | undefined {
    return this.exchange;
  }

  send(exchange: Exchange): void {
    this.exchange = exchange;
    // The parser still holds the previous response: a request that fails before it is written (a
    // refused or reset connect) must not carry that response's status and pod as its own.
    this.parser.reset();
    this.timer ??= setTimeout(Worker.onTimer, this.sink.spec.timeoutMs, this);
    const conn = this.conn?.usable === true ? this.conn : this.connect();
    if (conn.connected) this.write(conn, exchange);
    // else: written once connected (onConnect); until then the request waits on this connection
    else exchange.connecting = conn;
  }

  /** Cancels the request in flight (timeout or abort): it is recorded with `err` and its connection closed. */
  cancel(exchange: Exchange, err: Error): void {
    if (this.exchange !== exchange) return;
    // The client gives up on a request the pod may still be working on: when the pod lets go of the
    // connection is unknown here, so its record stays open (it ends at the pod's exit, as the local
    // balancer's record of a connection the pod still holds does).
    if (this.conn !== undefined) this.conn.record = undefined;
    this.drop(this.conn);
    this.finish(classifyError(err));
  }

  close(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.drop(this.conn);
  }

  private static onTimer(this: void, worker: Worker): void {
    worker.timer = undefined;
    const exchange = worker.exchange;
    // Idle: the next request sets the timer again.
    if (exchange === undefined) return;
    const timeoutMs = worker.sink.spec.timeoutMs;
    const left = exchange.start + timeoutMs - worker.sink.recorder.now();
    // Timers have a millisecond's grain: within one of its time, the request is due.
    if (left > 1) worker.timer = setTimeout(Worker.onTimer, left, worker);
    else worker.cancel(exchange, harnessError('ZERODROP_TIMEOUT', `no complete response within ${timeoutMs} ms`));
  }

  private connect(): Connection {
    this.drop(this.conn);
    const { host, port } = this.sink.target;
    // Bytes are read into the load's one buffer and handed over in place (`onread`), not as a
    // stream's 'data' chunks: the parser keeps nothing of a chunk, and the stream's machinery per
    // read was a measurable part of the generator's work.
    // The callback returns true: reading never pauses (false would).
    const onread = {
      buffer: this.sink.readBuffer,
      callback: (n: number, buf: Uint8Array): boolean => {
        this.onData(conn, buf as Buffer, n);
        return true;
      },
    };
    const socket: Socket = net.connect({ host, port, noDelay: true, onread });
    const conn: Connection = new Connection(socket, this.sink.recorder.now());
    this.conn = conn;
    // The kernel picks the local port as the connect starts (net.connect starts it on the next
    // tick, queued before this one): kept now, a connect that is refused, reset or times out can
    // still be joined by its port to the balancer's or conntrack's record of where it was sent.
    process.nextTick(() => (conn.localPort ??= socket.localPort));
    socket.on('connect', () => this.onConnect(conn));
    socket.on('end', () => this.onClosed(conn, 'other side closed before a complete response'));
    socket.on('close', () => this.onClosed(conn, 'connection closed before a complete response'));
    socket.on('error', (err) => this.onError(conn, err));
    return conn;
  }

  /** Closes a connection (or resets it) and forgets it; its late events are ignored. */
  private drop(conn: Connection | undefined, how: 'close' | 'reset' = 'close'): void {
    if (conn === undefined) return;
    conn.usable = false;
    if (this.conn === conn) this.conn = undefined;
    if (how === 'reset' && !conn.socket.destroyed) conn.socket.resetAndDestroy();
    else conn.socket.destroy();
    closeOwnConnection(conn.record, this.sink.recorder.now());
  }

  private write(conn: Connection, exchange: Exchange): void {
    conn.uses++;
    exchange.onWire(conn, conn.uses === 1);
    conn.socket.write(this.sink.request);
  }

  private onConnect(conn: Connection): void {
    conn.connected = true;
    conn.localPort = conn.socket.localPort;
    conn.openedAt = this.sink.recorder.now();
    conn.record = openOwnConnection(this.sink.recorder, this.sink.clientConnections, conn.localPort, conn.openedAt);
    const exchange = this.exchange;
    if (exchange !== undefined && this.conn === conn) this.write(conn, exchange);
  }

  /** `n` bytes arrived in `buf` (the load's read buffer, reused by the next read). */
  private onData(conn: Connection, buf: Buffer, n: number): void {
    const exchange = this.exchange;
    if (exchange === undefined || exchange.conn !== conn) {
      // Bytes nobody asked for: the connection's framing can no longer be trusted.
      this.drop(conn);
      return;
    }
    const fed = this.parser.feed(buf, n);
    if (fed === 'more') return;
    if (fed === 'invalid') {
      this.drop(conn);
      this.finish({ outcome: 'error', error: `invalid response: ${this.parser.error}` });
      return;
    }
    conn.lastPod = this.parser.gateway ?? this.parser.pod;
    // Before the drop below, which closes the record of a connection that carries no more requests.
    ownConnectionAnswered(conn.record, conn.lastPod);
    // A connection that carries no more requests after a complete response is reset, not closed: a
    // server that closes first (as one does after `Connection: close`) would otherwise keep a
    // TIME_WAIT socket per request, and the harness's clients all come from one address. Through a
    // NodePort's masquerade a new connection then lands on the 4-tuple of one still in TIME_WAIT in
    // the pod, whose SYN is refused by PAWS and sent again 1 s later (kubernetes#76699): a stall
    // of the harness's making, which a gateway's many real clients never cause.
    if (!this.sink.keepAlive || !this.parser.keepAlive || this.parser.trailing) this.drop(conn, 'reset');
    conn.idleSince = this.sink.recorder.now();
    this.finish({ outcome: classifyStatus(this.parser.status ?? 0, this.sink.spec.okStatus) });
  }

  /**
   * The server ended a keep-alive connection it had kept open after its last response: had the
   * client's next request been on the wire, it would have failed. Whether one did is luck (how long
   * the close took to reach the client); that the server closed unannounced is not, so it is recorded.
   */
  private noteUnannouncedClose(conn: Connection, how: 'fin' | 'reset'): void {
    if (!conn.usable || conn.uses === 0 || !this.sink.keepAlive) return;
    const now = this.sink.recorder.now();
    const detail = { load: this.sink.id, localPort: conn.localPort, idleMs: Math.round(now - conn.idleSince), how };
    this.sink.recorder.event('unannounced-close', { ...(conn.lastPod !== undefined ? { pod: conn.lastPod } : {}), detail });
  }

  /** The server ended the connection (FIN), or it closed: the request on it ends here. */
  private onClosed(conn: Connection, why: string): void {
    const exchange = this.exchange;
    const current = exchange !== undefined && exchange.conn === conn;
    if (!current) this.noteUnannouncedClose(conn, 'fin');
    // A response delimited by the close names its pod here, before the drop closes the record.
    if (current && this.parser.endOfStream()) ownConnectionAnswered(conn.record, this.parser.gateway ?? this.parser.pod);
    this.drop(conn);
    if (!current) return;
    if (this.parser.endOfStream()) this.finish({ outcome: classifyStatus(this.parser.status ?? 0, this.sink.spec.okStatus) });
    else this.finish(classifyError(harnessError('ZERODROP_EOF', why)));
  }

  private onError(conn: Connection, err: Error): void {
    // A connect that failed is a connection too, where the load keeps its own records (a cluster):
    // conntrack then tells which pod kube-proxy sent it to, and its request is placed there.
    if (!conn.connected && conn.record === undefined) {
      conn.record = openOwnConnection(this.sink.recorder, this.sink.clientConnections, conn.localPort, conn.startedAt);
      if (conn.record !== undefined && (err as NodeJS.ErrnoException).code === 'ECONNREFUSED') conn.record.upstream = 'refused';
    }
    const exchange = this.exchange;
    // A request waits on a connection that is still connecting, so a refused connect is its outcome.
    const current = exchange !== undefined && this.conn === conn;
    if (!current && this.conn === conn) this.noteUnannouncedClose(conn, 'reset');
    this.drop(conn);
    if (current) this.finish(classifyError(err));
  }

  private finish(c: { outcome: Outcome; error?: string }): void {
    const exchange = this.exchange;
    if (exchange === undefined) return;
    this.exchange = undefined;
    // A status means a response head was read, so the request went out on a connection.
    exchange.finish(c.outcome, c.error, this.parser.status !== undefined ? this.parser : undefined);
  }
}

/**
 * One request: when it started, the connection it went out on, and the record it leaves. The
 * generator makes tens of thousands of these a second, so it holds only what the record needs.
 */
class Exchange implements InFlightRequest {
  private readonly sink: WorkerSink;
  private readonly worker: Worker;
  /** Called once the worker is free again, on a later microtask (never inside a socket callback). */
  private readonly onFree: () => void;
  /** When the request started, on the run's clock. */
  readonly start: number;
  /** The connection the request was written on (undefined while connecting). */
  conn: Connection | undefined;
  /** The connection the request waits on while it connects (its local port places a failed connect). */
  connecting: Connection | undefined;
  private newConnection = false;
  private over = false;
  private settle: (() => void) | undefined;
  private donePromise: Promise<void> | undefined;

  constructor(sink: WorkerSink, worker: Worker, onFree: () => void, start: number) {
    this.sink = sink;
    this.worker = worker;
    this.onFree = onFree;
    this.start = start;
  }

  /** Resolves once the request is over. Made only when asked for (on stop). */
  get done(): Promise<void> {
    this.donePromise ??= this.over ? Promise.resolve() : new Promise<void>((resolve) => (this.settle = resolve));
    return this.donePromise;
  }

  cancel(err: Error): void {
    this.worker.cancel(this, err);
  }

  onWire(conn: Connection, fresh: boolean): void {
    this.conn = conn;
    this.newConnection = fresh;
  }

  finish(outcome: Outcome, error: string | undefined, response: ResponseParser | undefined): void {
    if (this.over) return;
    this.over = true;
    const { sink, conn } = this;
    const newConnection = this.newConnection || (sink.pod !== undefined && !sink.keepAlive);
    const rec = requestRecord(sink.recorder, { load: sink.id, start: this.start, outcome, newConnection, path: sink.spec.path, service: sink.spec.service });
    if (response !== undefined) {
      rec.status = response.status!;
      attributeResponse(rec, response.pod, response.gateway);
    }
    if (sink.pod !== undefined) {
      rec.pod = sink.pod;
      rec.direct = true;
    }
    if (conn?.localPort !== undefined) {
      rec.localPort = conn.localPort;
      rec.connectionStart = conn.openedAt;
    } else if (this.connecting?.localPort !== undefined) {
      // Never opened: the port the connect left from, and no connection start.
      rec.localPort = this.connecting.localPort;
    }
    if (error !== undefined) rec.error = error;
    sink.recorder.request(rec);
    sink.finished(outcome);
    this.settle?.();
    queueMicrotask(this.onFree);
  }
}

class HttpLoad extends RequestLoad implements WorkerSink {
  readonly spec: HttpLoadSpec | SingleRequestSpec;
  readonly target: LoadTarget;
  readonly request: Buffer;
  readonly readBuffer = Buffer.allocUnsafe(64 * 1024);
  readonly keepAlive: boolean;
  readonly names: NameHeaders;
  readonly clientConnections: OwnConnections | undefined;
  readonly pod: string | undefined;
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
    this.target = target;
    this.keepAlive = spec.kind === 'http' && spec.keepAlive;
    this.names = opts.names ?? DEFAULT_NAME_HEADERS;
    this.clientConnections = opts.clientConnections;
    this.pod = opts.pod;
    this.request = requestBytes(spec.path, this.origin, this.keepAlive, spec.kind === 'http' ? spec.postBytes : undefined);
    this.mode = spec.kind === 'single' ? 'single' : spec.mode;
    this.notesBounds = this.mode !== 'single';
  }

  finished(outcome: Outcome): void {
    this.count(outcome);
  }

  // A worker holds at most one request: asking the workers is cheaper than a set kept per request.
  protected override requestsInFlight(): InFlightRequest[] {
    const requests: InFlightRequest[] = [];
    for (const worker of this.workers) if (worker.inFlight !== undefined) requests.push(worker.inFlight);
    return requests;
  }

  protected schedule(): void {
    const spec = this.spec;
    if (spec.kind === 'single') {
      const worker = this.newWorker();
      this.sent++;
      this.loops.push(new Promise<void>((resolve) => this.send(worker, resolve)).then(() => void this.stop()));
    } else if (spec.mode === 'closed') {
      for (let i = 0; i < spec.connections; i++) this.loops.push(this.closedWorker(this.newWorker(), spec.ratePerWorker, spec.thinkMs ?? 0));
    } else {
      this.pump();
    }
  }

  protected override onSchedulingEnd(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  protected closeConnections(): Promise<void> {
    for (const worker of this.workers) worker.close();
    return Promise.resolve();
  }

  protected summary(stoppedAt: number): LoadSummary {
    const summary = this.baseSummary(this.mode, stoppedAt, this.late);
    const spec = this.spec;
    if (spec.kind === 'http') {
      if (spec.mode === 'open') summary.targetRate = spec.rate;
      else if (spec.ratePerWorker !== undefined) summary.targetRate = spec.ratePerWorker * spec.connections;
      else if (spec.heldRatePerWorker !== undefined) summary.targetRate = spec.heldRatePerWorker * spec.connections;
      const rate = this.achievedRate(stoppedAt);
      if (rate !== undefined) summary.achievedRate = rate;
    }
    return summary;
  }

  private newWorker(): Worker {
    const worker = new Worker(this);
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
  private closedWorker(worker: Worker, ratePerWorker: number | undefined, thinkMs: number): Promise<void> {
    const interval = ratePerWorker === undefined ? 0 : 1000 / ratePerWorker;
    return new Promise<void>((loopDone) => {
      let due = this.recorder.now();
      // One clock read a request: the time mayStart() checks the bounds at is the request's start.
      const go = (): void => {
        const now = this.recorder.now();
        if (!this.mayStart(now)) return loopDone();
        this.sent++;
        this.send(worker, afterSend, now);
      };
      // A loop asleep when the load stops is woken (sleepers.wakeAll) and ends in go().
      const next = (): void => {
        const wait = Math.max(interval > 0 ? due - this.recorder.now() : 0, thinkMs);
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
  private send(worker: Worker, onFree: () => void, now = this.recorder.now()): void {
    worker.send(new Exchange(this, worker, onFree, now));
  }
}

/** A request body is written with the request in one buffer: small, as a form or an API call is. */
const MAX_POST_BYTES = 65_536;

/** The request every worker writes: a GET (or a POST of `postBytes`) with the Host its origin names, closing the connection unless kept alive. */
function requestBytes(path: string, origin: string, keepAlive: boolean, postBytes?: number): Buffer {
  const host = origin.slice('http://'.length);
  const close = keepAlive ? '' : 'Connection: close\r\n';
  if (postBytes === undefined) return Buffer.from(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: zerodrop\r\n${close}\r\n`, 'latin1');
  return Buffer.from(`POST ${path} HTTP/1.1\r\nHost: ${host}\r\nUser-Agent: zerodrop\r\nContent-Type: text/plain\r\nContent-Length: ${postBytes}\r\n${close}\r\n${'x'.repeat(postBytes)}`, 'latin1');
}
