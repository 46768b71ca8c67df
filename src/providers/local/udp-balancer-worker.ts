// The packet path of one UDP ServicePort (udp-balancer.ts), in a worker thread of its own so that
// tens of thousands of datagrams per second run neither on the harness's event loop nor behind it.
// It owns the Service socket, the upstream sockets and the flow table; the main thread sends it the
// balancer's routing and flushes, and it reports each flow when it opens and when it ends. Counters
// and the last-datagram time of live flows are written to shared memory (one slot per flow), never
// sent per packet. Times are absolute (performance.timeOrigin + performance.now()), comparable across
// threads; the main thread converts them to the run clock (src/observe/clock.ts).

import dgram from 'node:dgram';
import { workerData, type MessagePort } from 'node:worker_threads';

import type { UdpFlowRecord } from '../../model/timeline.ts';
import { RoundRobin } from './round-robin.ts';
import {
  SLOT_FIELDS,
  type RoutedEndpoint,
  type UdpBalancerToWorker,
  type UdpBalancerWorkerData,
  type UdpWorkerToBalancer,
} from './udp-balancer.ts';

/** Receive buffers large enough for bursts of tens of thousands of datagrams per second; the kernel caps it at rmem_max. */
const SOCKET_BUFFER_BYTES = 4 * 1024 * 1024;

interface Flow {
  slot: number;
  pod?: string;
  /** Absent for a no-endpoint flow. */
  upstream?: dgram.Socket;
  replied: boolean;
  /** Datagrams that arrived before the upstream socket was connected to the pod, in order. */
  pending?: Buffer[];
}

const data = workerData as UdpBalancerWorkerData;
const port: MessagePort = data.port;
const { host, portName, targetPort: defaultTargetPort, timeouts } = data;
const roundRobin = new RoundRobin(data.roundRobin);
/** Set by the main thread at close(): from then on no datagram is handled, as `closed` did before. */
const closedFlag = new Int32Array(data.closed);
const stats = new Float64Array(data.stats);
const flows = new Map<string, Flow>();
const freeSlots: number[] = [];
let nextSlot = 0;
let routing: readonly RoutedEndpoint[] = data.routing;
let sweeper: NodeJS.Timeout | undefined;

const socket = dgram.createSocket('udp4');
socket.on('message', (msg, rinfo) => onClientDatagram(msg, rinfo));

const now = () => performance.timeOrigin + performance.now();
const closed = () => Atomics.load(closedFlag, 0) !== 0;
const post = (message: UdpWorkerToBalancer) => port.postMessage(message);
const pick = () => roundRobin.pick(routing);

function enlargeBuffers(s: dgram.Socket): void {
  try {
    s.setRecvBufferSize(SOCKET_BUFFER_BYTES);
    s.setSendBufferSize(SOCKET_BUFFER_BYTES);
  } catch {
    // The kernel may refuse the size for an unprivileged process; its default still works.
  }
}

function bind(bindPort: number): void {
  const onError = (err: NodeJS.ErrnoException) => post({ type: 'bind-error', message: err.message, ...(err.code ? { code: err.code } : {}) });
  socket.once('error', onError);
  socket.bind({ address: host, port: bindPort, exclusive: true }, () => {
    socket.off('error', onError);
    socket.on('error', () => undefined);
    enlargeBuffers(socket);
    const every = Math.max(10, Math.min(1_000, timeouts.unrepliedMs / 4, timeouts.streamMs / 4));
    sweeper = setInterval(sweep, every);
    post({ type: 'bound', port: socket.address().port });
  });
}

function allocateSlot(): number {
  const free = freeSlots.pop();
  if (free !== undefined) return free;
  const slot = nextSlot++;
  const needed = (slot + 1) * SLOT_FIELDS * Float64Array.BYTES_PER_ELEMENT;
  if (needed > data.stats.byteLength) data.stats.grow(Math.min(data.stats.maxByteLength, Math.max(needed, data.stats.byteLength * 2)));
  return slot;
}

