// The pods a cluster's proxy routed the harness's connections to, learnt after the fact (a netns
// node's conntrack: src/providers/netns/conntrack-watch.ts), written into the connection records
// the load kept itself. A connection that got no response names no pod from the client's side; with
// its pod known, joinRequestsToConnections places its failed requests on that pod, as the local
// provider's balancer records do.

import type { ConnectionRecord, Timeline } from '../model/timeline.ts';

/** One new connection as the node that routed it saw it. */
export interface RoutedConnection {
  /** When the node saw it, on the run clock. */
  t: number;
  clientPort: number;
  /** The address and port the client connected to (a node's IP and a NodePort). */
  to: { host: string; port: number };
  /** Where the node sent it (the pod's IP after the proxy's DNAT). */
  podIp: string;
}

/** A watch of the routes a cluster's proxy picks, from its start until stopped. */
export interface RouteWatch {
  /**
   * Whether it has seen a connection yet. A watch reports only what happens once it listens, and
   * says nothing when it starts to: the first connection it sees is the sign it listens.
   */
  seenAny(): boolean;
  /** Ends the watch and gives what it saw. */
  stop(): Promise<RoutedConnection[]>;
}

/** The node sees the SYN; the client records the connection once its handshake completes: a round trip apart. */
const MATCH_WITHIN_MS = 1000;

/**
 * Fills `pod` of each connection record that lacks one from the routed connection with the same
 * client port, to the record's Service (`serviceAt`), seen nearest its open (within MATCH_WITHIN_MS),
 * when `podAt` names the pod that had the address then. Returns how many it placed.
 */
export function placeRoutedConnections(
  timeline: Timeline,
  routed: readonly RoutedConnection[],
  serviceAt: (to: RoutedConnection['to']) => string | undefined,
  podAt: (ip: string, t: number) => string | undefined,
): number {
  const byPort = new Map<number, RoutedConnection[]>();
  for (const r of routed) {
    const list = byPort.get(r.clientPort);
    if (list) list.push(r);
    else byPort.set(r.clientPort, [r]);
  }
  let placed = 0;
  for (const c of timeline.connections) {
    if (c.pod !== undefined) continue;
    const match = nearest(c, byPort.get(c.clientPort) ?? [], serviceAt);
    const pod = match && podAt(match.podIp, match.t);
    if (pod === undefined) continue;
    c.pod = pod;
    placed++;
  }
  return placed;
}

function nearest(c: ConnectionRecord, candidates: readonly RoutedConnection[], serviceAt: (to: RoutedConnection['to']) => string | undefined): RoutedConnection | undefined {
  let best: RoutedConnection | undefined;
  for (const r of candidates) {
    if (Math.abs(r.t - c.open) > MATCH_WITHIN_MS || serviceAt(r.to) !== c.service) continue;
    if (!best || Math.abs(r.t - c.open) < Math.abs(best.t - c.open)) best = r;
  }
  return best;
}
