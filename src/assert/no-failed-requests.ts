// noFailedRequests: every request the load sent succeeded. The headline assertion of every drain
// scenario; a failure is described by outcome and by the phase of the pod it hit.

import type { Expectation } from '../model/scenario.ts';
import type { RequestRecord } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { allOf, FailureDescriber, type AssertContext } from './common.ts';

export type NoFailedRequests = Extract<Expectation, { assert: 'noFailedRequests' }>;

export function noFailedRequests(expectation: NoFailedRequests, ctx: AssertContext): AssertionResult {
  const name = 'noFailedRequests';
  const { load, exceptLoads = [] } = expectation;
  const except = exceptLoads.length > 0 ? ` (not judged here: load${exceptLoads.length > 1 ? 's' : ''} ${exceptLoads.map((l) => `"${l}"`).join(', ')})` : '';
  const of = (load !== undefined ? ` of load "${load}"` : '') + except;
  // One pass over the columns: count the load's requests, and make objects only of its failures.
  let total = 0;
  const failed: RequestRecord[] = [];
  ctx.timeline.requests.scan((r) => {
    const l = r.load;
    if ((load !== undefined && l !== load) || exceptLoads.includes(l)) return;
    total++;
    if (!r.ok) failed.push(r.record());
  });
  if (total === 0) {
    return { name, verdict: 'inconclusive', message: `no requests${of} were sent: nothing was tested`, details: { total: 0 } };
  }
  if (failed.length === 0) {
    return {
      name,
      verdict: 'pass',
      message: `${allOf(total, 'request')}${of} succeeded`,
      details: { total: total, failed: 0 },
    };
  }
  const { message, details } = new FailureDescriber(ctx.timeline).summarize(failed, total, `requests${of}`);
  return { name, verdict: 'fail', message, details };
}
