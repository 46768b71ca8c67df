// A Service's load balancer with kube-proxy semantics, as a userspace L4 proxy on the Service's own
// loopback address.
//
// - It routes from programmed views of the Service's endpoints, one per node, each lagging the
//   EndpointSlice by `programmingDelayMs` plus a lag of its own for each change, within
//   `programmingSpreadMs` (programming-schedule.ts): kube-proxy applies endpoint changes at its next
//   sync, each node on its own loop, and a cloud load balancer deregisters a target seconds later
//   (https://kubernetes.io/docs/reference/networking/virtual-ips/). While the nodes disagree, each
//   new connection enters through the next node in turn and goes where that node's view says, so a
//   pod still gets some new connections until the last node has deprogrammed it.
// - New connections go to ready endpoints, round robin. When no endpoint is ready, they go to
//   endpoints that are serving and terminating (KEP-1669, "Proxy Terminating Endpoints", GA in 1.28:
//   https://github.com/kubernetes/enhancements/tree/master/keps/sig-network/1669-proxy-terminating-endpoints).
//   With none of either, the client is reset. A failed connect is never retried on another endpoint:
//   kube-proxy's DNAT does not retry, and the harness measures without retries by rule.
// - An established connection stays pinned to its pod (conntrack) whatever happens to the endpoint
//   afterwards: deprogramming only affects new connections. Both directions are piped with half-close
//   (a FIN is forwarded as a FIN) and a reset from the pod is forwarded as a reset.
//
// `lb-programmed` is recorded when a pod becomes eligible for new connections in the first node's
// view (as a ready endpoint, or through the terminating fallback), `lb-deprogrammed` when it stops
// being eligible in the last one; both carry each node's lag for that change and the seed of the
// draws (`detail.nodeLagsMs`, `detail.seed`). Under the fallback a pod can therefore be programmed
// again after being deprogrammed.
//
// UDP ServicePorts are served by src/providers/local/udp-balancer.ts from the nodes' programmed views
// taken together (a new flow may enter through any node): a flow table pinning each client address
// to the pod its first datagram went to, with conntrack's idle timeouts and kube-proxy's cleanup of
// entries whose endpoint stopped serving.

import net from 'node:net';

import type { ConnectionRecord } from '../../model/timeline.ts';
import type { Service, ServicePort } from '../../model/workload.ts';
import type { Recorder } from '../../observe/recorder.ts';
import { eligibleEndpoints, type Eligibility as RoutedVia } from '../endpoint-eligibility.ts';
import type { ServiceAddress } from '../provider.ts';
import type { Endpoint, EndpointStore, EndpointWatchEvent } from './endpoints.ts';
import { LOCAL_NODES } from './nodes.ts';
import { ProgrammingSchedule, serviceSeed } from './programming-schedule.ts';
import { RoundRobin } from './round-robin.ts';
import { DEFAULT_UDP_TIMEOUTS, UdpPortBalancer } from './udp-balancer.ts';

/**
 * Deliberately broken balancers, for proving that assertions catch them. `never-deprogram` keeps
 * every endpoint it ever programmed: new connections keep going to terminating and dead pods.
 */
export type BalancerFault = 'never-deprogram';

export interface BalancerOptions {
  service: Service;
  host: string;
  store: EndpointStore;
  recorder: Recorder;
  fault?: BalancerFault;
  /** The run's seed for the nodes' programming lags (programming-schedule.ts). */
  seed: number;
  /** Called after any node applied a change: a node catching up records no event, yet a deploy waits for it. */
  onApplied?: () => void;
}

type Eligibility = RoutedVia | 'fault-stale';

interface Target {
  endpoint: Endpoint;
  via: Eligibility;
}

/** One node's proxy: its programmed view, the changes it has yet to apply, its own turn. */
interface NodeProxy {
  name: string;
  view: Map<string, Endpoint>;
  eligible: Map<string, Target>;
  pending: { event: EndpointWatchEvent; change: Change }[];
  /** The change that last moved each pod in this node's view: what its events report. */
  changeOf: Map<string, Change>;
  roundRobin: RoundRobin;
}

/** An endpoint change as the nodes apply it: when it was made, and each node's drawn lag (delay included). */
interface Change {
  at: number;
  nodeLagsMs: Record<string, number>;
}

interface Listener {
  port: ServicePort;
  server: net.Server;
  boundPort: number;
}

