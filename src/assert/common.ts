// Shared pieces of the assertions: the context they run in, number and time formatting, pod
// references, failure descriptions and per-pod aggregation.

import { connectionOf, indexConnections, type ConnectionIndex } from '../observe/join.ts';
import { formatSeconds, phaseAt, podLifecycle, type Phase, type PodLifecycle } from '../observe/phase.ts';
import type { PodRef } from '../model/scenario.ts';
import type { RequestRecord, Timeline } from '../model/timeline.ts';
import { combineVerdicts, type AssertionResult } from '../model/verdict.ts';

export interface AssertContext {
  timeline: Timeline;
}

export { formatSeconds };

/** `t=4.812 s` */
export function at(t: number): string {
  return `t=${formatSeconds(t)} s`;
}

/** `1.250 s` */
export function secs(ms: number): string {
  return `${formatSeconds(ms)} s`;
}

/** 48210 -> "48,210" */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}

/** `1 request` / `3 requests` */
export function plural(n: number, word: string, many = `${word}s`): string {
  return `${count(n)} ${n === 1 ? word : many}`;
}

/** `the one request` / `all 3 requests`: for pass messages. */
export function allOf(n: number, word: string, many = `${word}s`): string {
  return n === 1 ? `the one ${word}` : `all ${count(n)} ${many}`;
}

/** Counts by key in order of frequency: `2 refused, 1 reset`. */
export function tally(keys: readonly string[]): { byKey: Record<string, number>; text: string } {
  const byKey: Record<string, number> = {};
  for (const k of keys) byKey[k] = (byKey[k] ?? 0) + 1;
  const text = Object.entries(byKey)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([k, n]) => `${count(n)} ${k}`)
    .join(', ');
  return { byKey, text };
}

/** Last moment anything was recorded: "when the run ended" for things that never happened. */
export function runEnd(timeline: Timeline): number {
  let end = 0;
  for (const e of timeline.events) end = Math.max(end, e.t);
  timeline.requests.scan((r) => {
    end = Math.max(end, r.end);
  });
  for (const c of timeline.connections) end = Math.max(end, c.close ?? c.open);
  return end;
}

export function describeRef(ref: PodRef): string {
  return 'step' in ref ? `step "${ref.step}"` : `workload "${ref.workload}"`;
}

/** The workload of each pod, from any event that names both. */
function workloadsOfPods(timeline: Timeline): Map<string, string> {
  const map = new Map<string, string>();
  for (const e of timeline.events) {
    if (e.pod !== undefined && e.workload !== undefined && !map.has(e.pod)) map.set(e.pod, e.workload);
  }
  return map;
}

/**
 * The pods a PodRef names. A step: the pod its chaos event names (detail.step); for a step that
 * names no pod (scale, rollout restart), every pod of its workload deleted at or after it. A
 * workload: every pod of it that got a delete-issued. In order of deletion, without duplicates.
 */
export function resolvePods(ref: PodRef, timeline: Timeline): string[] {
  const workloads = workloadsOfPods(timeline);
  const deletes = timeline.events.filter((e) => e.kind === 'delete-issued' && e.pod !== undefined).sort((a, b) => a.t - b.t);
  const pods: string[] = [];
  const add = (pod: string | undefined) => {
    if (pod !== undefined && !pods.includes(pod)) pods.push(pod);
  };
  if ('step' in ref) {
    for (const e of timeline.events) {
      if (e.kind !== 'chaos' || e.detail?.['step'] !== ref.step) continue;
      if (e.pod !== undefined) add(e.pod);
      else if (e.workload !== undefined) {
        for (const d of deletes) {
          if (d.t >= e.t && (d.workload ?? workloads.get(d.pod ?? '')) === e.workload) add(d.pod);
        }
      }
    }
  } else {
    for (const d of deletes) if ((d.workload ?? workloads.get(d.pod ?? '')) === ref.workload) add(d.pod);
  }
  return pods;
}

