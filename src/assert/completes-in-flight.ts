// completesInFlight: a request already in flight when a pod is deleted completes successfully (the
// long request of backend-long-request, seed 004): the pod must finish what it started before it
// exits, however its shutdown goes. In flight: sent before the delete and not finished before it
// (a request that failed at the very moment of the delete counts).

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { allOf, at, FailureDescriber, secs, type AssertContext } from './common.ts';

export type CompletesInFlight = Extract<Expectation, { assert: 'completesInFlight' }>;

export function completesInFlight(expectation: CompletesInFlight, ctx: AssertContext): AssertionResult {
  const name = 'completesInFlight';
  const { load } = expectation;
  // A configuration reload retires processes as a delete retires a pod: what they hold must finish too.
  const deleted = ctx.timeline.events.filter((e) => e.kind === 'delete-issued');
  const disruption = deleted.length > 0 ? 'delete' : 'reload';
  const deletes = (deleted.length > 0 ? deleted : ctx.timeline.events.filter((e) => e.kind === 'reload-start')).map((e) => e.t).sort((a, b) => a - b);
  if (deletes.length === 0) {
    return { name, verdict: 'inconclusive', message: `no pod was deleted or reloaded: no request of load "${load}" was in flight at a delete or reload` };
  }
  const inFlight = ctx.timeline.requests.filter(
    (r) => r.load === load && deletes.some((t) => r.start < t && t <= r.end),
  );
  const where = `of load "${load}" in flight at a ${disruption} (${deletes.map(at).join(', ')})`;
  if (inFlight.length === 0) {
    return { name, verdict: 'inconclusive', message: `no request of load "${load}" was in flight at a ${disruption} (${deletes.map(at).join(', ')}): nothing was tested`, details: { deletes } };
  }
  const failed = inFlight.filter((r) => r.outcome !== 'ok');
  if (failed.length === 0) {
    const longest = inFlight.reduce((m, r) => Math.max(m, r.end - r.start), 0);
    return {
      name,
      verdict: 'pass',
      message: `${allOf(inFlight.length, 'request')} ${where} completed ok; the longest took ${secs(longest)}`,
      details: { deletes, inFlight: inFlight.length, failed: 0, longestMs: longest },
    };
  }
  const { message, details } = new FailureDescriber(ctx.timeline).summarize(failed, inFlight.length, `requests ${where}`);
  return { name, verdict: 'fail', message, details: { deletes, inFlight: inFlight.length, ...details } };
}

