// The Timeline is the one record of a run: every provider event, every connection the load balancer
// routed and every request the load sent, on one monotonic clock. `t` is milliseconds since the run's
// origin (see observe/clock.ts). Assertions read only this; they never talk to a provider.

import { RequestTable } from './request-table.ts';

/** What happened to a pod, a Service or the run. Names are stable: reports and assertions key on them. */
export type EventKind =
  | 'pod-created' // the API accepted the pod (the controller decided to create it)
  | 'pod-started' // its main process is running
  | 'pod-ready' // readiness probe passed (successThreshold reached)
  | 'pod-unready' // readiness probe failed (failureThreshold reached)
  | 'delete-issued' // the API received the delete; detail.gracePeriodSeconds
  | 'endpoint-changed' // EndpointSlice conditions changed; detail.ready/serving/terminating, or detail.removed
  | 'lb-programmed' // the Service's load balancer began sending new connections to the pod
  | 'lb-deprogrammed' // the load balancer stopped sending new connections to the pod
  | 'prestop-start'
  | 'prestop-end' // detail.exitCode for exec hooks, detail.timedOut when the grace period ran out
  | 'sigterm' // the stop signal was sent to the main process; detail.signal
  | 'exit' // the main process ended; detail.code / detail.signal
  | 'sigkill' // the grace period expired and the pod's processes were killed
  | 'pod-removed' // the pod object is gone from the API
  | 'scale' // detail.from / detail.to
  | 'rollout-start'
  | 'rollout-complete'
  | 'chaos' // a chaos step ran; message says which
  | 'reload-start' // the pod's configuration reload began (signal sent, or command started); detail.how
  | 'reload-end' // the reload command ended (detail.exitCode), or at once for a signal
  // a process of the pod's container appeared or ended (recorded for pods that reload): detail.pid,
  // detail.ppid, detail.command; the main process is the pod's own lifecycle
  | 'process-started'
  | 'process-exited'
  | 'load-start'
  | 'load-stop'
  | 'goaway' // an HTTP/2 client received GOAWAY; detail.load, localPort, lastStreamId, errorCode
  // the server closed (or reset) an HTTP/1.1 keep-alive connection between two requests without
  // having said `Connection: close`: a close that races the client's next request; pod: the pod
  // that answered its last request; detail.load, localPort, idleMs, how ('fin' or 'reset')
  | 'unannounced-close'
  | 'note';

export interface TimelineEvent {
  t: number;
  kind: EventKind;
  pod?: string;
  workload?: string;
  service?: string;
  message?: string;
  detail?: Record<string, unknown>;
}

/** Outcome class of one request, stream or packet (docs/architecture.md). */
export type Outcome =
  | 'ok'
  | 'status' // an HTTP response with a status >= 500 or an unexpected status
  | 'refused' // the connection was refused (no listener), at the balancer or the pod
  | 'reset' // the connection was reset
  | 'timeout'
  | 'eof' // the peer closed the connection before a complete response
  | 'goaway'
  | 'lost'
  | 'out-of-order'
  | 'duplicate'
  | 'error'; // anything else; `error` carries the message

export interface RequestRecord {
  id: number;
  /** Id of the LoadPhase that sent it. */
  load: string;
  /** Send time and completion (or failure) time on the run clock. */
  start: number;
  end: number;
  outcome: Outcome;
  status?: number;
  /** The pod that served it, as the response says (x-zerodrop-pod), or as the balancer routed it. */
  pod?: string;
  /**
   * Local port of the client's socket: joins the request to the balancer's connection record. Also
   * set for a connect that never completed (refused, reset, timed out), which has no connectionStart.
   */
  localPort?: number;
  /** True when this request opened its connection (first request on a fresh socket). */
  newConnection: boolean;
  /** When the client's socket for this request was opened, on the run clock. */
  connectionStart?: number;
  path?: string;
  error?: string;
  /** The Service the load sent to: joins the request to that Service's balancer records only. */
  service?: string;
  /**
   * Behind a gateway: the gateway pod that forwarded it (x-zerodrop-gateway). `pod` is then that
   * gateway pod too, the client-facing pod whose shutdown the request's phase is told against, and
   * `backendPod` the backend pod that answered it (x-zerodrop-pod).
   */
  gateway?: string;
  backendPod?: string;
  /** HTTP/2: the stream id the request was sent on. */
  streamId?: number;
  /**
   * Sent straight to `pod`, past the Service's balancer (a lagging node's, src/load/lagging-node.ts):
   * what it says of the pod holds, but it says nothing of what the balancer routed.
   */
  direct?: true;
}

/** One client connection as the Service's load balancer saw it. */
export interface ConnectionRecord {
  id: number;
  service: string;
  /** Port the client connected from (the balancer's view of the client's socket). */
  clientPort: number;
  /** Pod the balancer chose; undefined when it had no endpoint to send it to. */
  pod?: string;
  open: number;
  close?: number;
  /** How the balancer's upstream leg ended. */
  upstream: 'ok' | 'refused' | 'reset' | 'no-endpoint' | 'error' | 'open';
  bytesIn: number;
  bytesOut: number;
}