function upstreamOutcome(err: NodeJS.ErrnoException): ConnectionRecord['upstream'] {
  switch (err.code) {
    case 'ECONNREFUSED':
      return 'refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'reset';
    default:
      return 'error';
  }
}

function reset(socket: net.Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

export class ServiceBalancer {
  readonly service: Service;
  readonly host: string;
  private readonly store: EndpointStore;
  private readonly recorder: Recorder;
  private readonly fault?: BalancerFault;
  private readonly onApplied?: () => void;
  /** The nodes' views of the endpoints, each behind the EndpointSlice by its own lag. */
  private readonly nodes: NodeProxy[];
  private readonly schedule: ProgrammingSchedule;
  private readonly seed: number;
  /** Which node the next new connection enters through, while the nodes disagree. */
  private nodeTurn = 0;
  /** Pods that some node may send new connections to now, in the order they were first listed. */
  private eligible = new Map<string, Target>();
  /** What new connections are actually sent to: `eligible`, unless a fault makes it differ. */
  private routing = new Map<string, Target>();
  /** never-deprogram: everything ever programmed, as it was last eligible. */
  private readonly stale = new Map<string, Endpoint>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly sockets = new Set<net.Socket>();
  private readonly listeners: Listener[] = [];
  private readonly udpPorts: UdpPortBalancer[] = [];
  /** UDP ports still binding: they are programmed too, their packet path runs already. */
  private readonly udpBinding = new Set<UdpPortBalancer>();
  private readonly unwatch: () => void;
  /** One turn for new TCP connections and new UDP flows alike, shared with the UDP workers. */
  private readonly roundRobin = new RoundRobin();
  private closed = false;

  constructor(opts: BalancerOptions) {
    this.service = opts.service;
    this.host = opts.host;
    this.store = opts.store;
    this.recorder = opts.recorder;
    this.fault = opts.fault;
    if (opts.onApplied) this.onApplied = opts.onApplied;
    this.seed = serviceSeed(opts.seed, opts.service.name);
    this.nodes = LOCAL_NODES.map((name) => ({ name, view: new Map(), eligible: new Map(), pending: [], changeOf: new Map(), roundRobin: new RoundRobin() }));
    this.schedule = new ProgrammingSchedule({
      delayMs: opts.service.programmingDelayMs,
      spreadMs: opts.service.programmingSpreadMs ?? 0,
      nodes: LOCAL_NODES,
      seed: this.seed,
    });
    for (const endpoint of this.store.list()) this.onChange({ type: 'ADDED', endpoint, resourceVersion: 0 });
    this.unwatch = this.store.watch((event) => this.onChange(event));
  }

  /** Binds every ServicePort. A port the process may not bind (below 1024 unprivileged) gets a free one. */
  async listen(): Promise<void> {
    for (const port of this.service.ports) {
      if (port.protocol === 'UDP') await this.listenUdp(port);
      else await this.listenTcp(port);
    }
  }

  /** Where clients reach this Service: the ServicePort named `portName`, or the first one. */
  address(portName?: string): ServiceAddress {
    const all: { port: ServicePort; boundPort: number }[] = [...this.listeners, ...this.udpPorts];
    // Listeners bind in the order of the Service's ports; "the first one" is the Service's first port.
    const first = this.service.ports[0];
    const name = portName ?? first?.name;
    const listener = all.find((l) => l.port.name === name);
    if (!listener) throw new Error(`service ${this.service.name} has no port ${portName ?? '(any)'}`);
    return { host: this.host, port: listener.boundPort };
  }

  /** Pods that new connections may go to now, through every node (a deploy is done once all have them). */
  programmedPods(): string[] {
    return [...this.eligible.keys()].filter((pod) => this.nodes.every((n) => n.eligible.has(pod)));
  }

  /** Teardown: stops programming, closes listeners and every proxied connection. Synchronous. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unwatch();
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const { server } of this.listeners) server.close();
    for (const udp of this.udpPorts) udp.close();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  private onChange(event: EndpointWatchEvent): void {
    const now = this.recorder.now();
    const { type, endpoint } = event;
    const c = endpoint.conditions;
    const lags = this.schedule.next(now, `${type} ${endpoint.pod} ${c.ready}/${c.serving}/${c.terminating}`);
    const change: Change = { at: now, nodeLagsMs: Object.fromEntries(this.nodes.map((n, i) => [n.name, lags[i]?.drawnMs ?? 0])) };
    this.nodes.forEach((node, i) => {
      const entry = { event, change };
      node.pending.push(entry);
      const lag = lags[i]?.inMs ?? 0;
      if (lag <= 0) {
        this.applyUpTo(node, entry);
        return;
      }
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        this.applyUpTo(node, entry);
      }, lag);
      this.timers.add(timer);
    });
  }

  /** Applies the node's pending changes in order, up to and including `last` (a sync applies them all). */
  private applyUpTo(node: NodeProxy, last: NodeProxy['pending'][number]): void {
    if (this.closed) return;
    const upTo = node.pending.indexOf(last);
    if (upTo < 0) return;
    for (const { event, change } of node.pending.splice(0, upTo + 1)) {
      if (event.type === 'DELETED') node.view.delete(event.endpoint.pod);
      else node.view.set(event.endpoint.pod, event.endpoint);
      node.changeOf.set(event.endpoint.pod, change);
    }
    node.eligible = new Map();
    for (const [endpoint, via] of eligibleEndpoints([...node.view.values()], (e) => e.conditions)) node.eligible.set(endpoint.pod, { endpoint, via });
    this.reprogram(node);
    this.onApplied?.();
  }

  /** The nodes disagree: some pod is eligible on one node and not on another. */
  private nodesDisagree(): boolean {
    const [first, ...rest] = this.nodes;
    if (!first) return false;
    return rest.some((n) => n.eligible.size !== first.eligible.size || [...n.eligible.keys()].some((pod) => !first.eligible.has(pod)));
  }

  private reprogram(applied: NodeProxy): void {
    const next = new Map<string, Target>();
    for (const node of this.nodes) for (const [pod, target] of node.eligible) if (!next.has(pod)) next.set(pod, target);
    const workload = this.service.selector;
    // The change that moved the pod (a node may apply several at one sync), with every node's lag for it.
    const timing = (pod: string) => {
      const change = applied.changeOf.get(pod);
      return { node: applied.name, ...(change ? { lagMs: this.recorder.now() - change.at, nodeLagsMs: change.nodeLagsMs } : {}), seed: this.seed };
    };
    for (const [pod, target] of next) {
      if (!this.eligible.has(pod)) {
        this.recorder.event('lb-programmed', { pod, workload, service: this.service.name, detail: { via: target.via, ...timing(pod) } });
      }
    }
    for (const pod of this.eligible.keys()) {
      if (!next.has(pod)) {
        const endpoint = applied.view.get(pod);
        const reason = !endpoint ? 'removed' : endpoint.conditions.serving ? 'not-ready' : 'not-serving';
        this.recorder.event('lb-deprogrammed', { pod, workload, service: this.service.name, detail: { reason, ...timing(pod) } });
      }
    }
    this.eligible = next;
    // The fault is a dataplane that does not apply what its control plane reports: the events above
    // say "deprogrammed" on time, yet new connections keep going to every pod it ever had.
    this.routing = new Map(next);
    if (this.fault === 'never-deprogram') {
      for (const [pod, target] of next) this.stale.set(pod, target.endpoint);
      for (const [pod, endpoint] of this.stale) if (!next.has(pod)) this.routing.set(pod, { endpoint, via: 'fault-stale' });
    }
    const udp = [...this.udpPorts, ...this.udpBinding];
    if (udp.length > 0) {
      // UDP workers flush, then route by the new routing, in one step (udp-balancer.ts). A new flow
      // may enter through any node, so they route by every node's pods until the last has dropped
      // one; a flow's entry is cleaned up once no node sees its endpoint serving.
      const serving = new Set(this.nodes.flatMap((n) => [...n.view.values()].filter((e) => e.conditions.serving).map((e) => e.pod)));
      const routing = this.routingEndpoints();
      for (const port of udp) port.program(routing, serving);
    }
  }

  private routingEndpoints(): Endpoint[] {
    return [...this.routing.values()].map((t) => t.endpoint);
  }

  private pick(): Endpoint | undefined {
    // While the nodes disagree, the connection enters through the next node in turn and that node's
    // proxy picks, on its own turn. Otherwise one turn for the Service, shared with the UDP workers.
    if (this.fault === undefined && this.nodesDisagree()) {
      const node = this.nodes[this.nodeTurn++ % this.nodes.length];
      if (node) return node.roundRobin.pick([...node.eligible.values()].map((t) => t.endpoint));
    }
    return this.roundRobin.pick(this.routingEndpoints());
  }

  private async listenUdp(port: ServicePort): Promise<void> {
    const create = () =>
      new UdpPortBalancer({
        service: this.service.name,
        host: this.host,
        port,
        recorder: this.recorder,
        timeouts: this.service.udpTimeouts ?? DEFAULT_UDP_TIMEOUTS,
        roundRobin: this.roundRobin,
        routing: this.routingEndpoints(),
      });
    let udp = create();
    this.udpBinding.add(udp);
    try {
      await udp.bind(port.port);
    } catch (err) {
      this.udpBinding.delete(udp);
      udp.close();
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EACCES' && code !== 'EADDRINUSE') throw err;
      udp = create();
      this.udpBinding.add(udp);
      const boundPort = await udp.bind(0).finally(() => this.udpBinding.delete(udp));
      this.recorder.event('note', {
        service: this.service.name,
        message: `service ${this.service.name} port ${port.name}: cannot bind UDP ${this.host}:${port.port} (${code}), listening on ${boundPort}`,
      });
    }
    this.udpBinding.delete(udp);
    this.udpPorts.push(udp);
    if (this.closed) udp.close();
  }

  private async listenTcp(port: ServicePort): Promise<void> {
    const server = net.createServer({ allowHalfOpen: true, noDelay: true }, (client) => this.onConnection(port, client));
    // Errors on an already listening server (EMFILE on accept) must not crash the harness.
    const bind = (p: number) =>
      new Promise<number>((resolve, reject) => {
        const onError = (err: Error) => reject(err);
        server.once('error', onError);
        server.listen({ host: this.host, port: p, exclusive: true }, () => {
          server.off('error', onError);
          const address = server.address();
          resolve(typeof address === 'object' && address ? address.port : p);
        });
      });
    let boundPort: number;
    try {
      boundPort = await bind(port.port);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'EACCES' && code !== 'EADDRINUSE') throw err;
      boundPort = await bind(0);
      this.recorder.event('note', {
        service: this.service.name,
        message: `service ${this.service.name} port ${port.name}: cannot bind ${this.host}:${port.port} (${code}), listening on ${boundPort}`,
      });
    }
    server.on('error', () => undefined);
    this.listeners.push({ port, server, boundPort });
    if (this.closed) server.close();
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once('close', () => this.sockets.delete(socket));
  }

  private onConnection(port: ServicePort, client: net.Socket): void {
    if (this.closed) {
      client.destroy();
      return;
    }
    this.track(client);
    const target = this.pick();
    const record = this.recorder.openConnection({
      service: this.service.name,
      clientPort: client.remotePort ?? 0,
      ...(target ? { pod: target.pod } : {}),
    });
    client.on('error', () => undefined);
    if (!target) {
      record.upstream = 'no-endpoint';
      record.close = this.recorder.now();
      reset(client);
      return;
    }
    const targetPort = target.ports.find((p) => p.name === port.name)?.port ?? port.targetPort;
    const upstream = net.connect({ host: target.ip, port: targetPort, allowHalfOpen: true, noDelay: true });
    this.track(upstream);

    let open = 2;
    const onClose = () => {
      // Connections cut by teardown stay `open` without a close time: the run ended first.
      if (--open > 0 || this.closed) return;
      record.close = this.recorder.now();
      if (record.upstream === 'open') record.upstream = 'ok';
    };
    client.once('close', onClose);
    upstream.once('close', onClose);

    client.on('data', (chunk: Buffer) => (record.bytesIn += chunk.length));
    upstream.on('data', (chunk: Buffer) => (record.bytesOut += chunk.length));
    // pipe() forwards backpressure and, with allowHalfOpen, turns an `end` (FIN in) into end() (FIN out).
    client.pipe(upstream);
    upstream.pipe(client);

    upstream.on('error', (err: NodeJS.ErrnoException) => {
      if (record.upstream === 'open') record.upstream = upstreamOutcome(err);
      // The client sees what a client of kube-proxy's DNAT sees: a reset, never a retry elsewhere.
      reset(client);
    });
    client.on('error', () => reset(upstream));
  }
}
