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

class HttpLoad extends RequestLoad {
  private readonly spec: HttpLoadSpec | SingleRequestSpec;
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

  protected schedule(): void {
    const spec = this.spec;
    if (spec.kind === 'single') {
      const worker = this.newWorker();
      this.sent++;
      this.loops.push(this.send(worker).then(() => void this.stop()));
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
      // No idle worker: the request waits (and may turn late); release() calls pump() again.
      if (!worker) return;
      if (now - due > LATE_THRESHOLD_MS) this.late++;
      this.next++;
      this.sent++;
      void this.send(worker).then(() => {
        this.idle.push(worker);
        this.pump();
      });
    }
  }

  /** closed mode: one worker sending back to back, at most ratePerWorker requests per second. */
  private async closedWorker(worker: Worker, ratePerWorker: number | undefined): Promise<void> {
    const interval = ratePerWorker === undefined ? 0 : 1000 / ratePerWorker;
    let due = this.recorder.now();
    while (this.mayStart()) {
      if (interval > 0) {
        const wait = due - this.recorder.now();
        if (wait > 0) await this.sleepers.sleep(wait);
        if (!this.mayStart()) return;
      }
      this.sent++;
      await this.send(worker);
      if (interval > 0) due = nextDue(due, interval, this.recorder.now());
    }
  }

  /**
   * Sends one request on `worker` and records it. Never rejects. Resolves once the worker is free
   * again: at most timeoutMs + CANCEL_GRACE_MS after the start.
   */
  private send(worker: Worker): Promise<void> {
    const recorder = this.recorder;
    const { path, timeoutMs } = this.spec;
    const keepAlive = this.spec.kind === 'http' && this.spec.keepAlive;
    const start = recorder.now();

    let recorded = false;
    let released = false;
    let controller: Dispatcher.DispatchController | undefined;
    let conn: Conn | undefined;
    let status: number | undefined;
    let pod: string | undefined;
    let gateway: string | undefined;
    let newConnection = false;
    let localPort: number | undefined;
    let connectionStart: number | undefined;
    let graceTimer: NodeJS.Timeout | undefined;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));

    const record = (outcome: Outcome, error?: string): void => {
      if (recorded) return;
      recorded = true;
      clearTimeout(timeoutTimer);
      const rec = requestRecord(recorder, { load: this.id, start, outcome, newConnection, path, service: this.spec.service });
      if (status !== undefined) rec.status = status;
      attributeResponse(rec, pod, gateway);
      if (localPort !== undefined) rec.localPort = localPort;
      if (connectionStart !== undefined) rec.connectionStart = connectionStart;
      if (error !== undefined) rec.error = error;
      recorder.request(rec);
      this.count(outcome);
    };
    const release = (): void => {
      if (released) return;
      released = true;
      clearTimeout(timeoutTimer);
      clearTimeout(graceTimer);
      this.inFlight.delete(entry);
      resolveDone();
    };
    const fail = (err: unknown): void => {
      const c = classifyError(err, conn?.error);
      record(c.outcome, c.error);
      release();
    };
    // The generator's own timeout (or an abort): record now, then make undici let go of the request.
    const cancel = (err: Error): void => {
      if (recorded) return;
      const c = classifyError(err);
      record(c.outcome, c.error);
      if (controller) controller.abort(err);
      else worker.replaceClient(err); // still connecting: only destroying the client stops it
      graceTimer = setTimeout(release, CANCEL_GRACE_MS);
      // A backstop only: during a run the harness's listeners keep the process up anyway, and an
      // interrupted harness that has torn everything down must not wait for it to exit.
      graceTimer.unref();
    };
    const timeoutTimer = setTimeout(
      () => cancel(harnessError('ZERODROP_TIMEOUT', `no complete response within ${timeoutMs} ms`)),
      timeoutMs,
    );
    const entry: InFlightRequest = { cancel, done };
    this.inFlight.add(entry);

    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: (c) => {
        controller = c;
        // One request at a time per client: the request is being written to the worker's socket.
        conn = worker.conn;
        if (conn) {
          newConnection = conn.uses === 0;
          conn.uses++;
          localPort = conn.localPort;
          connectionStart = conn.openedAt;
        }
      },
      onResponseStart: (_c, statusCode, headers) => {
        status = statusCode;
        pod = headerValue(headers[POD_HEADER]);
        gateway = headerValue(headers[GATEWAY_HEADER]);
      },
      onResponseData: () => {},
      onResponseEnd: () => {
        record(classifyStatus(status ?? 0));
        release();
      },
      onResponseError: (_c, err) => fail(err),
    };
    try {
      worker.client.dispatch(
        {
          path,
          method: 'GET',
          headers: { 'user-agent': 'zerodrop' },
          // reset: true sends `connection: close` and closes the socket after the response.
          reset: !keepAlive,
          idempotent: true,
        },
        handler,
      );
    } catch (err) {
      fail(err);
    }
    return done;
  }
}