/**
 * One UDP flow (conntrack entry) as a Service's load balancer saw it: the client's address pinned to
 * one pod until it idles out or its endpoint stops serving (src/providers/local/udp-balancer.ts).
 */
export interface UdpFlowRecord {
  id: number;
  service: string;
  clientAddress: string;
  clientPort: number;
  /** Pod the balancer pinned the flow to; undefined when it had no endpoint (datagrams dropped). */
  pod?: string;
  open: number;
  /** Last datagram in either direction. */
  last: number;
  close?: number;
  /**
   * open: still tracked when the run ended; idle-timeout: conntrack's UDP timeout expired;
   * endpoint-flushed: the endpoint stopped serving or was removed, and kube-proxy cleared the entry;
   * no-endpoint: datagrams arrived while the Service had no endpoint and were dropped.
   */
  end: 'open' | 'idle-timeout' | 'endpoint-flushed' | 'no-endpoint' | 'error';
  packetsIn: number;
  packetsOut: number;
}

/** Consecutive lost sequence numbers of one flow, with the send times of the first and the last. */
export interface LossRange {
  from: number;
  to: number;
  firstSentAt: number;
  lastSentAt: number;
}

/**
 * One flow of a packet load (src/load/udp.ts), accounted packet by packet but stored compactly:
 * counters, RTT percentiles, the pods that answered, and the lost packets as ranges.
 */
export interface FlowRecord {
  load: string;
  flow: number;
  /** Local port the flow's datagrams left from (joins it to the balancer's UdpFlowRecord). */
  localPort?: number;
  start: number;
  /** Send time of its last packet. */
  end: number;
  sent: number;
  /** Distinct sequence numbers echoed back. */
  received: number;
  lost: number;
  duplicated: number;
  /** Echoes that arrived after one with a higher sequence number. */
  reordered: number;
  /** Packets sent more than the generator's late threshold after their scheduled time. */
  late: number;
  /** Lost packets whose echo did arrive, but later than the load's replyTimeoutMs. */
  lateEchoes?: number;
  rttMs?: { p50: number; p90: number; p99: number; max: number };
  /** Pods that echoed, in order of first echo, with the send times of the first and last packet each echoed. */
  pods: { pod: string; first: number; last: number; count: number }[];
  losses: LossRange[];
}

/**
 * Open connections per pod as a Service's load balancer saw them, sampled every 100 ms while they
 * change (a sample is written when a count differs from the previous one): the gateway's "active
 * connections" over time, what Envoy Gateway's shutdown manager polls before it lets Envoy exit.
 */
export interface ActiveConnectionsSample {
  t: number;
  service: string;
  /** Open connections by pod; a pod with none is listed with 0 once it had some. */
  active: Record<string, number>;
}

/** A sample of a load generator's own health, taken while it ran. */
/**
 * How a stream ended (src/load/tcp-stream.ts, websocket.ts, sse.ts):
 * - closed: the backend closed it the protocol's proper way for a drain, everything answered: TCP
 *   streams after `bye`, WebSocket with close code 1001 (going away), SSE by ending the body cleanly;
 * - stopped: the load ended it (it stopped, or a bounded stream had sent all its messages), after every message was echoed;
 * - eof: the backend closed it without announcing (WebSocket 1006, an SSE body aborted), or with
 *   messages unanswered;
 * - reset, refused, stall (an outstanding message or the next event did not come for the load's
 *   stallMs), error (a failed handshake, another WebSocket close code: see closeCode).
 */
export type StreamEnding = 'closed' | 'stopped' | 'eof' | 'reset' | 'refused' | 'stall' | 'error';

/**
 * One long-lived stream of a stream load, accounted message by message but stored compactly: a TCP
 * echo stream (src/load/tcp-stream.ts), a WebSocket or an SSE stream (src/load/websocket.ts,
 * src/load/sse.ts), or a gRPC server-streaming call (src/load/grpc.ts), where `sent` and `echoed`
 * are the messages received and those received in sequence, `byeAt` is the GOAWAY its connection
 * received, `status` its gRPC status and `expected` the messages it asked for; `unanswered` is what
 * a broken call was still owed. A gRPC stream that ended with OK is `closed`.
 */
