// The failed requests, each placed against the shutdown of the pod it hit: time, pod (and gateway
// pod when the request went through one), outcome, phase (FailureDescriber in src/assert/common.ts,
// the same words the assertions use), and how long after the relevant pod's SIGTERM it failed.

import { FailureDescriber, failureTime } from '../../assert/common.ts';
import type { RequestRecord, Timeline } from '../../model/timeline.ts';
import { podLifecycle } from '../../observe/phase.ts';

/** Failed requests kept individually in the report; the rest are counted. */
export const FAILURE_ROWS = 500;

export interface FailureView {
  id: number;
  load: string;
  t: number;
  /** How long the request had been running when it failed. */
  durationMs: number;
  pod: string | undefined;
  gateway: string | undefined;
  /** Behind a gateway: the backend pod that answered, when one did. */
  backend: string | undefined;
  outcome: string;
  phase: string;
  /** The lifecycle word of the phase (`after SIGTERM`, ...), for grouping. */
  lifecycle: string;
  /** Offset from the SIGTERM of the pod the failure is attributed to. */
  sinceSigterm?: { pod: string; ms: number };
  error?: string;
}

export interface FailureGroup {
  pod: string;
  lifecycle: string;
  count: number;
  first: number;
  last: number;
  sigtermPod?: string;
  minSinceSigterm?: number;
  maxSinceSigterm?: number;
}

export interface FailureAnalysis {
  total: number;
  requests: number;
  rows: FailureView[];
  groups: FailureGroup[];
  byOutcome: Record<string, number>;
  /** Whether any request carries a gateway pod (then the table shows that column). */
  viaGateway: boolean;
}

/** The gateway pod a request passed through, when the load generator recorded one. */
export function gatewayOf(r: RequestRecord): string | undefined {
  return r.gateway;
}

function outcomeText(r: RequestRecord): string {
  return r.outcome === 'status' && r.status !== undefined ? `status ${r.status}` : r.outcome;
}

/**
 * The SIGTERM a failure is measured from: the gateway pod's, else the serving pod's, else (no pod
 * known, or neither was stopped) the SIGTERM nearest before the failure, else the first after it.
 */
export function sigtermReference(timeline: Timeline, pods: readonly (string | undefined)[], t: number): { pod: string; ms: number } | undefined {
  for (const pod of pods) {
    if (pod === undefined) continue;
    const sigterm = podLifecycle(timeline, pod).sigterm;
    if (sigterm !== undefined) return { pod, ms: t - sigterm };
  }
  let before: { pod: string; t: number } | undefined;
  let after: { pod: string; t: number } | undefined;
  for (const e of timeline.events) {
    if (e.kind !== 'sigterm' || e.pod === undefined) continue;
    if (e.t <= t && (!before || e.t >= before.t)) before = { pod: e.pod, t: e.t };
    if (e.t > t && (!after || e.t < after.t)) after = { pod: e.pod, t: e.t };
  }
  const ref = before ?? after;
  return ref ? { pod: ref.pod, ms: t - ref.t } : undefined;
}

export function analyzeFailures(timeline: Timeline, limit = FAILURE_ROWS): FailureAnalysis {
  const failed = timeline.requests.failed().sort((a, b) => failureTime(a) - failureTime(b));
  const describer = new FailureDescriber(timeline);
  const byOutcome: Record<string, number> = {};
  const groups = new Map<string, FailureGroup>();
  const rows: FailureView[] = [];
  let viaGateway = false;
  timeline.requests.scan((r) => {
    if (!viaGateway && gatewayOf(r) !== undefined) viaGateway = true;
  });

  for (const r of failed) {
    const t = failureTime(r);
    const outcome = outcomeText(r);
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
    const gateway = gatewayOf(r);
    const phase = describer.phase(r);
    const since = sigtermReference(timeline, [gateway, r.pod, phase.attributedTo], t);
    // Group by the pod whose shutdown the failure belongs to: the gateway it went through, else its backend.
    const pod = gateway ?? r.pod ?? (phase.attributedTo !== undefined ? `no pod (${phase.attributedTo})` : 'no pod');
    const lifecycle = phase.lifecycle;
    const key = `${pod}\u0000${lifecycle}`;
    const group = groups.get(key) ?? { pod, lifecycle, count: 0, first: t, last: t };
    group.count++;
    group.first = Math.min(group.first, t);
    group.last = Math.max(group.last, t);
    if (since) {
      group.sigtermPod ??= since.pod;
      group.minSinceSigterm = Math.min(group.minSinceSigterm ?? Infinity, since.ms);
      group.maxSinceSigterm = Math.max(group.maxSinceSigterm ?? -Infinity, since.ms);
    }
    groups.set(key, group);
    if (rows.length < limit) {
      const row: FailureView = {
        id: r.id,
        load: r.load,
        t,
        durationMs: r.end - r.start,
        pod: r.pod,
        gateway,
        backend: r.backendPod,
        outcome,
        phase: phase.label,
        lifecycle,
      };
      if (since) row.sinceSigterm = since;
      if (r.error !== undefined) row.error = r.error;
      rows.push(row);
    }
  }
  return {
    total: failed.length,
    requests: timeline.requests.length,
    rows,
    groups: [...groups.values()].sort((a, b) => a.first - b.first),
    byOutcome,
    viaGateway,
  };
}
