// gRPC load generator on @grpc/grpc-js, cleartext HTTP/2, to the service of fixtures/drain.proto:
// unary calls and server-streaming calls whose messages are numbered, so that a lost, duplicated or
// reordered message shows. The library, not hand-made framing: what is measured is how a real gRPC
// client fares (its channel, its reaction to GOAWAY), and proto-loader reads the same .proto as the
// reference server, so that client and server cannot drift.
//
// Each channel is told explicitly what it may do on its own (docs/scenarios.md, "The grpc load"):
// - `grpc.enable_retries: 0`: no retry, not even grpc-js's transparent retry of a call the server
//   refused; such a call is recorded with the status it got. One case only is sent again, by the
//   load, as the h2c load does: a call whose HEADERS were never written, because a GOAWAY reached
//   the client between grpc-js starting the call and nghttp2 writing it (nghttp2 then reports it
//   refused). The server never saw it, so sending it on a fresh connection hides nothing; a gRPC
//   client's transparent retry does the same.
// - `grpc.use_local_subchannel_pool: 1`: each channel has its own connection, not one shared by
//   every channel of the process, so that channels spread over the Service's pods.
// - After GOAWAY (or a dropped connection) a channel goes idle and its next call opens a new
//   connection, which the Service's balancer routes to a pod still programmed: that call is a new
//   call with its own record, sent once, as a gRPC client does; nothing is sent again.
//
// grpc-js shows no GOAWAY and no socket, so the load watches node:http2's diagnostics channel for
// the streams it creates (tagged by a metadata header of this load), and from each stream's session
// learns its local port (joining the call to the balancer's connection record, as the HTTP loads do)
// and any GOAWAY, recorded as a `goaway` event like the h2c load's. The pod that served a call is
// named by its response metadata (`x-zerodrop-pod`, a profile's attribution header); behind a
// gateway, the gateway pod by its own (`x-zerodrop-gateway`), and that pod is the call's.

