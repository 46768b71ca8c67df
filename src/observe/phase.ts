// Where a pod was in its shutdown at a given moment: the phase every failed request is attributed to.
// The order of steps is the Kubernetes pod termination sequence
// (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination): the API
// receives the delete, the endpoint turns `ready:false, serving:true, terminating:true`, the preStop
// hook runs, then the stop signal, then SIGKILL when terminationGracePeriodSeconds runs out. The
// load balancer stops sending new connections to the pod on its own schedule (kube-proxy sync, a
// cloud load balancer's deregistration delay), which is why the label says which side of that a
// moment was on. Pure functions over the Timeline.

import type { Timeline, TimelineEvent } from '../model/timeline.ts';
import { reloadPhase } from './processes.ts';

export type Lifecycle =
  | 'starting'
  | 'ready'
  | 'terminating (preStop)'
  | 'terminating'
  | 'after SIGTERM'
  | 'after exit'
  | 'after SIGKILL'
  | 'unknown';

export interface Phase {
  /** The pod the moment belongs to; undefined when none was known (see `attributedTo`). */
  pod: string | undefined;
  lifecycle: Lifecycle;
  /** Whether the Service's load balancer still sent new connections to the pod at t; undefined when it never reported on it. */
  programmed: boolean | undefined;
  /** One phrase for humans, e.g. `after SIGTERM of backend-2, before load balancer deprogrammed`. */
  label: string;
  /** With no pod known: the pod most recently deleted before t, whose lifecycle and programming the phase reports. */
  attributedTo?: string;
}

/** Key times of one pod on the run clock (ms); undefined when it did not happen during the run. */
export interface PodLifecycle {
  pod: string;
  workload?: string;
  created?: number;
  started?: number;
  ready?: number;
  deleteIssued?: number;
  gracePeriodSeconds?: number;
  /** First time a load balancer began sending it new connections. */
  programmed?: number;
  /** When the last load balancer stopped sending it new connections for good (undefined if one still did at the end). */
  deprogrammed?: number;
  preStopStart?: number;
  preStopEnd?: number;
  /** SIGTERM: the sigterm event, or an exit by SIGTERM when no sigterm event was recorded. */
  sigterm?: number;
  exit?: number;
  exitCode?: number | null;
  exitSignal?: string;
  /**
   * Where `sigterm` comes from: the harness sent it (the local provider), the node agent that sent it
   * wrote it as an Event (zerodrop's own node agent, on the netns provider's cluster), the app logged
   * it (a cluster), or the exit was by it (code 143). `unseen`: no stop signal on the Timeline, the
   * pod's delete or exit seen by a provider that does not send the signal itself (a cluster: the
   * kubelet sends it, and only an app that logs it shows when). Absent: the pod got no stop signal.
   */
  sigtermSource?: 'harness' | 'node-agent' | 'pod-log' | 'exit' | 'unseen';
  /** SIGKILL: the sigkill event, or an exit by SIGKILL when no sigkill event was recorded. */
  killed?: number;
  removed?: number;
}

/** Seconds with three decimals: 4812.4 -> "4.812". */
export function formatSeconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

// Lifecycles are asked for once per failed request; cache per timeline, invalidated as events are appended.
const cache = new WeakMap<Timeline, { events: number; pods: Map<string, PodLifecycle> }>();

export function podLifecycle(timeline: Timeline, pod: string): PodLifecycle {
  let entry = cache.get(timeline);
  if (!entry || entry.events !== timeline.events.length) {
    entry = { events: timeline.events.length, pods: new Map() };
    cache.set(timeline, entry);
  }
  let lifecycle = entry.pods.get(pod);
  if (!lifecycle) {
    lifecycle = computeLifecycle(timeline, pod);
    entry.pods.set(pod, lifecycle);
  }
  return lifecycle;
}

