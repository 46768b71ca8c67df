// Packet load: long-lived flows of sequence-numbered datagrams, each echoed back by the backend, with
// exact per-flow accounting (sent, received, lost, duplicated, reordered, RTT percentiles) and the
// lost packets kept as ranges of sequence numbers with their send times, so that an assertion can
// say which packets were lost and in which phase of the serving pod (src/assert/no-lost-packets.ts).
//
// Packet format (big endian), shared with fixtures/reference-udp-echo.mjs:
//
//   offset size  field
//   0      4     magic 0x5a445531 ("ZDU1")
//   4      1     type: 1 = sent by the generator, 2 = echoed
//   5      1     length of the pod name the echo wrote at offset 32 (0 in a sent packet)
//   6      2     reserved, 0
//   8      4     load token: random per load, so that stray datagrams of another load are ignored
//   12     4     flow id
//   16     4     sequence number, from 0 in each flow
//   20     8     send time, float64 ms on the run clock
//   28     4     reserved, 0
//   32     ...   padding up to the datagram size; the echo writes its POD_NAME here (UTF-8)
//
// The echo side returns the datagram with type 2 and its pod name, everything else unchanged.
//
// Transports are pluggable. The default sends each flow over its own UDP socket to a Service
// address. A TURN client supplies another FlowTransportFactory (one allocation and channel per flow,
// ChannelData carrying exactly these packets) and gets the same accounting:
//
//   startUdpLoad(id, spec, target, recorder, { transport: myTurnTransport(...) })
//
// The default transport runs in a worker thread of its own (udp-worker.ts) on the run's clock, so that
// tens of thousands of packets per second do not compete with the harness's event loop, which also
// carries the Service load balancers; its records arrive when the load ends.
//
// No retries, by rule: a packet is sent once; a packet whose echo has not arrived `replyTimeoutMs`
// after its send is lost. Every flow is bounded in count and time and stops by itself.

import { sourceAddressFor } from './source-address.ts';
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { Worker } from 'node:worker_threads';

import type { UdpLoadSpec } from '../model/load.ts';
import type { FlowRecord, LossRange, TimelineEvent } from '../model/timeline.ts';
import { dropsSince, readUdpDrops } from '../observe/udp-drops.ts';
import { siblingModule } from '../paths.ts';

export const PACKET_MAGIC = 0x5a445531;
export const PACKET_HEADER_BYTES = 32;
export const PACKET_SENT = 1;
export const PACKET_ECHOED = 2;
/**
 * A packet sent later than this after its scheduled time is `late` (the load was not held). The
 * same bound as harnessResponsive puts on the main event loop, since the generator has a thread of
 * its own: a stall shorter than this shifts a few packets but leaves every one of them accounted.
 */
export const PACKET_LATE_THRESHOLD_MS = 100;
/** Bounds memory: a few bytes of state per packet. */
export const MAX_PACKETS_PER_LOAD = 20_000_000;
const MAX_DATAGRAM_BYTES = 65_507;
const SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;
/** The pacing timer's period: each tick sends every packet that is due. */
const TICK_MS = 1;
/**
 * After the reply time of the last packet, the load keeps its sockets open while echoes are still
 * arriving (none for this long ends the wait), at most STRAGGLER_MAX_MS: an overloaded machine
 * queues echoes for longer than their reply time, and each one counted as a late echo shows that
 * the packet was lost to the machine's queues, not dropped by the system under test.
 */
const STRAGGLER_QUIET_MS = 200;
const STRAGGLER_MAX_MS = 5_000;

export interface PacketFields {
  token: number;
  flow: number;
  seq: number;
  sentAt: number;
}

export interface DecodedPacket extends PacketFields {
  type: number;
  /** The pod that echoed it (type 2). */
  pod?: string;
}

/** A sent packet of `size` bytes (at least the header). */
export function encodePacket(fields: PacketFields, size = PACKET_HEADER_BYTES): Buffer {
  const buf = Buffer.alloc(Math.max(PACKET_HEADER_BYTES, size));
  buf.writeUInt32BE(PACKET_MAGIC, 0);
  buf.writeUInt8(PACKET_SENT, 4);
  buf.writeUInt32BE(fields.token >>> 0, 8);
  buf.writeUInt32BE(fields.flow >>> 0, 12);
  buf.writeUInt32BE(fields.seq >>> 0, 16);
  buf.writeDoubleBE(fields.sentAt, 20);
  return buf;
}