export interface PodCheck {
  verdict: AssertionResult['verdict'];
  message: string;
  details?: Record<string, unknown>;
}

/**
 * Runs `check` for every pod `ref` names and combines: fail beats inconclusive beats pass; the
 * message is the pods' messages joined (failures first). No pod at all is inconclusive.
 */
export function perPod(
  name: string,
  ref: PodRef,
  ctx: AssertContext,
  check: (pod: string, lifecycle: PodLifecycle) => PodCheck,
): AssertionResult {
  const pods = resolvePods(ref, ctx.timeline);
  if (pods.length === 0) {
    const ran = 'step' in ref && ctx.timeline.events.some((e) => e.kind === 'chaos' && e.detail?.['step'] === ref.step);
    return {
      name,
      verdict: 'inconclusive',
      message:
        'step' in ref
          ? ran
            ? `${describeRef(ref)} deleted no pod: nothing to check`
            : `${describeRef(ref)} never ran: no pod to check`
          : `no pod of workload "${ref.workload}" was deleted: nothing to check`,
      details: { ref },
    };
  }
  const checks = pods.map((pod) => ({ pod, ...check(pod, podLifecycle(ctx.timeline, pod)) }));
  const rank = { fail: 0, inconclusive: 1, pass: 2 } as const;
  const ordered = [...checks].sort((a, b) => rank[a.verdict] - rank[b.verdict]);
  return {
    name,
    verdict: combineVerdicts(checks.map((c) => ({ name, verdict: c.verdict, message: c.message }))),
    message: ordered.map((c) => c.message).join('; '),
    details: { ref, pods: Object.fromEntries(checks.map((c) => [c.pod, { verdict: c.verdict, ...c.details }])) },
  };
}

/** When a request failed: its end, except a timeout, which is about the moment it was sent. */
export function failureTime(r: RequestRecord): number {
  return r.outcome === 'timeout' ? r.start : r.end;
}

export interface FailureRow {
  id: number;
  load: string;
  t: number;
  start: number;
  end: number;
  pod: string | undefined;
  outcome: string;
  status?: number;
  phase: string;
  error?: string;
}

export const FIRST_FAILURES = 20;

/** Phases of failed requests, with the no-pod reason taken from the balancer's record when it has one. */
export class FailureDescriber {
  private readonly timeline: Timeline;
  private index: ConnectionIndex | undefined;

  constructor(timeline: Timeline) {
    this.timeline = timeline;
  }

  phase(r: RequestRecord): Phase {
    let reason = 'no pod known';
    if (r.pod === undefined) {
      this.index ??= indexConnections(this.timeline.connections);
      const c = connectionOf(this.timeline, r, this.index);
      if (c?.upstream === 'no-endpoint') reason = 'no pod (balancer had no endpoint)';
      else if (c) reason = 'no pod (balancer did not say which)';
    }
    return phaseAt(this.timeline, r.pod, failureTime(r), reason, r.direct === true);
  }

  row(r: RequestRecord): FailureRow {
    const row: FailureRow = {
      id: r.id,
      load: r.load,
      t: failureTime(r),
      start: r.start,
      end: r.end,
      pod: r.pod,
      outcome: r.outcome,
      phase: this.phase(r).label,
    };
    if (r.status !== undefined) row.status = r.status;
    if (r.error !== undefined) row.error = r.error;
    return row;
  }