function computeLifecycle(timeline: Timeline, pod: string): PodLifecycle {
  const events = timeline.events.filter((e) => e.pod === pod).sort((a, b) => a.t - b.t);
  const first = (kind: TimelineEvent['kind']) => events.find((e) => e.kind === kind);
  const lc: PodLifecycle = { pod };
  const workload = events.find((e) => e.workload !== undefined)?.workload;
  if (workload !== undefined) lc.workload = workload;
  lc.created = first('pod-created')?.t;
  lc.started = first('pod-started')?.t;
  lc.ready = first('pod-ready')?.t;
  const del = first('delete-issued');
  lc.deleteIssued = del?.t;
  const grace = del?.detail?.['gracePeriodSeconds'];
  if (typeof grace === 'number') lc.gracePeriodSeconds = grace;
  lc.programmed = first('lb-programmed')?.t;
  lc.deprogrammed = finalDeprogram(events);
  lc.preStopStart = first('prestop-start')?.t;
  lc.preStopEnd = first('prestop-end')?.t;
  const exit = first('exit');
  lc.exit = exit?.t;
  if (exit) {
    const code = exit.detail?.['code'];
    lc.exitCode = typeof code === 'number' ? code : null;
    const signal = exit.detail?.['signal'];
    if (typeof signal === 'string') lc.exitSignal = signal;
  }
  // A cluster shows the stop signal only where the app logs it, but an exit by SIGTERM (code 143)
  // proves one came, no later than the exit: a process that dies of the signal has no drain at all.
  // The node agent that sent it (zerodrop's own, on its cluster) says when; an app's log line, when
  // both are there, only that the app saw it.
  const signals = events.filter((e) => e.kind === 'sigterm');
  const sigterm = signals.find((e) => e.detail?.['observed'] === 'node-agent') ?? signals[0];
  lc.sigterm = sigterm?.t ?? (lc.exitSignal === 'SIGTERM' ? lc.exit : undefined);
  lc.killed = first('sigkill')?.t ?? (lc.exitSignal === 'SIGKILL' ? lc.exit : undefined);
  // A delete or exit seen from outside the node (a cluster's API response or watch) comes from a
  // provider that does not send the stop signal itself: its absence means unseen, not unsent.
  const fromCluster = [del, exit].some((e) => typeof e?.detail?.['observed'] === 'string');
  const observed = sigterm?.detail?.['observed'];
  if (sigterm) lc.sigtermSource = observed === undefined ? 'harness' : observed === 'node-agent' ? 'node-agent' : 'pod-log';
  else if (lc.sigterm !== undefined) lc.sigtermSource = 'exit';
  else if (fromCluster) lc.sigtermSource = 'unseen';
  lc.removed = first('pod-removed')?.t;
  // Drop the keys of steps that did not happen so that the record reads (and serialises) cleanly.
  for (const key of Object.keys(lc) as (keyof PodLifecycle)[]) if (lc[key] === undefined) delete lc[key];
  return lc;
}

/** Services (by name) whose balancer sends new connections to the pod after replaying `events` up to `t`. */
function programmedServices(events: readonly TimelineEvent[], t = Infinity): Set<string> {
  const services = new Set<string>();
  for (const e of events) {
    if (e.t > t) break;
    if (e.kind === 'lb-programmed') services.add(e.service ?? '');
    else if (e.kind === 'lb-deprogrammed') services.delete(e.service ?? '');
  }
  return services;
}

/** The deprogram after which no balancer had the pod any more, if it ended that way. */
function finalDeprogram(sortedPodEvents: readonly TimelineEvent[]): number | undefined {
  const services = new Set<string>();
  let emptiedAt: number | undefined;
  for (const e of sortedPodEvents) {
    if (e.kind === 'lb-programmed') {
      services.add(e.service ?? '');
      emptiedAt = undefined;
    } else if (e.kind === 'lb-deprogrammed') {
      services.delete(e.service ?? '');
      if (services.size === 0) emptiedAt ??= e.t;
    }
  }
  return services.size === 0 ? emptiedAt : undefined;
}

/** Whether any Service's balancer sent new connections to `pod` at `t`; undefined if no balancer ever reported on it. */
export function programmedAt(timeline: Timeline, pod: string, t: number): boolean | undefined {
  const events = timeline.events
    .filter((e) => e.pod === pod && (e.kind === 'lb-programmed' || e.kind === 'lb-deprogrammed'))
    .sort((a, b) => a.t - b.t);
  if (events.length === 0) return undefined;
  return programmedServices(events, t).size > 0;
}

function lifecycleAt(lc: PodLifecycle, t: number): Lifecycle {
  const by = (x: number | undefined) => x !== undefined && x <= t;
  if (by(lc.killed)) return 'after SIGKILL';
  if (by(lc.exit)) return 'after exit';
  if (by(lc.sigterm)) return 'after SIGTERM';
  if (by(lc.preStopStart) && !by(lc.preStopEnd)) return 'terminating (preStop)';
  if (by(lc.deleteIssued)) return 'terminating';
  if (by(lc.ready)) return 'ready';
  if (by(lc.created) || by(lc.started)) return 'starting';
  return 'unknown';
}