/** The echo of `packet` by `pod`: what fixtures/reference-udp-echo.mjs sends back (for tests and transports). */
export function echoPacket(packet: Buffer, pod: string): Buffer {
  const name = Buffer.from(pod, 'utf8').subarray(0, 255);
  const out = Buffer.alloc(Math.max(packet.length, PACKET_HEADER_BYTES + name.length));
  packet.copy(out);
  out.writeUInt8(PACKET_ECHOED, 4);
  out.writeUInt8(name.length, 5);
  name.copy(out, PACKET_HEADER_BYTES);
  return out;
}

/** Decodes a packet of this format, or undefined when it is not one. */
export function decodePacket(buf: Buffer): DecodedPacket | undefined {
  if (buf.length < PACKET_HEADER_BYTES || buf.readUInt32BE(0) !== PACKET_MAGIC) return undefined;
  const type = buf.readUInt8(4);
  const nameLength = buf.readUInt8(5);
  const packet: DecodedPacket = {
    type,
    token: buf.readUInt32BE(8),
    flow: buf.readUInt32BE(12),
    seq: buf.readUInt32BE(16),
    sentAt: buf.readDoubleBE(20),
  };
  if (type === PACKET_ECHOED && nameLength > 0 && buf.length >= PACKET_HEADER_BYTES + nameLength) {
    packet.pod = buf.toString('utf8', PACKET_HEADER_BYTES, PACKET_HEADER_BYTES + nameLength);
  }
  return packet;
}

/** How one flow's packets travel: a UDP socket by default, a TURN allocation for the TURN client. */
export interface FlowTransport {
  /** Sends one packet of the flow. Must not throw; a send that fails shows up as a lost packet. */
  send(packet: Buffer): void;
  /** Local port the flow's datagrams leave from, when there is one (joins the balancer's flow record). */
  readonly localPort?: number;
  close(): Promise<void> | void;
}

export interface FlowTransportContext {
  flow: number;
  /** Call with every datagram that arrives for the flow (the echoes). */
  onDatagram(packet: Buffer): void;
  signal: AbortSignal;
}

export type FlowTransportFactory = (ctx: FlowTransportContext) => Promise<FlowTransport>;

export interface PacketTarget {
  host: string;
  port: number;
}

/** One UDP socket per flow, bound to an ephemeral port of 127.0.0.1, sending to `target`. */
export function udpTransport(target: PacketTarget): FlowTransportFactory {
  return (ctx) =>
    new Promise((resolve, reject) => {
      const socket = dgram.createSocket('udp4');
      socket.once('error', reject);
      socket.on('message', (msg) => ctx.onDatagram(msg));
      socket.bind({ address: sourceAddressFor(target.host), port: 0 }, () => {
        try {
          socket.setRecvBufferSize(SOCKET_BUFFER_BYTES);
          socket.setSendBufferSize(SOCKET_BUFFER_BYTES);
        } catch {
          // capped by the kernel for unprivileged processes
        }
        // Connected: no per-datagram address handling, and only the target's datagrams arrive.
        socket.connect(target.port, target.host, () => {
          socket.off('error', reject);
          // A connected UDP socket reports ICMP errors (port unreachable) here: the packet is lost, nothing else.
          socket.on('error', () => undefined);
          resolveOpen();
        });
      });
      const resolveOpen = () => {
        let closed = false;
        resolve({
          localPort: socket.address().port,
          send: (packet) => {
            if (!closed) socket.send(packet);
          },
          close: () => {
            if (closed) return;
            closed = true;
            socket.close();
          },
        });
      };
    });
}

/** What a packet load reports when it stops; fits the validity check `loadHeld`. */
export interface PacketLoadSummary {
  load: string;
  mode: 'udp';
  flows: number;
  sent: number;
  received: number;
  lost: number;
  duplicated: number;
  reordered: number;
  late: number;
  startedAt: number;
  stoppedAt: number;
  /** Packets per second asked for, all flows together. */
  targetRate: number;
  /** Packets per second sent, over the time the flows were sending. */
  achievedRate?: number;
  /**
   * Datagrams the kernel dropped at full receive buffers on this load's sockets and the run's
   * (the target's /24: balancer, pods) while it ran; undefined where /proc/net/udp is not readable.
   */
  socketDrops?: number;
}

export interface PacketLoadHandle {
  readonly id: string;
  /** Stops sending, waits up to replyTimeoutMs for echoes in flight, records every flow. */
  stop(): Promise<PacketLoadSummary>;
  /** Resolves once every flow has sent its last packet and its echoes had their time. */
  done: Promise<PacketLoadSummary>;
}