import diagnostics from 'node:diagnostics_channel';
import type { ClientHttp2Stream, Http2Session, IncomingHttpHeaders } from 'node:http2';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import type { GrpcLoadSpec } from '../model/load.ts';
import type { Outcome, StreamEnding, StreamRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import { packageRoot } from '../paths.ts';
import { attributeResponse, type HttpLoadOptions, type LoadSummary, type LoadTarget, type LoadHandle } from './http.ts';
import { DEFAULT_NAME_HEADERS } from './http1-response.ts';
import { recordGoaway, type Goaway } from './http2.ts';
import { nextDue, RequestLoad, requestRecord } from './request-load.ts';
import { recordOwnStream, type OwnConnections } from './own-connection.ts';

export const GRPC_PROTO = 'fixtures/drain.proto';
const SERVICE = 'zerodrop.drain.v1.Drain';
/** Metadata that ties an HTTP/2 stream seen on the diagnostics channel to this load's call. */
const LOAD_HEADER = 'x-zerodrop-load';
const CALL_HEADER = 'x-zerodrop-call';
const STREAM_CREATED = 'http2.client.stream.created';
const HEADERS_FRAME = 1;
const MAX_CHANNELS = 1_000;
const MAX_STREAMS = 10_000;
const CONNECT_WAIT_MS = 2_000;

const CHANNEL_OPTIONS: grpc.ChannelOptions = {
  'grpc.enable_retries': 0,
  'grpc.use_local_subchannel_pool': 1,
};

let loads = 0;

interface Methods {
  unary: grpc.MethodDefinition<{ delayMs: number }, { pod: string }>;
  stream: grpc.MethodDefinition<{ messages: number; intervalMs: number }, { seq: number; pod: string }>;
}

let methods: Methods | undefined;

function loadMethods(): Methods {
  if (methods) return methods;
  const definition = protoLoader.loadSync(join(packageRoot, GRPC_PROTO), { defaults: true });
  const service = definition[SERVICE] as grpc.ServiceDefinition | undefined;
  if (!service?.['Unary'] || !service['Stream']) throw new Error(`${GRPC_PROTO}: no service ${SERVICE} with Unary and Stream`);
  methods = { unary: service['Unary'] as Methods['unary'], stream: service['Stream'] as Methods['stream'] };
  return methods;
}

/** What a call's HTTP/2 connection told us. */
interface SessionInfo {
  localPort?: number;
  calls: number;
  goaway?: Goaway;
  /** The pod that answered on it last (gateway first). */
  pod?: string;
}

/** Who answered a call: the backend pod, and the gateway pod in front of it. */
interface Answered {
  pod?: string;
  gateway?: string;
}

/** What the diagnostics channel told us about one call. */
interface CallWire {
  stream?: ClientHttp2Stream;
  session?: SessionInfo;
  newConnection: boolean;
  /** Its HEADERS frame was never written: the server never saw the call. */
  unsent?: boolean;
}

/** The outcome class of a gRPC status; `goaway` when the server refused a stream its GOAWAY did not cover. */
export function grpcOutcome(code: grpc.status, details: string, afterGoaway: boolean): Outcome {
  switch (code) {
    case grpc.status.OK:
      return 'ok';
    case grpc.status.DEADLINE_EXCEEDED:
      return 'timeout';
    case grpc.status.UNAVAILABLE:
      if (/ECONNREFUSED/.test(details)) return 'refused';
      return afterGoaway && /refused/i.test(details) ? 'goaway' : 'reset';
    default:
      return 'error';
  }
}

export function grpcStatusName(code: grpc.status): string {
  return grpc.status[code] ?? String(code);
}

const STREAM_ENDINGS: Partial<Record<Outcome, StreamEnding>> = { refused: 'refused', reset: 'reset', goaway: 'reset', timeout: 'stall' };

export function startGrpcLoad(id: string, spec: GrpcLoadSpec, target: LoadTarget, recorder: Recorder, opts: HttpLoadOptions = {}): LoadHandle {
  const count = (name: string, v: number, max: number, min = 0) => {
    if (!Number.isInteger(v) || v < min || v > max) throw new RangeError(`grpc load spec: ${name} must be an integer in [${min}, ${max}], got ${v}`);
  };
  count('channels', spec.channels, MAX_CHANNELS, 1);
  count('streams', spec.streams, MAX_STREAMS);
  count('messagesPerStream', spec.messagesPerStream, 1_000_000, 1);
  count('unaryMs', spec.unaryMs, 600_000);
  count('messageIntervalMs', spec.messageIntervalMs, 60_000, 1);
  if (!(spec.unaryRatePerChannel > 0)) throw new RangeError(`grpc load spec: unaryRatePerChannel must be positive, got ${spec.unaryRatePerChannel}`);
  if (!(spec.timeoutMs > 0)) throw new RangeError(`grpc load spec: timeoutMs must be positive, got ${spec.timeoutMs}`);
  const load = new GrpcLoad(id, spec, target, recorder, opts);
  load.start();
  return load;
}

class GrpcLoad extends RequestLoad {
  private readonly spec: GrpcLoadSpec;
  private readonly methods = loadMethods();
  private readonly channels: grpc.Client[];
  private readonly tag = `${process.pid}-${++loads}`;
  private readonly podHeader: string | undefined;
  private readonly gatewayHeader: string | undefined;
  private readonly clientConnections: OwnConnections | undefined;
  private readonly wires = new Map<number, CallWire>();
  private readonly sessions = new WeakMap<Http2Session, SessionInfo>();
  private readonly openStreams = new Set<grpc.ClientReadableStream<unknown>>();
  private calls = 0;
  private streamsOpened = 0;

  constructor(id: string, spec: GrpcLoadSpec, target: LoadTarget, recorder: Recorder, opts: HttpLoadOptions) {
    super(id, target, recorder, opts);
    this.spec = spec;
    this.podHeader = (opts.names ?? DEFAULT_NAME_HEADERS).pod;
    this.gatewayHeader = (opts.names ?? DEFAULT_NAME_HEADERS).gateway;
    this.clientConnections = opts.clientConnections;
    const address = `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
    this.channels = Array.from({ length: spec.channels }, () => new grpc.Client(address, grpc.credentials.createInsecure(), CHANNEL_OPTIONS));
  }

  protected schedule(): void {
    diagnostics.subscribe(STREAM_CREATED, this.onStreamCreated);
    this.loops.push(this.run());
  }

  /**
   * Every channel connects before the first call, and the rate the load must hold is counted from
   * then: a grpc-js channel's first connection takes tens of milliseconds (more on a busy machine),
   * which on a run of a few seconds cost the closed loops 2 to 3 % of their calls. A channel that
   * cannot connect within CONNECT_WAIT_MS starts anyway: its calls fail on the record.
   */
  private async run(): Promise<void> {
    const deadline = Date.now() + CONNECT_WAIT_MS;
    await Promise.all(this.channels.map((channel) => new Promise<void>((resolve) => channel.waitForReady(deadline, () => resolve()))));
    if (this.stopping) return;
    this.startedAt = this.recorder.now();
    const loops: Promise<void>[] = [];
    for (let c = 0; c < this.spec.channels; c++) loops.push(this.unaryLoop(c));
    const streamMs = this.spec.messagesPerStream * this.spec.messageIntervalMs;
    for (let s = 0; s < this.spec.streams; s++) {
      const firstAfterMs = this.spec.spreadFirstStreams === true ? (s * streamMs) / this.spec.streams : 0;
      loops.push(this.streamLoop(s % this.spec.channels, firstAfterMs));
    }
    await Promise.all(loops);
  }

  /** Open streams are ended by the load: what they received so far is their record. */
  protected override onSchedulingEnd(): void {
    for (const call of this.openStreams) call.cancel();
  }

  protected closeConnections(): Promise<void> {
    diagnostics.unsubscribe(STREAM_CREATED, this.onStreamCreated);
    for (const channel of this.channels) channel.close();
    return Promise.resolve();
  }

  protected summary(stoppedAt: number): LoadSummary {
    const summary = this.baseSummary('closed', stoppedAt, 0);
    summary.targetRate = this.spec.unaryRatePerChannel * this.spec.channels;
    const rate = this.achievedRate(stoppedAt);
    if (rate !== undefined) summary.achievedRate = rate;
    return summary;
  }

  private readonly onStreamCreated = (message: unknown): void => {
    const { stream, headers } = message as { stream: ClientHttp2Stream; headers: IncomingHttpHeaders };
    if (headers[LOAD_HEADER] !== this.tag) return;
    const wire = this.wires.get(Number(headers[CALL_HEADER]));
    if (!wire) return;
    wire.stream = stream;
    stream.on('frameError', (type: number) => {
      if (type === HEADERS_FRAME) wire.unsent = true;
    });
    const session = stream.session;
    if (!session) return;
    let info = this.sessions.get(session);
    if (!info) {
      const fresh: SessionInfo = { calls: 0, ...(session.socket?.localPort !== undefined ? { localPort: session.socket.localPort } : {}) };
      info = fresh;
      this.sessions.set(session, fresh);
      session.on('goaway', (errorCode: number, lastStreamId: number) => recordGoaway(this.recorder, this.id, fresh, errorCode, lastStreamId));
    }
    wire.newConnection = info.calls === 0;
    info.calls++;
    wire.session = info;
  };

  /** A fresh call id, its tagging metadata, and where the diagnostics channel will say what it learned. */
  private newCall(): { n: number; metadata: grpc.Metadata; wire: CallWire } {
    const n = ++this.calls;
    const metadata = new grpc.Metadata();
    metadata.set(LOAD_HEADER, this.tag);
    metadata.set(CALL_HEADER, String(n));
    const wire: CallWire = { newConnection: false };
    this.wires.set(n, wire);
    return { n, metadata, wire };
  }

  /** Whether the call failed without ever leaving the client; if so it is noted, to be sent again. */
  private unsent(n: number, status: grpc.StatusObject, wire: CallWire): boolean {
    // A HEADERS frame can also go unwritten because the connection died: that call fails on the record.
    if (status.code === grpc.status.OK || wire.unsent !== true || wire.session?.goaway === undefined) return false;
    this.recorder.event('note', {
      message: `load ${this.id}: call ${n} was not written before GOAWAY (${grpcStatusName(status.code)}: ${status.details}); sending it on a fresh connection`,
      detail: { load: this.id, localPort: wire.session?.localPort, unsent: true },
    });
    return true;
  }

  private answeredBy(metadata: grpc.Metadata, wire: CallWire): Answered {
    const named = (header: string | undefined) => {
      const value = header === undefined ? undefined : metadata.get(header)[0];
      return typeof value === 'string' ? value : undefined;
    };
    const pod = named(this.podHeader);
    const gateway = named(this.gatewayHeader);
    const who = gateway ?? pod;
    if (who !== undefined && wire.session) wire.session.pod = who;
    return { ...(pod !== undefined ? { pod } : {}), ...(gateway !== undefined ? { gateway } : {}) };
  }

  private async unaryLoop(channel: number): Promise<void> {
    const interval = 1000 / this.spec.unaryRatePerChannel;
    // Channels start spread over one interval, so that they do not call in lockstep.
    let due = this.recorder.now() + Math.random() * interval;
    while (this.mayStart()) {
      const wait = due - this.recorder.now();
      if (wait > 0) await this.sleepers.sleep(wait);
      if (!this.mayStart()) return;
      this.sent++;
      await this.unary(channel);
      due = nextDue(due, interval, this.recorder.now());
    }
  }

  /** One unary call, recorded as a request. Never rejects. `start` is the first attempt's for a call that was never written. */
  private unary(channel: number, start = this.recorder.now()): Promise<void> {
    const { n, metadata, wire } = this.newCall();
    const method = this.methods.unary;
    let answered: Answered = {};
    let resolveDone!: () => void;
    const done = new Promise<void>((resolve) => (resolveDone = resolve));
    const call = this.channels[channel]!.makeUnaryRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      { delayMs: this.spec.unaryMs },
      metadata,
      { deadline: Date.now() + this.spec.unaryMs + this.spec.timeoutMs },
      () => undefined,
    );
    const entry = { cancel: () => call.cancel(), done };
    this.inFlight.add(entry);
    call.on('metadata', (md) => (answered = this.answeredBy(md, wire)));
    call.on('status', (status: grpc.StatusObject) => {
      this.wires.delete(n);
      this.inFlight.delete(entry);
      if (this.unsent(n, status, wire)) {
        void this.unary(channel, start).then(resolveDone);
        return;
      }
      const afterGoaway = wire.session?.goaway !== undefined;
      const outcome = grpcOutcome(status.code, status.details, afterGoaway);
      const rec = requestRecord(this.recorder, { load: this.id, start, outcome, newConnection: wire.newConnection, path: method.path, service: this.spec.service });
      attributeResponse(rec, answered.pod, answered.gateway);
      if (wire.session?.localPort !== undefined) rec.localPort = wire.session.localPort;
      if (wire.stream?.id !== undefined) rec.streamId = wire.stream.id;
      if (outcome !== 'ok') rec.error = `${grpcStatusName(status.code)}: ${status.details}`;
      this.recorder.request(rec);
      this.count(outcome);
      resolveDone();
    });
    return done;
  }

  private async streamLoop(channel: number, firstAfterMs: number): Promise<void> {
    if (firstAfterMs > 0) await this.sleepers.sleep(firstAfterMs);
    // A stream that ends at once (refused, or ended by a draining pod) is followed by the next one no
    // sooner than one message interval later: no tight loop against a pod that has nothing to give.
    while (!this.stopping) {
      const startedAt = this.recorder.now();
      await this.stream(channel);
      const wait = startedAt + this.spec.messageIntervalMs - this.recorder.now();
      if (wait > 0 && !this.stopping) await this.sleepers.sleep(wait);
    }
  }

  /** One server-streaming call, recorded as a stream. Never rejects. */
  private stream(channel: number): Promise<void> {
    const { n, metadata, wire } = this.newCall();
    const method = this.methods.stream;
    const expected = this.spec.messagesPerStream;
    const now = this.recorder.now();
    const record: StreamRecord = { load: this.id, service: this.spec.service, stream: ++this.streamsOpened, start: now, end: now, ending: 'error', sent: 0, echoed: 0, unanswered: 0, mismatched: 0, expected };
    const call = this.channels[channel]!.makeServerStreamRequest(
      method.path,
      method.requestSerialize,
      method.responseDeserialize,
      { messages: expected, intervalMs: this.spec.messageIntervalMs },
      metadata,
      { deadline: Date.now() + expected * this.spec.messageIntervalMs + this.spec.timeoutMs },
    );
    this.openStreams.add(call);
    return new Promise<void>((resolve) => {
      call.on('metadata', (md: grpc.Metadata) => {
        const { pod, gateway } = this.answeredBy(md, wire);
        if (pod !== undefined) record.pod = pod;
        if (gateway !== undefined) record.gateway = gateway;
      });
      call.on('data', (message: { seq: number }) => {
        record.sent++;
        record.lastEchoAt = this.recorder.now();
        if (message.seq === record.echoed + 1) record.echoed++;
        else record.mismatched++;
      });
      // The status event carries the outcome; the error event repeats it for a non-OK status.
      call.on('error', () => undefined);
      call.on('status', (status: grpc.StatusObject) => {
        this.openStreams.delete(call);
        this.wires.delete(n);
        if (this.unsent(n, status, wire)) {
          void this.stream(channel).then(resolve);
          return;
        }
        record.end = this.recorder.now();
        record.status = grpcStatusName(status.code);
        if (wire.session?.localPort !== undefined) record.localPort = wire.session.localPort;
        const goaway = wire.session?.goaway;
        if (goaway !== undefined && goaway.t <= record.end) record.byeAt = goaway.t;
        if (status.code === grpc.status.OK) {
          record.ending = 'closed';
        } else if (status.code === grpc.status.CANCELLED && this.stopping) {
          record.ending = 'stopped';
        } else {
          record.ending = STREAM_ENDINGS[grpcOutcome(status.code, status.details, goaway !== undefined)] ?? 'error';
          record.unanswered = Math.max(0, expected - record.sent);
          record.error = `${record.status}: ${status.details}`;
        }
        this.recorder.stream(record);
        recordOwnStream(this.recorder, this.clientConnections, record);
        resolve();
      });
    });
  }
}
