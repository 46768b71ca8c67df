// Joins what the client saw (RequestRecord) to what the Service's load balancer saw
// (ConnectionRecord). A request that died before any pod answered carries no pod and often only a
// `reset` or `eof`; the balancer knows which pod it routed the connection to and whether that pod
// refused it. The join key is the client's local port, which the OS reuses over a run, so a match
// must also overlap in time.

import type { ConnectionRecord, Outcome, RequestRecord, Timeline } from '../model/timeline.ts';

/** Slack for the two sides' timestamps of the same connection (client connect vs balancer accept). */
const EPSILON_MS = 5;

/** Failures that mean "refused" when the balancer says the upstream leg was refused or had no endpoint. */
const REFINABLE: ReadonlySet<Outcome> = new Set<Outcome>(['reset', 'eof', 'error']);

export type ConnectionIndex = Map<number, ConnectionRecord[]>;

/** Connections by client port, each list in order of opening. */
export function indexConnections(connections: readonly ConnectionRecord[]): ConnectionIndex {
  const index: ConnectionIndex = new Map();
  for (const c of connections) {
    const list = index.get(c.clientPort);
    if (list) list.push(c);
    else index.set(c.clientPort, [c]);
  }
  for (const list of index.values()) list.sort((a, b) => a.open - b.open);
  return index;
}

/**
 * The balancer's record of the connection `request` was sent on: same client port, and open..close
 * overlapping the request's connection (from `connectionStart`, else from `start`) through its end.
 * Among several (a reused port), the one opened nearest to `connectionStart`, else the latest opened.
 */
export function connectionOf(
  timeline: Timeline,
  request: RequestRecord,
  index: ConnectionIndex = indexConnections(timeline.connections),
): ConnectionRecord | undefined {
  if (request.localPort === undefined) return undefined;
  const list = index.get(request.localPort);
  if (!list) return undefined;
  // Behind a gateway the gateway's own connections to the backend Service come from other
  // addresses whose ports may equal the client's: only the Service the load sent to counts.
  const service = request.service;
  const from = request.connectionStart ?? request.start;
  let best: ConnectionRecord | undefined;
  let bestScore = Infinity;
  for (const c of list) {
    if (c.open > request.end + EPSILON_MS) break;
    if (c.close !== undefined && c.close < from - EPSILON_MS) continue;
    if (service !== undefined && c.service !== service) continue;
    const score = request.connectionStart !== undefined ? Math.abs(c.open - request.connectionStart) : -c.open;
    if (score < bestScore) {
      best = c;
      bestScore = score;
    }
  }
  return best;
}

/**
 * Fills `pod` on requests that lack it from the balancer's record and turns failures on connections
 * the pod refused (or that the balancer had no endpoint for: kube-proxy rejects those) into
 * `refused`. Mutates the requests in place; idempotent. Returns how many requests it changed.
 */
export function joinRequestsToConnections(timeline: Timeline): number {
  const index = indexConnections(timeline.connections);
  let refined = 0;
  for (const request of timeline.requests) {
    if (request.localPort === undefined) continue;
    if (request.pod !== undefined && request.outcome === 'ok') continue;
    const connection = connectionOf(timeline, request, index);
    if (!connection) continue;
    let changed = false;
    if (request.pod === undefined && connection.pod !== undefined) {
      request.pod = connection.pod;
      changed = true;
    }
    if (
      REFINABLE.has(request.outcome) &&
      (connection.upstream === 'refused' || connection.upstream === 'no-endpoint')
    ) {
      request.outcome = 'refused';
      changed = true;
    }
    if (changed) refined++;
  }
  return refined;
}