export interface PacketLoadOptions {
  signal?: AbortSignal;
  /** Defaults to udpTransport(target). */
  transport?: FlowTransportFactory;
  /**
   * Where the default UDP transport runs: `worker` (default) is a worker thread of its own, so that
   * sending and receiving tens of thousands of packets per second does not compete with the
   * harness's event loop (which watches its own lag and schedules the chaos); `main` is this thread. A
   * custom transport always runs on this thread.
   */
  thread?: 'worker' | 'main';
}

/** What the packet load records into: the run's Recorder, or a stand-in in a worker thread. */
export interface PacketRecorder {
  now(): number;
  flow(record: FlowRecord): void;
  event(kind: 'note', fields: Omit<TimelineEvent, 't' | 'kind'> & { t?: number }): unknown;
  /** The run clock's absolute origin, when a worker thread may share the clock. */
  readonly clock?: { readonly origin: number };
}

export function validateUdpLoad(spec: UdpLoadSpec): void {
  const positive = (name: string, v: number) => {
    if (!Number.isFinite(v) || v <= 0) throw new RangeError(`udp load spec: ${name} must be a positive number, got ${v}`);
  };
  if (!Number.isInteger(spec.flows) || spec.flows < 1 || spec.flows > 10_000) {
    throw new RangeError(`udp load spec: flows must be an integer in [1, 10000], got ${spec.flows}`);
  }
  positive('ratePerFlow', spec.ratePerFlow);
  positive('durationMs', spec.durationMs);
  positive('replyTimeoutMs', spec.replyTimeoutMs);
  if (!Number.isInteger(spec.payloadBytes) || spec.payloadBytes < PACKET_HEADER_BYTES || spec.payloadBytes > MAX_DATAGRAM_BYTES) {
    throw new RangeError(`udp load spec: payloadBytes must be an integer in [${PACKET_HEADER_BYTES}, ${MAX_DATAGRAM_BYTES}], got ${spec.payloadBytes}`);
  }
  const total = spec.flows * packetsPerFlow(spec);
  if (total > MAX_PACKETS_PER_LOAD) throw new RangeError(`udp load spec: ${total} packets exceed the bound of ${MAX_PACKETS_PER_LOAD}`);
}

function packetsPerFlow(spec: UdpLoadSpec): number {
  return Math.max(1, Math.floor((spec.durationMs * spec.ratePerFlow) / 1000));
}

export function startUdpLoad(
  id: string,
  spec: UdpLoadSpec,
  target: PacketTarget,
  recorder: PacketRecorder,
  opts: PacketLoadOptions = {},
): PacketLoadHandle {
  validateUdpLoad(spec);
  if (opts.transport === undefined && opts.thread !== 'main' && recorder.clock !== undefined) {
    return new ThreadedPacketLoad(id, spec, target, recorder, recorder.clock.origin, opts.signal);
  }
  const load = new PacketLoad(id, spec, recorder, opts.transport ?? udpTransport(target), target, opts.signal);
  load.start();
  return load;
}

/** Percentile by nearest rank over sorted values. */
function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank] ?? Number.NaN;
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

class Flow {
  readonly index: number;
  readonly total: number;
  readonly offsetMs: number;
  transport?: FlowTransport;
  next = 0;
  late = 0;
  duplicated = 0;
  reordered = 0;
  received = 0;
  lateEchoes = 0;
  maxSeq = -1;
  readonly sentAt: Float64Array;
  readonly echoes: Uint8Array;
  /** 1 once a too-late echo of the packet arrived (it stays lost). */
  readonly tooLate: Uint8Array;
  readonly rtt: Float64Array;
  readonly pods = new Map<string, { first: number; last: number; count: number }>();
  podOrder: string[] = [];
  /** The last pod name seen, as bytes and as text: a flow's echoes nearly always come from one pod. */
  private lastPodBytes: Buffer | undefined;
  private lastPod: string | undefined;

  constructor(index: number, total: number, offsetMs: number) {
    this.index = index;
    this.total = total;
    this.offsetMs = offsetMs;
    this.sentAt = new Float64Array(total);
    this.echoes = new Uint8Array(total);
    this.tooLate = new Uint8Array(total);
    this.rtt = new Float64Array(total);
  }

