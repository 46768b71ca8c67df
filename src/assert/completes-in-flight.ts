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
  // A configuration reload retires processes as a delete retires a pod: what they hold must finish
  // too. So does a route moved away from the backends a request is on (a GatewayClass's dataplane
  // reprogrammed from its route, nothing of it reloaded or deleted).
  const { events } = ctx.timeline;
  const deleted = events.filter((e) => e.kind === 'delete-issued');
  const reloaded = events.filter((e) => e.kind === 'reload-start');
  const moved = events.filter((e) => e.kind === 'chaos' && e.detail?.['action'] === 'move-route');
  const [disruption, disruptions] = deleted.length > 0 ? ['delete', deleted] as const : reloaded.length > 0 ? ['reload', reloaded] as const : ['route change', moved] as const;
  const deletes = disruptions.map((e) => e.t).sort((a, b) => a - b);
  if (deletes.length === 0) {
    return { name, verdict: 'inconclusive', message: `no pod was deleted or reloaded and no route changed: no request of load "${load}" was in flight at a delete, reload or route change` };
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