export interface StreamRecord {
  load: string;
  /** The load's kind (which protocol's close is proper); tcp-stream when absent. */
  kind?: 'tcp-stream' | 'websocket' | 'sse';
  stream: number;
  localPort?: number;
  /** The pod that served it, as its greeting (TCP) or its response header (WebSocket, SSE) said. */
  pod?: string;
  /**
   * Behind a gateway: the gateway pod that forwarded it, as its handshake response said
   * (x-zerodrop-gateway); absent there, the balancer's connection record names it (join.ts).
   */
  gateway?: string;
  /** The Service the load connected to: joins the stream to that Service's balancer records only. */
  service?: string;
  start: number;
  end: number;
  ending: StreamEnding;
  /** Messages sent (TCP, WebSocket); SSE: events received. */
  sent: number;
  /** Messages echoed back in order; SSE: events received in order. */
  echoed: number;
  /** Sent and never echoed (WebSocket: outstanding when the stream closed, less `crossed`). */
  unanswered: number;
  /**
   * WebSocket: messages outstanding at the backend's close frame that were sent less than one round
   * trip (the longest the stream measured) before it arrived: the close may have crossed them on the
   * wire, so no backend could answer them; the client knows them unanswered and may send them again.
   */
  crossed?: number;
  /** Echoes that were not the next expected message (out of order, duplicated or corrupt). */
  mismatched: number;
  /** SSE: event ids skipped, counting from the Last-Event-ID the stream resumed from. */
  lost?: number;
  /** SSE: events whose id was not past the last one received, counting the Last-Event-ID resumed from. */
  duplicated?: number;
  /** When the backend announced its drain (TCP `bye`; WebSocket: its close frame; SSE: its `retry` hint before the end). */
  byeAt?: number;
  /** WebSocket: the close code the client saw (1001 going away, 1006 abnormal: no close frame). */
  closeCode?: number;
  /** SSE: the Last-Event-ID the stream was opened with, and the last `retry` the server sent, ms. */
  resumedFrom?: string;
  retryMs?: number;
  lastEchoAt?: number;
  error?: string;
  /** gRPC: the call's status code name (OK, UNAVAILABLE, CANCELLED, ...). */
  status?: string;
  /** gRPC: messages the call asked for. */
  expected?: number;
}

/** One TURN allocation of a TURN load (one per flow), as the client saw it. */
export interface AllocationRecord {
  load: string;
  flow: number;
  /** Local port of the client's socket (joins it to the gateway Service's UdpFlowRecord). */
  localPort?: number;
  /** When the Allocate was sent, and when the allocation was usable (channel bound) or failed. */
  start: number;
  end: number;
  outcome: 'ok' | 'timeout' | 'rejected' | 'error';
  /** The server's STUN error code when it rejected a request. */
  code?: number;
  error?: string;
  /** The relayed transport address the server gave, "ip:port". */
  relayed?: string;
  /** The peer the allocation's channel is bound to, "ip:port". */
  peer?: string;
  /** How the allocation ended when the load closed it: deleted (Refresh 0 answered) or the server did not answer. */
  closed?: 'deleted' | 'no-answer';
}

export interface HarnessSample {
  t: number;
  /** Event loop delay observed in the preceding window, ms. */
  loopDelayMaxMs: number;
  /** How long the window was, ms (the interval, plus the sampling timer's own lateness). */
  windowMs?: number;
  /** CPU time the harness process (all its threads) used in the window, ms. */
  cpuMs?: number;
  /** Garbage collection pauses that began in the window, ms in all. */
  gcMs?: number;
  /** How long the harness's main thread was runnable but waited for a core in the window, ms (Linux). */
  waitMs?: number;
  /** CPU time the hypervisor took from the machine in the window, summed over its CPUs, ms (Linux, 10 ms steps). */
  stealMs?: number;
  /** The longest synchronous call timed on the main thread that ended in the window (src/state/blocking-calls.ts). */
  longestCall?: { what: string; ms: number };
}

export interface Timeline {
  /** Wall-clock time (epoch ms) of t = 0, for humans. */
  originEpochMs: number;
  events: TimelineEvent[];
  /** Every request, by column (src/model/request-table.ts); JSON holds only the failed ones. */
  requests: RequestTable;
  connections: ConnectionRecord[];
  /** Captured stdout/stderr per pod, line by line with arrival time. */
  podOutput: Record<string, { t: number; stream: 'stdout' | 'stderr'; line: string }[]>;
  harness: HarnessSample[];
  /** Open connections per pod over time (local provider); absent when nothing recorded them. */
  activeConnections?: ActiveConnectionsSample[];
  /** UDP flows the Service load balancers tracked (absent when none ran). */
  udpFlows?: UdpFlowRecord[];
  /** Per-flow packet accounting of packet loads (absent when none ran). */
  flows?: FlowRecord[];
  /** Long-lived TCP streams of stream loads (absent when none ran). */
  streams?: StreamRecord[];
  /** TURN allocations of TURN loads (absent when none ran). */
  allocations?: AllocationRecord[];
}

export function emptyTimeline(originEpochMs: number): Timeline {
  return { originEpochMs, events: [], requests: new RequestTable(), connections: [], podOutput: {}, harness: [] };
}

/** Events of one kind for one pod, in time order. */
export function eventsOf(timeline: Timeline, kind: EventKind, pod?: string): TimelineEvent[] {
  return timeline.events.filter((e) => e.kind === kind && (pod === undefined || e.pod === pod));
}

export function firstEvent(timeline: Timeline, kind: EventKind, pod?: string): TimelineEvent | undefined {
  return timeline.events.find((e) => e.kind === kind && (pod === undefined || e.pod === pod));
}