/** What reached the pod past the Service's balancer (a lagging node's request) is told without it: the balancer did not route it. */
const DIRECT = 'sent straight to the pod (a node not yet deprogrammed)';

function describe(lc: PodLifecycle, lifecycle: Lifecycle, programmed: boolean | undefined, t: number, direct: boolean): string {
  const pod = lc.pod;
  let head: string;
  switch (lifecycle) {
    case 'unknown':
      return lc.created !== undefined && t < lc.created ? `before creation of ${pod}` : `${pod} (no lifecycle events)`;
    case 'starting':
      return `before ready of ${pod}`;
    case 'ready':
      return `before delete of ${pod}`;
    case 'terminating':
      head = lc.preStopEnd !== undefined && lc.preStopEnd <= t ? `after preStop of ${pod}` : `after delete of ${pod}`;
      break;
    case 'terminating (preStop)':
      head = `terminating (preStop) of ${pod}`;
      break;
    default:
      head = `${lifecycle} of ${pod}`;
  }
  if (direct) return `${head}, ${DIRECT}`;
  if (lc.deprogrammed !== undefined && lc.deprogrammed <= t) return `${head}, after load balancer deprogrammed`;
  if (programmed === true) return `${head}, before load balancer deprogrammed`;
  return head;
}

/**
 * The phase of `pod` at `t`. With no pod (the request failed before any pod answered or the balancer
 * had none to route to), the moment is attributed to the pod most recently deleted at or before `t`:
 * `no pod (balancer had no endpoint); 0.812 s after delete of backend-2`. `noPodReason` is the part
 * before the semicolon (default `no pod known`). `direct`: what happened at `t` reached the pod past
 * the Service's balancer (RequestRecord.direct), so the balancer's state is not its phase.
 */
export function phaseAt(timeline: Timeline, pod: string | undefined, t: number, noPodReason = 'no pod known', direct = false): Phase {
  if (pod !== undefined) {
    const lc = podLifecycle(timeline, pod);
    const lifecycle = lifecycleAt(lc, t);
    const programmed = programmedAt(timeline, pod, t);
    const reload = reloadPhase(timeline, pod, t);
    const told = describe(lc, lifecycle, programmed, t, direct);
    // A pod reloaded and never deleted is told by its reload alone ("before delete" says nothing).
    const label = reload === undefined ? told : lifecycle === 'ready' ? reload : `${told}, ${reload}`;
    return { pod, lifecycle, programmed, label };
  }
  // A pod reloaded (not deleted) is where a failure with no pod known most likely met its end.
  const reloaded = lastReloadedBefore(timeline, t);
  if (reloaded && !timeline.events.some((e) => e.kind === 'delete-issued' && e.t <= t)) {
    const lc = podLifecycle(timeline, reloaded);
    return {
      pod: undefined,
      lifecycle: lifecycleAt(lc, t),
      programmed: programmedAt(timeline, reloaded, t),
      label: `${noPodReason}; ${reloadPhase(timeline, reloaded, t) ?? ''}`,
      attributedTo: reloaded,
    };
  }
  let deleted: TimelineEvent | undefined;
  for (const e of timeline.events) {
    if (e.kind === 'delete-issued' && e.pod !== undefined && e.t <= t && (!deleted || e.t >= deleted.t)) deleted = e;
  }
  if (!deleted?.pod) return { pod: undefined, lifecycle: 'unknown', programmed: undefined, label: noPodReason };
  const lc = podLifecycle(timeline, deleted.pod);
  return {
    pod: undefined,
    lifecycle: lifecycleAt(lc, t),
    programmed: programmedAt(timeline, deleted.pod, t),
    label: `${noPodReason}; ${formatSeconds(t - deleted.t)} s after delete of ${deleted.pod}`,
    attributedTo: deleted.pod,
  };
}

/** The pod whose reload began last at or before `t`. */
function lastReloadedBefore(timeline: Timeline, t: number): string | undefined {
  let last: TimelineEvent | undefined;
  for (const e of timeline.events) if (e.kind === 'reload-start' && e.pod !== undefined && e.t <= t && (!last || e.t >= last.t)) last = e;
  return last?.pod;
}
