// The Timeline is the one record of a run: every provider event, every connection the load balancer
// routed and every request the load sent, on one monotonic clock. `t` is milliseconds since the run's
// origin (see observe/clock.ts). Assertions read only this; they never talk to a provider.

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
  | 'load-start'
  | 'load-stop'
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

/** Outcome class of one request, stream or packet (DESIGN.md "Traffic and accounting"). */
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
  /** Local port of the client's socket: joins the request to the balancer's connection record. */
  localPort?: number;
  /** True when this request opened its connection (first request on a fresh socket). */
  newConnection: boolean;
  /** When the client's socket for this request was opened, on the run clock. */
  connectionStart?: number;
  path?: string;
  error?: string;
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

/** A sample of a load generator's own health, taken while it ran. */
export interface HarnessSample {
  t: number;
  /** Event loop delay observed in the preceding window, ms. */
  loopDelayMaxMs: number;
}

export interface Timeline {
  /** Wall-clock time (epoch ms) of t = 0, for humans. */
  originEpochMs: number;
  events: TimelineEvent[];
  requests: RequestRecord[];
  connections: ConnectionRecord[];
  /** Captured stdout/stderr per pod, line by line with arrival time. */
  podOutput: Record<string, { t: number; stream: 'stdout' | 'stderr'; line: string }[]>;
  harness: HarnessSample[];
}

export function emptyTimeline(originEpochMs: number): Timeline {
  return { originEpochMs, events: [], requests: [], connections: [], podOutput: {}, harness: [] };
}

/** Events of one kind for one pod, in time order. */
export function eventsOf(timeline: Timeline, kind: EventKind, pod?: string): TimelineEvent[] {
  return timeline.events.filter((e) => e.kind === kind && (pod === undefined || e.pod === pod));
}

export function firstEvent(timeline: Timeline, kind: EventKind, pod?: string): TimelineEvent | undefined {
  return timeline.events.find((e) => e.kind === kind && (pod === undefined || e.pod === pod));
}