  /** The pod name an echo carries (as decodePacket reads it), decoded only when it differs from the last one. */
  podOf(buf: Buffer): string | undefined {
    const length = buf[5] ?? 0;
    if (length === 0 || buf.length < PACKET_HEADER_BYTES + length) return undefined;
    const last = this.lastPodBytes;
    if (last !== undefined && last.length === length && buf.compare(last, 0, length, PACKET_HEADER_BYTES, PACKET_HEADER_BYTES + length) === 0) return this.lastPod;
    this.lastPodBytes = Buffer.from(buf.subarray(PACKET_HEADER_BYTES, PACKET_HEADER_BYTES + length));
    this.lastPod = this.lastPodBytes.toString('utf8');
    return this.lastPod;
  }
}

class PacketLoad implements PacketLoadHandle {
  readonly id: string;
  readonly done: Promise<PacketLoadSummary>;
  private readonly spec: UdpLoadSpec;
  private readonly recorder: PacketRecorder;
  private readonly factory: FlowTransportFactory;
  private readonly token = randomBytes(4).readUInt32BE(0);
  private readonly intervalMs: number;
  private readonly abort = new AbortController();
  private readonly flows: Flow[] = [];
  private timer?: NodeJS.Timeout;
  private startedAt = 0;
  private sendingStart = 0;
  private lastSend = 0;
  /** Run-clock time the last echo of this load arrived, in time or not. */
  private lastEchoAt = 0;
  private stopping = false;
  private summary?: Promise<PacketLoadSummary>;
  private resolveDone!: (s: PacketLoadSummary) => void;
  private rejectDone!: (e: unknown) => void;
  private readonly ready: Promise<void>;
  private resolveReady!: () => void;
  private readonly target: PacketTarget;
  private dropsBefore?: Map<string, number>;

  constructor(id: string, spec: UdpLoadSpec, recorder: PacketRecorder, factory: FlowTransportFactory, target: PacketTarget, signal?: AbortSignal) {
    this.id = id;
    this.target = target;
    this.spec = spec;
    this.recorder = recorder;
    this.factory = factory;
    this.intervalMs = 1000 / spec.ratePerFlow;
    this.done = new Promise((resolve, reject) => {
      this.resolveDone = resolve;
      this.rejectDone = reject;
    });
    this.done.catch(() => undefined);
    this.ready = new Promise((resolve) => (this.resolveReady = resolve));
    const total = packetsPerFlow(spec);
    // Flows are spread evenly over one packet interval so that the load is smooth, not bursts.
    for (let i = 0; i < spec.flows; i++) this.flows.push(new Flow(i, total, (i * this.intervalMs) / spec.flows));
    if (signal) {
      if (signal.aborted) this.abort.abort(signal.reason);
      else signal.addEventListener('abort', () => this.abort.abort(signal.reason), { once: true });
    }
    this.abort.signal.addEventListener('abort', () => void this.stop(), { once: true });
  }

  start(): void {
    this.startedAt = this.recorder.now();
    void this.open().then(
      () => {
        this.dropsBefore = this.readDrops();
        this.resolveReady();
        if (this.stopping) return;
        this.sendingStart = this.recorder.now();
        this.tick();
      },
      (err: unknown) => {
        this.resolveReady();
        this.stopping = true;
        void this.closeTransports();
        this.rejectDone(err);
      },
    );
  }

  stop(): Promise<PacketLoadSummary> {
    this.summary ??= this.finish();
    return this.summary;
  }

  private async open(): Promise<void> {
    await Promise.all(
      this.flows.map(async (flow) => {
        flow.transport = await this.factory({
          flow: flow.index,
          onDatagram: (packet) => this.onEcho(flow, packet),
          signal: this.abort.signal,
        });
      }),
    );
  }

  private tick(): void {
    this.timer = undefined;
    if (this.stopping) return;
    const now = this.recorder.now();
    const elapsed = now - this.sendingStart;
    let remaining = false;
    for (const flow of this.flows) {
      const transport = flow.transport;
      if (!transport) continue;
      while (flow.next < flow.total) {
        const scheduled = flow.offsetMs + flow.next * this.intervalMs;
        if (scheduled > elapsed) break;
        const seq = flow.next++;
        const sentAt = this.recorder.now();
        if (sentAt - this.sendingStart - scheduled > PACKET_LATE_THRESHOLD_MS) flow.late++;
        flow.sentAt[seq] = sentAt;
        transport.send(encodePacket({ token: this.token, flow: flow.index, seq, sentAt }, this.spec.payloadBytes));
        this.lastSend = sentAt;
      }
      if (flow.next < flow.total) remaining = true;
    }
    if (remaining) {
      this.timer = setTimeout(() => this.tick(), TICK_MS);
      return;
    }
    // Every packet is out: give the last ones their reply time, then the load is done.
    this.timer = setTimeout(() => void this.stop(), this.spec.replyTimeoutMs);
  }

