// Joins what the client saw (RequestRecord) to what the Service's load balancer saw
// (ConnectionRecord). A request that died before any pod answered carries no pod and often only a
// `reset` or `eof`; the balancer knows which pod it routed the connection to and whether that pod
// refused it. The join key is the client's local port, which the OS reuses over a run, so a match
// must also overlap in time.

import type { RequestTable } from '../model/request-table.ts';
import type { ConnectionRecord, Outcome, RequestRecord, StreamRecord, Timeline } from '../model/timeline.ts';

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
  request: Pick<RequestRecord, 'localPort' | 'service' | 'connectionStart' | 'start' | 'end'>,
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
 * Calls `refine` for each request the balancer's records add to: with its row in
 * `timeline.requests`, the pod it lacked (if the balancer knows it) and whether it becomes `refused`.
 * One pass over the request columns; only a request that lacks a pod or failed is made an object.
 */
function forEachRefinement(timeline: Timeline, refine: (i: number, pod: string | undefined, refused: boolean) => void): void {
  // Built on the first request that needs it: most runs have none (every answer names its pod).
  let index: ConnectionIndex | undefined;
  const found: { i: number; pod: string | undefined; refused: boolean }[] = [];
  timeline.requests.scan((row) => {
    if (row.localPort === undefined) return;
    if (row.pod !== undefined && row.ok) return;
    const request = row.record();
    index ??= indexConnections(timeline.connections);
    const connection = connectionOf(timeline, request, index);
    if (!connection) return;
    const pod = request.pod === undefined ? connection.pod : undefined;
    const refused = REFINABLE.has(request.outcome) && (connection.upstream === 'refused' || connection.upstream === 'no-endpoint');
    if (pod !== undefined || refused) found.push({ i: row.i, pod, refused });
  });
  for (const f of found) refine(f.i, f.pod, f.refused);
}

function refinement(pod: string | undefined, refused: boolean): { pod?: string; outcome?: Outcome } {
  return { ...(pod !== undefined ? { pod } : {}), ...(refused ? { outcome: 'refused' as const } : {}) };
}

/**
 * Fills `pod` on requests that lack it from the balancer's record and turns failures on connections
 * the pod refused (or that the balancer had no endpoint for: kube-proxy rejects those) into
 * `refused`. Changes the requests in place; idempotent. Returns how many requests it changed.
 */
export function joinRequestsToConnections(timeline: Timeline): number {
  let changed = 0;
  forEachRefinement(timeline, (i, pod, refused) => {
    timeline.requests.refine(i, refinement(pod, refused));
    changed++;
  });
  return changed;
}

/**
 * The same join without touching `timeline`: its requests as they read once joined. The columns the
 * join changes are copied only when it changes something, so the answer is `timeline.requests`
 * itself when nothing changes (the usual case: the run already joined them).
 */
export function joinedRequests(timeline: Timeline): RequestTable {
  let requests = timeline.requests;
  forEachRefinement(timeline, (i, pod, refused) => {
    if (requests === timeline.requests) requests = requests.copy();
    requests.refine(i, refinement(pod, refused));
  });
  return requests;
}

/** The pod in front of a stream, and whether the balancer says that pod refused the stream's connection. */
export interface FrontPod {
  pod?: string;
  refused: boolean;
}

/**
 * The pod in front of each stream: behind a gateway, the gateway pod its handshake named, else the
 * one the balancer routed its connection to (a stream refused or cut before any pod answered names
 * none); the stream's own `pod` when it went to the backends directly. Without a balancer record
 * (a cluster), what the stream says. A stream that failed on a connection the pod refused (or the
 * balancer had no endpoint for) is `refused`, as for requests: the client saw only a reset or EOF.
 */
export function frontPods(timeline: Timeline, streams: readonly StreamRecord[]): Map<StreamRecord, FrontPod> {
  let index: ConnectionIndex | undefined;
  const front = new Map<StreamRecord, FrontPod>();
  for (const s of streams) {
    const failed = REFINABLE.has(s.ending as Outcome);
    // The balancer is asked only what the stream itself cannot say.
    const connection =
      s.localPort !== undefined && s.service !== undefined && (s.gateway === undefined || failed)
        ? connectionOf(timeline, s, (index ??= indexConnections(timeline.connections)))
        : undefined;
    const pod = s.gateway ?? connection?.pod ?? s.pod;
    const refused = failed && (connection?.upstream === 'refused' || connection?.upstream === 'no-endpoint');
    front.set(s, { ...(pod !== undefined ? { pod } : {}), refused });
  }
  return front;
}
