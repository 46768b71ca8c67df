// allocationsKeepRelaying: TURN allocations held by a gateway pod that is deleted keep relaying,
// every packet echoed, until their flow ends or the pod's grace period expires (STUNner #138, seed
// 000: media sessions must survive a gateway's drain for as long as Kubernetes lets the pod live).
// A TURN allocation lives in the server process that created it: when that process exits before
// the grace period is over, every packet its flows send afterwards is lost, and this fails. Packets
// sent once the grace period expired (delete + terminationGracePeriodSeconds) are excused: no drain
// can outlive that. Losses on allocations held by pods that were not deleted fail too. A failed
// allocation of the load fails. Needs at least one allocation held by a deleted pod across its
// delete, or nothing was tested.

import type { Expectation } from '../model/scenario.ts';
import type { FlowRecord, LossRange } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { allocationPod } from '../observe/allocations.ts';
import { phaseAt, podLifecycle } from '../observe/phase.ts';
import { allOf, at, count, describeRef, plural, resolvePods, secs, tally, type AssertContext } from './common.ts';

export type AllocationsKeepRelaying = Extract<Expectation, { assert: 'allocationsKeepRelaying' }>;

/** Lost packets of a range sent before `deadline`, interpolating send times inside the range. */
export function lostBefore(range: LossRange, deadline: number): number {
  const n = range.to - range.from + 1;
  if (range.firstSentAt >= deadline) return 0;
  if (range.lastSentAt < deadline || n === 1) return n;
  const fraction = (deadline - range.firstSentAt) / (range.lastSentAt - range.firstSentAt);
  return Math.min(n, Math.max(1, Math.ceil(fraction * n)));
}

export function allocationsKeepRelaying(expectation: AllocationsKeepRelaying, ctx: AssertContext): AssertionResult {
  const name = 'allocationsKeepRelaying';
  const { load } = expectation;
  const tl = ctx.timeline;
  const allocations = (tl.allocations ?? []).filter((a) => a.load === load);
  const flows = new Map<number, FlowRecord>((tl.flows ?? []).filter((f) => f.load === load).map((f) => [f.flow, f]));
  const deadlines = new Map<string, { deleted: number; deadline: number }>();
  for (const pod of resolvePods(expectation.pod, tl)) {
    const lc = podLifecycle(tl, pod);
    if (lc.deleteIssued === undefined) continue;
    deadlines.set(pod, { deleted: lc.deleteIssued, deadline: lc.deleteIssued + (lc.gracePeriodSeconds ?? 30) * 1000 });
  }

  const failedAllocations = allocations.filter((a) => a.outcome !== 'ok');
  const rows: { flow: number; pod: string | undefined; lost: number; firstSentAt: number; phase: string }[] = [];
  let held = 0;
  let packets = 0;
  let lastFlowEnd = 0;
  for (const a of allocations) {
    if (a.outcome !== 'ok') continue;
    const flow = flows.get(a.flow);
    if (!flow) continue;
    packets += flow.sent;
    const pod = allocationPod(tl, a);
    const drain = pod !== undefined ? deadlines.get(pod) : undefined;
    const deadline = drain?.deadline ?? Infinity;
    if (drain && a.end <= drain.deleted && flow.end >= drain.deleted) {
      held++;
      lastFlowEnd = Math.max(lastFlowEnd, flow.end);
    }
    const counted = flow.losses.map((r) => ({ r, n: lostBefore(r, deadline) })).filter((x) => x.n > 0);
    if (counted.length === 0) continue;
    const first = counted[0]!.r;
    rows.push({
      flow: a.flow,
      pod,
      lost: counted.reduce((n, x) => n + x.n, 0),
      firstSentAt: first.firstSentAt,
      phase: phaseAt(tl, pod, first.firstSentAt).label,
    });
  }
  rows.sort((x, y) => x.firstSentAt - y.firstSentAt);
  const details: Record<string, unknown> = {
    allocations: allocations.length,
    heldAcrossDelete: held,
    packets,
    deadlines: Object.fromEntries(deadlines),
  };

  const problems: string[] = [];
  if (rows.length > 0) {
    const lost = rows.reduce((n, r) => n + r.lost, 0);
    const first = rows[0]!;
    const pods = tally(rows.map((r) => r.pod ?? 'no pod known'));
    problems.push(
      `${count(rows.length)} of ${count(allocations.length)} allocations of load "${load}" lost ${plural(lost, 'packet')} before their flow ended or the grace period expired (${pods.text}); ` +
        `first lost packet sent at ${at(first.firstSentAt)} on allocation ${first.flow}${first.pod !== undefined ? ` held by ${first.pod}` : ''}, phase "${first.phase}"`,
    );
    details['losses'] = rows.slice(0, 20);
  }
  if (failedAllocations.length > 0) {
    const why = tally(failedAllocations.map((a) => (a.code !== undefined ? `${a.outcome} ${a.code}` : a.outcome)));
    problems.push(`${count(failedAllocations.length)} of ${count(allocations.length)} allocations of load "${load}" failed (${why.text})`);
    details['failedAllocations'] = failedAllocations.slice(0, 20);
  }
  if (problems.length > 0) return { name, verdict: 'fail', message: problems.join('; '), details };
  if (deadlines.size === 0) {
    return { name, verdict: 'inconclusive', message: `${describeRef(expectation.pod)} deleted no pod: no allocation was tested against a drain`, details };
  }
  if (held === 0) {
    return {
      name,
      verdict: 'inconclusive',
      message: `no allocation of load "${load}" was held by ${[...deadlines.keys()].join(', ')} across its delete: nothing was tested`,
      details,
    };
  }
  const earliest = Math.min(...[...deadlines.values()].map((d) => d.deadline));
  return {
    name,
    verdict: 'pass',
    message:
      `${allOf(allocations.length, 'allocation')} of load "${load}" relayed every packet (${count(packets)} packets); ` +
      `${plural(held, 'allocation was', 'allocations were')} held by a deleted gateway pod through its drain until their flows ended (last at ${at(lastFlowEnd)}, ${secs(earliest - lastFlowEnd)} before the grace period expired)`,
    details,
  };
}
