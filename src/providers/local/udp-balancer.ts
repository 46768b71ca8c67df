// The UDP side of a Service's load balancer: one datagram socket per UDP ServicePort and a flow
// table with the semantics of kube-proxy over the kernel's connection tracking.
//
// - A flow is the client's address and port (with the Service's address and port, the 5-tuple).
//   Its first datagram picks a pod the way a new TCP connection does (ready endpoints first, then
//   serving-and-terminating ones, KEP-1669); every later datagram of the flow goes to the same pod,
//   because conntrack keeps the DNAT decision of the first packet for the whole flow.
// - An entry expires after a period without datagrams: nf_conntrack_udp_timeout (30 s) while the
//   flow has seen no reply, nf_conntrack_udp_timeout_stream (120 s) once it has
//   (https://docs.kernel.org/networking/nf_conntrack-sysctl.html). The next datagram is a new flow.
// - kube-proxy clears the UDP conntrack entries of every endpoint that is no longer serving,
//   removed or not ready, and deliberately keeps those of serving terminating endpoints, "so that
//   the behavior of UDP services remains consistent with TCP services" (pkg/proxy/conntrack/
//   cleanup.go, CleanStaleEntries). Without that, a flow to a dead pod would be blackholed until it
//   idled out. `flush()` does the same from the balancer's programmed view: the flow's next datagram
//   is a new flow and goes to a pod that is routed now.
// - A datagram that arrives while the Service has no endpoint is dropped (kube-proxy REJECTs it);
//   the drops of one client are recorded as one `no-endpoint` flow until an endpoint appears.
//
// Replies from the pod leave through the Service's own socket, so the client sees them come from
// the address it sent to, as it does through conntrack's reverse NAT.
//
// The packet path runs in a worker thread per ServicePort (udp-balancer-worker.ts): at tens of
// thousands of datagrams per second on the harness's event loop, the loop lags and the Service
// socket overflows, and the run can only be inconclusive. This class is the main thread's side: it
// sends the worker the balancer's routing (what `pick` chooses from, with the Service's one round
// robin, round-robin.ts) and flushes, and keeps the UdpFlowRecords on the Recorder. A live flow's
// counters and last-datagram time are read from memory the worker writes, so a record is current
// whenever it is read; its times are converted to the run clock.

import { receiveMessageOnPort, MessageChannel, Worker, type MessagePort } from 'node:worker_threads';

import type { UdpFlowRecord } from '../../model/timeline.ts';
import type { ServicePort } from '../../model/workload.ts';
import type { Recorder } from '../../observe/recorder.ts';
import { siblingModule } from '../../paths.ts';
import type { Endpoint } from './endpoints.ts';
import type { RoundRobin } from './round-robin.ts';

export interface UdpTimeouts {
  unrepliedMs: number;
  streamMs: number;
}

/** Linux defaults: nf_conntrack_udp_timeout and nf_conntrack_udp_timeout_stream. */
export const DEFAULT_UDP_TIMEOUTS: UdpTimeouts = { unrepliedMs: 30_000, streamMs: 120_000 };

/** What the worker needs of an endpoint to route a new flow to it. */
export type RoutedEndpoint = Pick<Endpoint, 'pod' | 'ip' | 'ports'>;

/** Shared memory per flow: last datagram (absolute ms), packetsIn, packetsOut. */
export const SLOT_FIELDS = 3;
const SLOT_BYTES = SLOT_FIELDS * Float64Array.BYTES_PER_ELEMENT;
/** Flows tracked at once before the shared table grows, and at most. */
const INITIAL_SLOTS = 1_024;
const MAX_SLOTS = 1 << 20;

export interface UdpBalancerWorkerData {
  port: MessagePort;
  host: string;
  portName: string;
  targetPort: number;
  timeouts: UdpTimeouts;
  routing: RoutedEndpoint[];
  roundRobin: SharedArrayBuffer;
  closed: SharedArrayBuffer;
  stats: SharedArrayBuffer;
}

export type UdpBalancerToWorker =
  | { type: 'bind'; port: number }
  /** `serving`: flush flows pinned to other pods; `routing`: what new flows go to from now on. */
  | { type: 'program'; routing?: RoutedEndpoint[]; serving?: string[] }
  | { type: 'release'; slot: number }
  | { type: 'close' };

/** Times are absolute: performance.timeOrigin + performance.now() in the worker. */
export type UdpWorkerToBalancer =
  | { type: 'bound'; port: number }
  | { type: 'bind-error'; message: string; code?: string }
  | { type: 'open'; slot: number; at: number; clientAddress: string; clientPort: number; pod?: string }
  | { type: 'end'; slot: number; end: UdpFlowRecord['end']; at: number };

export interface UdpPortOptions {
  service: string;
  host: string;
  port: ServicePort;
  recorder: Recorder;
  timeouts: UdpTimeouts;
  /** The Service's round robin, shared with its TCP listeners. */
  roundRobin: RoundRobin;
  /** What new flows go to until the next `program` (the balancer's routing now). */
  routing: readonly Endpoint[];
}

const routed = (endpoints: readonly Endpoint[]): RoutedEndpoint[] => endpoints.map(({ pod, ip, ports }) => ({ pod, ip, ports }));

type BindError = Error & { code?: string };

export class UdpPortBalancer {
  readonly port: ServicePort;
  boundPort = 0;
  private readonly opts: UdpPortOptions;
  private readonly worker: Worker;
  private readonly channel: MessagePort;
  private readonly closedFlag: Int32Array;
  private readonly stats: Float64Array;
  /** Records of the flows the worker tracks, by slot. */
  private readonly live = new Map<number, UdpFlowRecord>();
  private binding?: { resolve: (port: number) => void; reject: (err: Error) => void };
  private closed = false;