  private onEcho(flow: Flow, buf: Buffer): void {
    const now = this.recorder.now();
    // Read in place rather than through decodePacket: this runs for every echo, up to 100,000 a second.
    if (buf.length < PACKET_HEADER_BYTES || buf.readUInt32BE(0) !== PACKET_MAGIC || buf[4] !== PACKET_ECHOED) return;
    if (buf.readUInt32BE(8) !== this.token || buf.readUInt32BE(12) !== flow.index) return;
    const seq = buf.readUInt32BE(16);
    if (seq >= flow.next) return;
    this.lastEchoAt = now;
    const sentAt = flow.sentAt[seq] ?? 0;
    // Too late is lost: the flow's peer gave up on it (a media stream plays on without it). It is
    // counted, so that a loss to an overloaded machine's queues can be told from a dropped packet.
    if (now - sentAt > this.spec.replyTimeoutMs) {
      if ((flow.echoes[seq] ?? 0) === 0 && (flow.tooLate[seq] ?? 0) === 0) {
        flow.tooLate[seq] = 1;
        flow.lateEchoes++;
      }
      return;
    }
    const echoes = flow.echoes[seq] ?? 0;
    if (echoes > 0) {
      flow.duplicated++;
      if (echoes < 255) flow.echoes[seq] = echoes + 1;
      return;
    }
    flow.echoes[seq] = 1;
    flow.received++;
    flow.rtt[seq] = now - sentAt;
    if (seq < flow.maxSeq) flow.reordered++;
    else flow.maxSeq = seq;
    const pod = flow.podOf(buf);
    if (pod !== undefined) {
      const seen = flow.pods.get(pod);
      if (seen) {
        seen.count++;
        if (sentAt < seen.first) seen.first = sentAt;
        if (sentAt > seen.last) seen.last = sentAt;
      } else {
        flow.pods.set(pod, { first: sentAt, last: sentAt, count: 1 });
        flow.podOrder.push(pod);
      }
    }
  }

  private async finish(): Promise<PacketLoadSummary> {
    await this.ready;
    const wasStopping = this.stopping;
    this.stopping = true;
    if (this.timer) clearTimeout(this.timer);
    // Stopped early: packets already sent still get their reply time, unless the run was aborted.
    if (!wasStopping && !this.abort.signal.aborted && this.lastSend > 0) {
      const wait = this.lastSend + this.spec.replyTimeoutMs - this.recorder.now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    }
    if (!this.abort.signal.aborted && this.lastSend > 0) {
      const until = this.recorder.now() + STRAGGLER_MAX_MS;
      while (this.recorder.now() - this.lastEchoAt < STRAGGLER_QUIET_MS && this.recorder.now() < until) {
        await new Promise((resolve) => setTimeout(resolve, STRAGGLER_QUIET_MS / 4));
      }
    }
    const socketDrops = dropsSince(this.dropsBefore, this.readDrops());
    await this.closeTransports();
    const stoppedAt = this.recorder.now();
    const summary: PacketLoadSummary = {
      load: this.id,
      mode: 'udp',
      flows: this.flows.length,
      sent: 0,
      received: 0,
      lost: 0,
      duplicated: 0,
      reordered: 0,
      late: 0,
      startedAt: this.startedAt,
      stoppedAt,
      targetRate: this.spec.ratePerFlow * this.spec.flows,
      ...(socketDrops !== undefined ? { socketDrops } : {}),
    };
    if (socketDrops !== undefined) {
      this.recorder.event('note', {
        message: `load ${this.id}: the kernel dropped ${socketDrops} datagram(s) at full socket receive buffers`,
        detail: { load: this.id, udpSocketDrops: socketDrops },
      });
    }
    for (const flow of this.flows) {
      const record = this.record(flow);
      this.recorder.flow(record);
      summary.sent += record.sent;
      summary.received += record.received;
      summary.lost += record.lost;
      summary.duplicated += record.duplicated;
      summary.reordered += record.reordered;
      summary.late += record.late;
    }
    const sendingMs = this.lastSend - this.sendingStart;
    if (summary.sent > 1 && sendingMs > 0) {
      // Rate over the sending window: n packets span n - 1 intervals.
      summary.achievedRate = round3(((summary.sent - this.flows.length) * 1000) / sendingMs);
    }
    this.resolveDone(summary);
    return summary;
  }