function onClientDatagram(msg: Buffer, rinfo: dgram.RemoteInfo): void {
  if (closed()) return;
  const key = `${rinfo.address}:${rinfo.port}`;
  let flow = flows.get(key);
  if (flow && flow.upstream === undefined) {
    // A no-endpoint flow: every datagram looks for an endpoint again, as kube-proxy's rules do.
    if (pick() !== undefined) {
      end(key, flow, 'no-endpoint');
      flow = undefined;
    }
  }
  flow ??= open(key, rinfo);
  const base = flow.slot * SLOT_FIELDS;
  stats[base] = now();
  stats[base + 1]!++;
  if (!flow.upstream) return;
  if (flow.pending) flow.pending.push(msg);
  else flow.upstream.send(msg);
}

function open(key: string, rinfo: dgram.RemoteInfo): Flow {
  const endpoint = pick();
  const slot = allocateSlot();
  const at = now();
  const base = slot * SLOT_FIELDS;
  stats[base] = at;
  stats[base + 1] = 0;
  stats[base + 2] = 0;
  const flow: Flow = { slot, replied: false, ...(endpoint ? { pod: endpoint.pod } : {}) };
  flows.set(key, flow);
  // Reported before the first datagram is forwarded, so the record exists before any reply can reach the client.
  post({ type: 'open', slot, at, clientAddress: rinfo.address, clientPort: rinfo.port, ...(endpoint ? { pod: endpoint.pod } : {}) });
  if (!endpoint) return flow;
  const targetPort = endpoint.ports.find((p) => p.name === portName)?.port ?? defaultTargetPort;
  const upstream = dgram.createSocket('udp4');
  flow.upstream = upstream;
  upstream.on('error', () => undefined);
  upstream.on('message', (reply) => {
    // Connected to the pod: the kernel delivers only the pod's datagrams (conntrack's reply direction).
    if (closed()) return;
    flow.replied = true;
    stats[base] = now();
    stats[base + 2]!++;
    socket.send(reply, rinfo.port, rinfo.address);
  });
  // A connected socket: no per-datagram address handling, and only the pod's replies come back.
  flow.pending = [];
  upstream.bind({ address: host, port: 0 }, () => {
    enlargeBuffers(upstream);
    upstream.connect(targetPort, endpoint.ip, () => {
      const pending = flow.pending ?? [];
      flow.pending = undefined;
      if (flows.get(key) !== flow) return;
      for (const m of pending) upstream.send(m);
    });
  });
  return flow;
}

function end(key: string, flow: Flow, reason: UdpFlowRecord['end']): void {
  flows.delete(key);
  flow.upstream?.close();
  // The slot is reused only once the main thread has copied its final values (a 'release').
  post({ type: 'end', slot: flow.slot, end: reason, at: now() });
}

function flush(serving: readonly string[]): void {
  const set = new Set(serving);
  for (const [key, flow] of flows) {
    if (flow.pod !== undefined && !set.has(flow.pod)) end(key, flow, 'endpoint-flushed');
  }
}

function sweep(): void {
  if (closed()) return;
  const t = now();
  for (const [key, flow] of flows) {
    if (t - stats[flow.slot * SLOT_FIELDS]! >= (flow.replied ? timeouts.streamMs : timeouts.unrepliedMs)) {
      end(key, flow, flow.upstream ? 'idle-timeout' : 'no-endpoint');
    }
  }
}

port.on('message', (message: UdpBalancerToWorker) => {
  switch (message.type) {
    case 'bind':
      bind(message.port);
      break;
    case 'program':
      // One message, so that no datagram is routed between the flush and the new routing.
      if (message.serving) flush(message.serving);
      if (message.routing) routing = message.routing;
      break;
    case 'release':
      freeSlots.push(message.slot);
      break;
    case 'close':
      if (sweeper) clearInterval(sweeper);
      for (const flow of flows.values()) flow.upstream?.close();
      flows.clear();
      try {
        socket.close();
      } catch {
        // not bound yet
      }
      port.close();
      break;
  }
});