  /**
   * `3 of 48,210 requests failed (2 refused, 1 reset); first at t=4.812 s on backend-2, phase "..."`
   * plus the details: byOutcome, byPhase (pod and lifecycle), firstFailures.
   */
  summarize(failed: readonly RequestRecord[], total: number, what = 'requests'): { message: string; details: Record<string, unknown> } {
    const sorted = [...failed].sort((a, b) => failureTime(a) - failureTime(b));
    const outcomes = tally(sorted.map((r) => (r.outcome === 'status' && r.status !== undefined ? `status ${r.status}` : r.outcome)));
    const phases = tally(
      sorted.map((r) => {
        const p = this.phase(r);
        return p.pod !== undefined ? `${p.lifecycle} of ${p.pod}` : `no pod, ${p.attributedTo !== undefined ? `${p.lifecycle} of ${p.attributedTo}` : 'no pod deleted yet'}`;
      }),
    );
    const first = sorted[0];
    let message = `${count(failed.length)} of ${count(total)} ${what} failed (${outcomes.text})`;
    if (first) {
      const where = first.pod !== undefined ? ` on ${first.pod}` : '';
      message += `; first at ${at(failureTime(first))}${where}, phase "${this.phase(first).label}"`;
    }
    return {
      message,
      details: {
        failed: failed.length,
        total,
        byOutcome: outcomes.byKey,
        byPhase: phases.byKey,
        firstFailures: sorted.slice(0, FIRST_FAILURES).map((r) => this.row(r)),
      },
    };
  }
}

/**
 * The reference moment `from` of a pod, or why there is none: a pod never deleted is inconclusive
 * (the chaos did not happen); one deleted but never sent SIGTERM is a failure (killed or gone without
 * the stop signal), except where the signal is unseen (`sigtermSource: 'unseen'`, a cluster): then the
 * assertion is inconclusive unless it can judge from `signalNotBefore`.
 */
export function reference(lc: PodLifecycle, from: 'delete' | 'sigterm'): number | PodCheck {
  if (from === 'delete' && lc.deleteIssued !== undefined) return lc.deleteIssued;
  if (from === 'sigterm' && lc.sigterm !== undefined) return lc.sigterm;
  if (lc.deleteIssued === undefined) {
    return { verdict: 'inconclusive', message: `${lc.pod} was never deleted: nothing to measure` };
  }
  if (lc.sigtermSource === 'unseen') {
    return { verdict: 'inconclusive', message: `${unseenSignal(lc)}: nothing measured from it`, details: { delete: lc.deleteIssued, observed: 'no stop signal' } };
  }
  const end =
    lc.killed !== undefined
      ? `killed by SIGKILL at ${at(lc.killed)}`
      : lc.exit !== undefined
        ? `exited at ${at(lc.exit)}`
        : 'still running when the run ended';
  return { verdict: 'fail', message: `${lc.pod} got no SIGTERM after its delete at ${at(lc.deleteIssued)} (${end})` };
}

/**
 * Where the stop signal is unseen (a cluster), the delete: no stop signal comes before it, so a time
 * measured from it is an upper bound of the time from the signal. Undefined where the signal is seen
 * or the pod was never deleted.
 */
export function signalNotBefore(lc: PodLifecycle): number | undefined {
  return lc.sigtermSource === 'unseen' ? lc.deleteIssued : undefined;
}

/**
 * The moment a time after SIGTERM is measured from: the stop signal, or where it is unseen (a
 * cluster) the delete, which no signal precedes, so that a time measured from it is an upper bound
 * (`bound`) of the time from the signal: it proves a maximum held and a minimum missed, nothing else.
 */
export function fromStopSignal(lc: PodLifecycle): { t: number; since: 'SIGTERM' | 'its delete'; bound: boolean } | PodCheck {
  const notBefore = signalNotBefore(lc);
  if (notBefore !== undefined) return { t: notBefore, since: 'its delete', bound: true };
  const t = reference(lc, 'sigterm');
  return typeof t === 'number' ? { t, since: 'SIGTERM', bound: false } : t;
}

/** "backend-2 when it was deleted", "gateway-2, gateway-1 when they were deleted": for messages. */
export function whenDeleted(pods: Iterable<string>): string {
  const names = [...pods];
  return `${names.join(', ')} when ${names.length === 1 ? 'it was' : 'they were'} deleted`;
}

/** Why a pod's stop signal is not on the Timeline, for messages. */
export function unseenSignal(lc: PodLifecycle): string {
  return `${lc.pod}'s stop signal is not on the Timeline (a cluster shows it only where the app logs it, as the reference apps' {"ev":"sigterm"} line)`;
}
