// newAllocationsSucceed: TURN allocations made while a gateway pod drains succeed (seed 000). The
// gateway Service's balancer keeps sending new flows to a terminating pod until it deprograms it,
// so a gateway that dies at SIGTERM leaves those clients' Allocate requests unanswered. Each failed
// allocation is told against the phase of the gateway pod its Allocate was routed to. Needs at least
// one allocation made while a pod was being deleted (between its delete and its removal).

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { allocationPod } from '../observe/allocations.ts';
import { phaseAt, podLifecycle } from '../observe/phase.ts';
import { allOf, at, count, tally, type AssertContext } from './common.ts';

export type NewAllocationsSucceed = Extract<Expectation, { assert: 'newAllocationsSucceed' }>;

export function newAllocationsSucceed(expectation: NewAllocationsSucceed, ctx: AssertContext): AssertionResult {
  const name = 'newAllocationsSucceed';
  const { load } = expectation;
  const tl = ctx.timeline;
  const allocations = (tl.allocations ?? []).filter((a) => a.load === load).sort((a, b) => a.start - b.start);
  const windows = tl.events
    .filter((e) => e.kind === 'delete-issued' && e.pod !== undefined)
    .map((e) => {
      const lc = podLifecycle(tl, e.pod!);
      return { pod: e.pod!, from: e.t, to: lc.removed ?? lc.exit ?? Infinity };
    });
  const during = allocations.filter((a) => windows.some((w) => a.start >= w.from && a.start <= w.to));
  const failed = allocations.filter((a) => a.outcome !== 'ok');
  const details: Record<string, unknown> = { allocations: allocations.length, duringDrain: during.length, windows };
  if (failed.length > 0) {
    const first = failed[0]!;
    const pod = allocationPod(tl, first);
    const why = tally(failed.map((a) => (a.code !== undefined ? `${a.outcome} ${a.code}` : a.outcome)));
    return {
      name,
      verdict: 'fail',
      message:
        `${count(failed.length)} of ${count(allocations.length)} allocations of load "${load}" failed (${why.text}); ` +
        `first sent at ${at(first.start)}${pod !== undefined ? ` to ${pod}` : ''}, phase "${phaseAt(tl, pod, first.start).label}"${first.error ? `: ${first.error}` : ''}`,
      details: {
        ...details,
        byOutcome: why.byKey,
        firstFailures: failed.slice(0, 20).map((a) => ({ ...a, pod: allocationPod(tl, a) })),
      },
    };
  }
  if (during.length === 0) {
    return {
      name,
      verdict: 'inconclusive',
      message: windows.length === 0 ? `no pod was deleted: no allocation of load "${load}" was made during a drain` : `no allocation of load "${load}" was made while a pod was being deleted: nothing was tested`,
      details,
    };
  }
  const pods = tally(during.map((a) => allocationPod(tl, a) ?? 'no pod known'));
  return {
    name,
    verdict: 'pass',
    message: `${allOf(allocations.length, 'allocation')} of load "${load}" succeeded; ${count(during.length)} were made during a drain (routed to ${pods.text})`,
    details: { ...details, byPod: pods.byKey },
  };
}