  /** Drop counters of the flows' own sockets and of every socket in the target's /24 (the run's block). */
  private readDrops(): Map<string, number> | undefined {
    const ports = new Set(this.flows.map((f) => f.transport?.localPort).filter((p) => p !== undefined));
    const block = this.target.host.split('.').slice(0, 3).join('.');
    return readUdpDrops((ip, port) => ip.startsWith(`${block}.`) || (ip === '127.0.0.1' && ports.has(port)));
  }

  private async closeTransports(): Promise<void> {
    await Promise.all(this.flows.map(async (f) => f.transport?.close()));
  }

  private record(flow: Flow): FlowRecord {
    const sent = flow.next;
    const losses: LossRange[] = [];
    let current: LossRange | undefined;
    for (let seq = 0; seq < sent; seq++) {
      if ((flow.echoes[seq] ?? 0) > 0) {
        current = undefined;
        continue;
      }
      const t = flow.sentAt[seq] ?? 0;
      if (current && current.to === seq - 1) {
        current.to = seq;
        current.lastSentAt = t;
      } else {
        current = { from: seq, to: seq, firstSentAt: t, lastSentAt: t };
        losses.push(current);
      }
    }
    const rtts = new Float64Array(flow.received);
    let k = 0;
    for (let seq = 0; seq < sent; seq++) if ((flow.echoes[seq] ?? 0) > 0) rtts[k++] = flow.rtt[seq] ?? 0;
    rtts.sort();
    const record: FlowRecord = {
      load: this.id,
      flow: flow.index,
      start: sent > 0 ? (flow.sentAt[0] ?? 0) : this.startedAt,
      end: sent > 0 ? (flow.sentAt[sent - 1] ?? 0) : this.startedAt,
      sent,
      received: flow.received,
      lost: sent - flow.received,
      duplicated: flow.duplicated,
      reordered: flow.reordered,
      late: flow.late,
      ...(flow.lateEchoes > 0 ? { lateEchoes: flow.lateEchoes } : {}),
      pods: flow.podOrder.map((pod) => ({ pod, ...(flow.pods.get(pod) ?? { first: 0, last: 0, count: 0 }) })),
      losses,
    };
    if (flow.transport?.localPort !== undefined) record.localPort = flow.transport.localPort;
    if (rtts.length > 0) {
      record.rttMs = {
        p50: round3(percentile(rtts, 50)),
        p90: round3(percentile(rtts, 90)),
        p99: round3(percentile(rtts, 99)),
        max: round3(rtts[rtts.length - 1] ?? 0),
      };
    }
    return record;
  }
}

/** What the worker thread (udp-worker.ts) is given and sends back. */
export interface PacketWorkerData {
  id: string;
  spec: UdpLoadSpec;
  target: PacketTarget;
  origin: number;
}

export type PacketWorkerResult =
  | { summary: PacketLoadSummary; flows: FlowRecord[]; events: (Omit<TimelineEvent, 'kind'> & { kind: 'note' })[] }
  | { error: string };

/** The default UDP transport's load in a worker thread, on the same run clock; records arrive when it ends. */
class ThreadedPacketLoad implements PacketLoadHandle {
  readonly id: string;
  readonly done: Promise<PacketLoadSummary>;
  private readonly worker: Worker;

  constructor(id: string, spec: UdpLoadSpec, target: PacketTarget, recorder: PacketRecorder, origin: number, signal?: AbortSignal) {
    this.id = id;
    const data: PacketWorkerData = { id, spec, target, origin };
    this.worker = new Worker(siblingModule('udp-worker', import.meta.url), { workerData: data });
    this.done = new Promise<PacketLoadSummary>((resolve, reject) => {
      this.worker.once('message', (result: PacketWorkerResult) => {
        void this.worker.terminate();
        if ('error' in result) {
          reject(new Error(`udp load ${id}: ${result.error}`));
          return;
        }
        for (const flow of result.flows) recorder.flow(flow);
        for (const { kind, ...fields } of result.events) recorder.event(kind, fields);
        resolve(result.summary);
      });
      this.worker.once('error', reject);
      this.worker.once('exit', (code) => reject(new Error(`udp load ${id}: worker exited (${code}) before reporting`)));
    });
    this.done.catch(() => undefined);
    if (signal) {
      const abort = () => this.worker.postMessage('abort');
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
    }
  }

  stop(): Promise<PacketLoadSummary> {
    this.worker.postMessage('stop');
    return this.done;
  }
}
