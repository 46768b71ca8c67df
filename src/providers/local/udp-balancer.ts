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

import dgram from 'node:dgram';

import type { UdpFlowRecord } from '../../model/timeline.ts';
import type { ServicePort } from '../../model/workload.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { Endpoint } from './endpoints.ts';

export interface UdpTimeouts {
  unrepliedMs: number;
  streamMs: number;
}

/** Linux defaults: nf_conntrack_udp_timeout and nf_conntrack_udp_timeout_stream. */
export const DEFAULT_UDP_TIMEOUTS: UdpTimeouts = { unrepliedMs: 30_000, streamMs: 120_000 };

/** Receive buffers large enough for bursts of tens of thousands of datagrams per second; the kernel caps it at rmem_max. */
const SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

export interface UdpPortOptions {
  service: string;
  host: string;
  port: ServicePort;
  recorder: Recorder;
  timeouts: UdpTimeouts;
  /** The balancer's choice for a new flow, or undefined when nothing is routed. */
  pick(): Endpoint | undefined;
}

interface Flow {
  record: UdpFlowRecord;
  /** Absent for a no-endpoint flow. */
  upstream?: dgram.Socket;
  target?: { ip: string; port: number };
  replied: boolean;
  /** Datagrams that arrived before the upstream socket was connected to the pod, in order. */
  pending?: Buffer[];
}

function enlargeBuffers(socket: dgram.Socket): void {
  try {
    socket.setRecvBufferSize(SOCKET_BUFFER_BYTES);
    socket.setSendBufferSize(SOCKET_BUFFER_BYTES);
  } catch {
    // The kernel may refuse the size for an unprivileged process; its default still works.
  }
}

export class UdpPortBalancer {
  readonly port: ServicePort;
  boundPort = 0;
  private readonly opts: UdpPortOptions;
  private readonly socket: dgram.Socket;
  private readonly flows = new Map<string, Flow>();
  private sweeper?: NodeJS.Timeout;
  private closed = false;

  constructor(opts: UdpPortOptions) {
    this.opts = opts;
    this.port = opts.port;
    this.socket = dgram.createSocket('udp4');
    this.socket.on('message', (msg, rinfo) => this.onClientDatagram(msg, rinfo));
  }

  /** Binds the Service's address and `port` (0 for any free port); resolves with the bound port. */
  bind(port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(err);
      this.socket.once('error', onError);
      this.socket.bind({ address: this.opts.host, port, exclusive: true }, () => {
        this.socket.off('error', onError);
        this.socket.on('error', () => undefined);
        enlargeBuffers(this.socket);
        this.boundPort = this.socket.address().port;
        const { unrepliedMs, streamMs } = this.opts.timeouts;
        const every = Math.max(10, Math.min(1_000, unrepliedMs / 4, streamMs / 4));
        this.sweeper = setInterval(() => this.sweep(), every);
        this.sweeper.unref();
        resolve(this.boundPort);
      });
    });
  }

  /** Clears the entries of flows pinned to pods outside `serving` (kube-proxy's conntrack cleanup). */
  flush(serving: ReadonlySet<string>): void {
    for (const [key, flow] of this.flows) {
      if (flow.record.pod !== undefined && !serving.has(flow.record.pod)) this.end(key, flow, 'endpoint-flushed');
    }
  }

  /** Teardown: entries still tracked stay `open` without a close time, as TCP connections cut by teardown do. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    for (const flow of this.flows.values()) flow.upstream?.close();
    this.flows.clear();
    try {
      this.socket.close();
    } catch {
      // not bound yet
    }
  }

  private onClientDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (this.closed) return;
    const key = `${rinfo.address}:${rinfo.port}`;
    let flow = this.flows.get(key);
    if (flow && flow.upstream === undefined) {
      // A no-endpoint flow: every datagram looks for an endpoint again, as kube-proxy's rules do.
      if (this.opts.pick() !== undefined) {
        this.end(key, flow, 'no-endpoint');
        flow = undefined;
      }
    }
    flow ??= this.open(key, rinfo);
    const now = this.opts.recorder.now();
    flow.record.last = now;
    flow.record.packetsIn++;
    if (!flow.upstream) return;
    if (flow.pending) flow.pending.push(msg);
    else flow.upstream.send(msg);
  }

  private open(key: string, rinfo: dgram.RemoteInfo): Flow {
    const endpoint = this.opts.pick();
    const record = this.opts.recorder.openUdpFlow({
      service: this.opts.service,
      clientAddress: rinfo.address,
      clientPort: rinfo.port,
      ...(endpoint ? { pod: endpoint.pod } : {}),
    });
    const flow: Flow = { record, replied: false };
    this.flows.set(key, flow);
    if (!endpoint) return flow;
    const targetPort = endpoint.ports.find((p) => p.name === this.port.name)?.port ?? this.port.targetPort;
    flow.target = { ip: endpoint.ip, port: targetPort };
    const upstream = dgram.createSocket('udp4');
    flow.upstream = upstream;
    upstream.on('error', () => undefined);
    upstream.on('message', (reply) => {
      // Connected to the pod: the kernel delivers only the pod's datagrams (conntrack's reply direction).
      if (this.closed) return;
      flow.replied = true;
      flow.record.last = this.opts.recorder.now();
      flow.record.packetsOut++;
      this.socket.send(reply, rinfo.port, rinfo.address);
    });
    // A connected socket: no per-datagram address handling, and only the pod's replies come back.
    flow.pending = [];
    upstream.bind({ address: this.opts.host, port: 0 }, () => {
      enlargeBuffers(upstream);
      upstream.connect(targetPort, endpoint.ip, () => {
        const pending = flow.pending ?? [];
        flow.pending = undefined;
        if (this.flows.get(key) !== flow) return;
        for (const msg of pending) upstream.send(msg);
      });
    });
    return flow;
  }

  private end(key: string, flow: Flow, end: UdpFlowRecord['end']): void {
    this.flows.delete(key);
    flow.upstream?.close();
    flow.record.end = end;
    flow.record.close = this.opts.recorder.now();
  }

  private sweep(): void {
    const now = this.opts.recorder.now();
    const { unrepliedMs, streamMs } = this.opts.timeouts;
    for (const [key, flow] of this.flows) {
      if (now - flow.record.last >= (flow.replied ? streamMs : unrepliedMs)) {
        this.end(key, flow, flow.upstream ? 'idle-timeout' : 'no-endpoint');
      }
    }
  }
}
