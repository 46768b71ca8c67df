// routeMoved: a route change took effect, and took effect only where it should: requests sent
// before the change were answered by the old backends, and requests sent once the change had had
// time to land by the new ones only. Without it a route swap that never happened (a reload that
// read the old configuration) would pass the swap scenario by serving every request from the old set.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { phaseAt } from '../observe/phase.ts';
import { at, secs, tally, type AssertContext } from './common.ts';

export type RouteMoved = Extract<Expectation, { assert: 'routeMoved' }>;

export function routeMoved(expectation: RouteMoved, ctx: AssertContext): AssertionResult {
  const name = 'routeMoved';
  const { step, from, to, withinMs } = expectation;
  const { timeline } = ctx;
  const change = timeline.events.find((e) => e.kind === 'chaos' && e.detail?.['step'] === step);
  if (!change) return { name, verdict: 'inconclusive', message: `step ${step} did not run: nothing was tested` };
  const workloadOf = new Map<string, string>();
  for (const e of timeline.events) if (e.kind === 'pod-created' && e.pod !== undefined && e.workload !== undefined) workloadOf.set(e.pod, e.workload);
  const answered = timeline.requests.filter((r) => r.outcome === 'ok');
  // A response below 500 with no backend behind it is the gateway answering for a route it did not
  // have (404 while the route was detached): the route did not hold, whether the load counted the
  // answer ok or, counting only a 2xx (HttpLoadSpec.okStatus), failed it.
  const unrouted = timeline.requests.filter(
    (r) => (r.outcome === 'ok' || r.outcome === 'status') && r.status !== undefined && r.status < 500 && r.backendPod === undefined && !(r.path ?? '').startsWith('/healthz'),
  );
  const served = answered.filter((r) => r.backendPod !== undefined);
  const before = served.filter((r) => r.start < change.t);
  const after = served.filter((r) => r.start >= change.t + withinMs);
  const wrong = (rs: typeof served, want: string) => rs.filter((r) => workloadOf.get(r.backendPod ?? '') !== want);
  const beforeWrong = wrong(before, from);
  const afterWrong = wrong(after, to);
  const details = { changeAt: change.t, before: before.length, after: after.length, beforeWrong: beforeWrong.length, afterWrong: afterWrong.length, unrouted: unrouted.length };
  if (before.length === 0 || after.length === 0) {
    return { name, verdict: 'inconclusive', message: `no request answered ${before.length === 0 ? `before the change (${at(change.t)})` : `${secs(withinMs)} or more after it`}: nothing was tested`, details };
  }
  const problems: string[] = [];
  if (unrouted.length > 0) {
    const first = unrouted.reduce((a, b) => (a.start <= b.start ? a : b));
    const statuses = tally(unrouted.map((r) => (r.status === undefined ? 'no status' : `status ${r.status}`))).text;
    problems.push(`${unrouted.length} of ${answered.length + unrouted.filter((r) => r.outcome !== 'ok').length} requests were answered by the gateway with no backend behind it (${statuses}), the first sent at ${at(first.start)}, ${secs(first.start - change.t)} after the change, ${phaseAt(timeline, first.pod, first.start).label}`);
  }
  if (beforeWrong.length > 0) problems.push(`${beforeWrong.length} of ${before.length} requests sent before the change were answered by ${describe(beforeWrong, workloadOf)}, not ${from}`);
  if (afterWrong.length > 0) {
    const first = afterWrong.reduce((a, b) => (a.start <= b.start ? a : b));
    problems.push(`${afterWrong.length} of ${after.length} requests sent ${secs(withinMs)} or more after it were answered by ${describe(afterWrong, workloadOf)}, not ${to} (first sent at ${at(first.start)})`);
  }
  if (problems.length > 0) return { name, verdict: 'fail', message: `the route changed at ${at(change.t)}: ${problems.join('; ')}`, details };
  const moved = served.filter((r) => r.start >= change.t && workloadOf.get(r.backendPod ?? '') === to).reduce((m, r) => Math.min(m, r.start), Infinity);
  // Until when the old set still took new requests: how long the change took to land everywhere.
  const lastOld = served.filter((r) => r.start >= change.t && workloadOf.get(r.backendPod ?? '') === from).reduce((m, r) => Math.max(m, r.start), -Infinity);
  const old = Number.isFinite(lastOld) ? `, the last answered by ${from} ${secs(lastOld - change.t)} after it` : `, none answered by ${from} after it`;
  return {
    name,
    verdict: 'pass',
    message: `the route moved from ${from} to ${to} at ${at(change.t)}: all ${before.length} requests before it answered by ${from}, all ${after.length} from ${secs(withinMs)} after it by ${to}; the first answered by ${to} was sent ${secs(moved - change.t)} after the change${old}`,
    details: { ...details, firstNewMs: moved - change.t, ...(Number.isFinite(lastOld) ? { lastOldMs: lastOld - change.t } : {}) },
  };
}

function describe(requests: readonly { backendPod?: string }[], workloadOf: ReadonlyMap<string, string>): string {
  const counts = new Map<string, number>();
  for (const r of requests) {
    const w = workloadOf.get(r.backendPod ?? '') ?? 'an unknown pod';
    counts.set(w, (counts.get(w) ?? 0) + 1);
  }
  return [...counts].map(([w, n]) => `${w} (${n})`).join(', ');
}
