// HTTP/2 load generator on node:http2, cleartext with prior knowledge (h2c, RFC 9113 section 3.3).
// A pool of `sessions` connections, each carrying `streamsPerSession` stream slots that send back
// to back (each at most `ratePerStream` per second): the shape of a gRPC or HTTP/2 client pool.
//
// GOAWAY (RFC 9113 section 6.8) is recorded on the Timeline as a `goaway` event with the last stream
// id the server will process. A well-behaved client opens no new stream on a connection that got
// GOAWAY; its slots move to a fresh connection, which the Service's balancer routes to a pod that is
// still programmed. Streams the server did not process (refused, or above the last stream id) and
// streams cut by a connection that closed or reset are failures: nothing is ever retried, by rule.

import http2, { type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import type { Http2LoadSpec } from '../model/load.ts';
import type { ConnectionRecord, Outcome } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import { attributeResponse, type HttpLoadOptions, type LoadHandle, type LoadSummary, type LoadTarget } from './http.ts';
import { DEFAULT_NAME_HEADERS, type NameHeaders } from './http1-response.ts';
import { classifyError, classifyStatus, harnessError } from './outcome.ts';
import { closeOwnConnection, openOwnConnection, ownConnectionAnswered, type OwnConnections } from './own-connection.ts';
import { headerValue, nextDue, RequestLoad, requestRecord } from './request-load.ts';

const { NGHTTP2_REFUSED_STREAM, NGHTTP2_CANCEL, NGHTTP2_NO_ERROR } = http2.constants;
const MAX_SLOTS = 10_000;

/** One pooled connection and what the generator learned about it. */
interface Session {
  session: ClientHttp2Session;
  /** Run-clock time the connection was established. */
  openedAt?: number;
  localPort?: number;
  /** Streams started on it so far. */
  streams: number;
  /** Set once GOAWAY arrived: no new stream goes on this connection. */
  goaway?: Goaway;
  /** The pod that answered on it last (gateway header first). */
  pod?: string;
  closed: boolean;
  /** The load's own record of this connection (HttpLoadOptions.clientConnections). */
  record?: ConnectionRecord;
}

export interface Goaway {
  t: number;
  lastStreamId: number;
  errorCode: number;
}

/**
 * Keeps the first GOAWAY a connection received on it, and puts each on the Timeline as a `goaway`
 * event of the load, with the pod that last answered on the connection and its local port.
 */
export function recordGoaway(
  recorder: Recorder,
  load: string,
  connection: { goaway?: Goaway; pod?: string; localPort?: number | undefined },
  errorCode: number,
  lastStreamId: number,
): void {
  connection.goaway ??= { t: recorder.now(), lastStreamId, errorCode };
  recorder.event('goaway', {
    ...(connection.pod !== undefined ? { pod: connection.pod } : {}),
    message: `load ${load}: GOAWAY (last stream id ${lastStreamId}, error code ${errorCode})`,
    detail: { load, localPort: connection.localPort, lastStreamId, errorCode },
  });
}

export function startHttp2Load(id: string, spec: Http2LoadSpec, target: LoadTarget, recorder: Recorder, opts: HttpLoadOptions = {}): LoadHandle {
  const positive = (name: string, v: number | undefined) => {
    if (v === undefined || !Number.isFinite(v) || v <= 0) throw new RangeError(`http2 load spec: ${name} must be a positive number, got ${v}`);
  };
  positive('timeoutMs', spec.timeoutMs);
  if (spec.ratePerStream !== undefined) positive('ratePerStream', spec.ratePerStream);
  for (const [name, v] of [['sessions', spec.sessions], ['streamsPerSession', spec.streamsPerSession]] as const) {
    if (!Number.isInteger(v) || v < 1 || v > MAX_SLOTS) throw new RangeError(`http2 load spec: ${name} must be an integer in [1, ${MAX_SLOTS}], got ${v}`);
  }
  if (!spec.path.startsWith('/')) throw new RangeError(`http2 load spec: path must start with "/", got ${JSON.stringify(spec.path)}`);
  const load = new Http2Load(id, spec, target, recorder, opts);
  load.start();
  return load;
}

class Http2Load extends RequestLoad {
  private readonly spec: Http2LoadSpec;
  /** The current connection of each pool slot. */
  private readonly pool: (Session | undefined)[];
  private readonly names: NameHeaders;
  private readonly all = new Set<Session>();
  private readonly clientConnections: OwnConnections | undefined;

  constructor(id: string, spec: Http2LoadSpec, target: LoadTarget, recorder: Recorder, opts: HttpLoadOptions) {
    super(id, target, recorder, opts);
    this.spec = spec;
    this.names = opts.names ?? DEFAULT_NAME_HEADERS;
    this.clientConnections = opts.clientConnections;
    this.pool = new Array<Session | undefined>(spec.sessions).fill(undefined);
  }

  protected schedule(): void {
    for (let slot = 0; slot < this.spec.sessions; slot++) {
      for (let s = 0; s < this.spec.streamsPerSession; s++) this.loops.push(this.streamLoop(slot));
    }
  }

  protected async closeConnections(): Promise<void> {
    await Promise.all([...this.all].map((s) => closeSession(s.session)));
  }

  protected summary(stoppedAt: number): LoadSummary {
    const summary = this.baseSummary('closed', stoppedAt, 0);
    if (this.spec.ratePerStream !== undefined) summary.targetRate = this.spec.ratePerStream * this.spec.sessions * this.spec.streamsPerSession;
    const rate = this.achievedRate(stoppedAt);
    if (rate !== undefined) summary.achievedRate = rate;
    return summary;
  }

  private async streamLoop(slot: number): Promise<void> {
    const rate = this.spec.ratePerStream;
    const interval = rate === undefined ? 0 : 1000 / rate;
    // Slots start spread over one interval, so that a pool does not fire in lockstep.
    let due = this.recorder.now() + Math.random() * interval;
    while (this.mayStart()) {
      const wait = due - this.recorder.now();
      if (wait > 0) await this.sleepers.sleep(wait);
      if (!this.mayStart()) return;
      this.sent++;
      await this.send(slot);
      if (interval > 0) due = nextDue(due, interval, this.recorder.now());
    }
  }

  /** The slot's connection, or a fresh one when it got GOAWAY or closed. */
  private sessionFor(slot: number): Session {
    const current = this.pool[slot];
    if (current && !current.goaway && !current.closed && !current.session.destroyed && !current.session.closed) return current;
    const session = http2.connect(this.origin, { peerMaxConcurrentStreams: 1000 });
    const s: Session = { session, streams: 0, closed: false };
    this.all.add(s);
    this.pool[slot] = s;
    session.once('connect', () => {
      s.openedAt = this.recorder.now();
      s.localPort = session.socket?.localPort;
      s.record = openOwnConnection(this.recorder, this.clientConnections, s.localPort, s.openedAt);
    });
    session.on('goaway', (errorCode: number, lastStreamId: number) => recordGoaway(this.recorder, this.id, s, errorCode, lastStreamId));
    // Errors reach the streams that were on the session; the session's own event only closes it.
    session.on('error', () => undefined);
    session.once('close', () => {
      s.closed = true;
      this.all.delete(s);
      closeOwnConnection(s.record, this.recorder.now());
    });
    return s;
  }

  /**
   * Sends one stream on the slot's connection and records it. Never rejects; resolves once the
   * stream is over. `start` is given when the request is being put on a fresh connection because
   * the first one got GOAWAY before the request could be written (see `unsent` below).
   */
  private send(slot: number, start = this.recorder.now()): Promise<void> {
    const recorder = this.recorder;
    const s = this.sessionFor(slot);
    const newConnection = s.streams === 0;
    s.streams++;
    /**
     * The HEADERS frame was never written: GOAWAY arrived between request() and the write, and
     * nghttp2 does not start a stream on a connection that got GOAWAY (it reports the frame as not
     * sent). The server never saw this request, so sending it on a fresh connection is what a
     * well-behaved client does (Go's and gRPC's transports do) and is not a retry: nothing the
     * server did is hidden. A stream the server refused or reset is never sent again.
     */
    let unsent = false;
    let recorded = false;
    let status: number | undefined;
    let pod: string | undefined;
    let gateway: string | undefined;
    let stream: ClientHttp2Stream | undefined;
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));

    const record = (outcome: Outcome, error?: string): void => {
      if (recorded) return;
      recorded = true;
      clearTimeout(timer);
      const rec = requestRecord(recorder, { load: this.id, start, outcome, newConnection, path: this.spec.path, service: this.spec.service });
      if (status !== undefined) rec.status = status;
      attributeResponse(rec, pod, gateway);
      const localPort = s.localPort ?? s.session.socket?.localPort;
      if (localPort !== undefined) rec.localPort = localPort;
      if (s.openedAt !== undefined) rec.connectionStart = s.openedAt;
      if (stream?.id !== undefined) rec.streamId = stream.id;
      if (error !== undefined) rec.error = error;
      recorder.request(rec);
      this.count(outcome);
      this.inFlight.delete(entry);
      resolveDone();
    };
    const cancel = (err: Error): void => {
      const c = classifyError(err);
      record(c.outcome, c.error);
      if (stream && !stream.destroyed) stream.close(NGHTTP2_CANCEL);
    };
    const timer = setTimeout(
      () => cancel(harnessError('ZERODROP_TIMEOUT', `no complete response within ${this.spec.timeoutMs} ms`)),
      this.spec.timeoutMs,
    );
    const entry = { cancel, done };
    this.inFlight.add(entry);

    // Why a stream ended without a complete response, in the outcome classes of the harness.
    const failure = (err?: Error): void => {
      if (unsent && s.goaway && !recorded) {
        recorded = true;
        clearTimeout(timer);
        this.inFlight.delete(entry);
        recorder.event('note', {
          message: `load ${this.id}: stream ${stream?.id ?? '?'} was not written before GOAWAY (last stream id ${s.goaway.lastStreamId}); sending it on a fresh connection`,
          detail: { load: this.id, localPort: s.localPort, unsent: true },
        });
        void this.send(slot, start).then(resolveDone);
        return;
      }
      const rst = stream?.rstCode;
      const id = stream?.id;
      if (s.goaway && (id === undefined || id > s.goaway.lastStreamId)) {
        record('goaway', `stream ${id ?? '(unassigned)'} not processed: GOAWAY with last stream id ${s.goaway.lastStreamId}`);
      } else if (rst === NGHTTP2_REFUSED_STREAM) {
        record('refused', `stream ${id} refused (REFUSED_STREAM)`);
      } else if (err) {
        const c = classifyError(err);
        // A session that closed under an open stream is the HTTP/2 form of "socket hang up".
        record(c.outcome === 'error' && (err as { code?: string }).code === 'ERR_HTTP2_STREAM_ERROR' ? 'reset' : c.outcome, c.error);
      } else if (rst !== undefined && rst !== NGHTTP2_NO_ERROR) {
        record('reset', `stream ${id} reset (RST_STREAM code ${rst})`);
      } else {
        record('eof', `stream ${id} closed before a complete response`);
      }
    };

    try {
      stream = s.session.request({ ':method': 'GET', ':path': this.spec.path, 'user-agent': 'zerodrop' }, { endStream: true });
    } catch (err) {
      failure(err instanceof Error ? err : new Error(String(err)));
      return done;
    }
    stream.on('response', (headers) => {
      status = Number(headers[':status']);
      pod = this.names.pod === undefined ? undefined : headerValue(headers[this.names.pod]);
      gateway = this.names.gateway === undefined ? undefined : headerValue(headers[this.names.gateway]);
      const who = gateway ?? pod;
      if (who !== undefined) s.pod = who;
      ownConnectionAnswered(s.record, who);
    });
    // HEADERS (frame type 1) not sent: the request never left this process.
    stream.on('frameError', (type: number) => {
      if (type === 1) unsent = true;
    });
    stream.on('data', () => undefined);
    stream.once('end', () => {
      if (status !== undefined) record(classifyStatus(status, this.spec.okStatus));
    });
    stream.once('error', (err: Error) => failure(err));
    stream.once('close', () => {
      if (!recorded) failure();
    });
    return done;
  }
}

function closeSession(session: ClientHttp2Session): Promise<void> {
  if (session.destroyed || session.closed) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      session.destroy();
      resolve();
    }, 2_000);
    session.close(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}