  constructor(opts: UdpPortOptions) {
    this.opts = opts;
    this.port = opts.port;
    const closed = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
    const stats = new SharedArrayBuffer(INITIAL_SLOTS * SLOT_BYTES, { maxByteLength: MAX_SLOTS * SLOT_BYTES });
    this.closedFlag = new Int32Array(closed);
    // Length-tracking: it follows the worker's grow().
    this.stats = new Float64Array(stats);
    const { port1, port2 } = new MessageChannel();
    this.channel = port1;
    const data: UdpBalancerWorkerData = {
      port: port2,
      host: opts.host,
      portName: opts.port.name,
      targetPort: opts.port.targetPort,
      timeouts: opts.timeouts,
      routing: routed(opts.routing),
      roundRobin: opts.roundRobin.buffer,
      closed,
      stats,
    };
    this.worker = new Worker(siblingModule('udp-balancer-worker', import.meta.url), { workerData: data, transferList: [port2] });
    this.worker.unref();
    this.worker.on('error', (err) => this.onWorkerGone(`failed: ${err.message}`));
    this.worker.on('exit', (code) => this.onWorkerGone(`exited (${code})`));
    this.channel.on('message', (message: UdpWorkerToBalancer) => this.onMessage(message));
  }

  /** Binds the Service's address and `port` (0 for any free port); resolves with the bound port. */
  bind(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.binding = { resolve, reject };
      this.post({ type: 'bind', port });
    });
  }

  /**
   * A reprogramming of the balancer: clears the entries of flows pinned to pods outside `serving`
   * (kube-proxy's conntrack cleanup), then routes new flows to `routing`, in one step for the worker.
   */
  program(routing: readonly Endpoint[], serving?: ReadonlySet<string>): void {
    this.post({ type: 'program', routing: routed(routing), ...(serving ? { serving: [...serving] } : {}) });
  }

  /** Clears the entries of flows pinned to pods outside `serving` (kube-proxy's conntrack cleanup). */
  flush(serving: ReadonlySet<string>): void {
    this.post({ type: 'program', serving: [...serving] });
  }

  /** Teardown: entries still tracked stay `open` without a close time, as TCP connections cut by teardown do. */
  close(): void {
    if (this.closed) return;
    // The worker handles no datagram from here on; what it reported before is taken in now.
    Atomics.store(this.closedFlag, 0, 1);
    for (let m = receiveMessageOnPort(this.channel); m; m = receiveMessageOnPort(this.channel)) {
      this.onMessage(m.message as UdpWorkerToBalancer);
    }
    this.closed = true;
    for (const record of this.live.values()) settle(record);
    this.live.clear();
    this.post({ type: 'close' });
    this.channel.close();
    void this.worker.terminate();
    this.binding?.reject(new Error(`udp ${this.opts.service}/${this.port.name}: closed before bound`));
    this.binding = undefined;
  }

  private post(message: UdpBalancerToWorker): void {
    if (!this.closed) this.channel.postMessage(message);
  }

  private onWorkerGone(why: string): void {
    if (this.closed) return;
    const message = `udp ${this.opts.service}/${this.port.name}: balancer worker ${why}`;
    if (this.binding) {
      this.binding.reject(new Error(message));
      this.binding = undefined;
      return;
    }
    this.opts.recorder.event('note', { service: this.opts.service, message });
  }

  private toRun(at: number): number {
    return at - this.opts.recorder.clock.origin;
  }

  private onMessage(message: UdpWorkerToBalancer): void {
    if (this.closed) return;
    switch (message.type) {
      case 'bound':
        this.boundPort = message.port;
        // Referenced while binding, as the socket was; afterwards the balancer never keeps the process alive.
        this.channel.unref();
        this.binding?.resolve(message.port);
        this.binding = undefined;
        break;
      case 'bind-error': {
        const err: BindError = new Error(message.message);
        if (message.code) err.code = message.code;
        this.binding?.reject(err);
        this.binding = undefined;
        break;
      }
      case 'open': {
        const record = this.opts.recorder.openUdpFlow({
          service: this.opts.service,
          clientAddress: message.clientAddress,
          clientPort: message.clientPort,
          ...(message.pod !== undefined ? { pod: message.pod } : {}),
        });
        record.open = this.toRun(message.at);
        const base = message.slot * SLOT_FIELDS;
        liveField(record, 'last', () => this.toRun(this.stats[base] ?? 0));
        liveField(record, 'packetsIn', () => this.stats[base + 1] ?? 0);
        liveField(record, 'packetsOut', () => this.stats[base + 2] ?? 0);
        this.live.set(message.slot, record);
        break;
      }
      case 'end': {
        const record = this.live.get(message.slot);
        if (!record) break;
        settle(record);
        record.end = message.end;
        record.close = this.toRun(message.at);
        this.live.delete(message.slot);
        this.post({ type: 'release', slot: message.slot });
        break;
      }
    }
  }
}

type LiveField = 'last' | 'packetsIn' | 'packetsOut';
const LIVE_FIELDS: readonly LiveField[] = ['last', 'packetsIn', 'packetsOut'];

/** A field read from the worker's shared memory; assigning it makes it plain data again. */
function liveField(record: UdpFlowRecord, field: LiveField, read: () => number): void {
  Object.defineProperty(record, field, {
    enumerable: true,
    configurable: true,
    get: read,
    set: (value: number) => Object.defineProperty(record, field, { value, writable: true, enumerable: true, configurable: true }),
  });
}

/** Copies the live fields into plain data: the worker may reuse the memory afterwards. */
function settle(record: UdpFlowRecord): void {
  for (const field of LIVE_FIELDS) {
    const value = record[field];
    Object.defineProperty(record, field, { value, writable: true, enumerable: true, configurable: true });
  }
}
