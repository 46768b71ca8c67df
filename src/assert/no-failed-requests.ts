// noFailedRequests: every request the load sent succeeded. The headline assertion of every drain
// scenario; a failure is described by outcome and by the phase of the pod it hit.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { allOf, FailureDescriber, type AssertContext } from './common.ts';

export type NoFailedRequests = Extract<Expectation, { assert: 'noFailedRequests' }>;

export function noFailedRequests(expectation: NoFailedRequests, ctx: AssertContext): AssertionResult {
  const name = 'noFailedRequests';
  const { load, exceptLoads = [] } = expectation;
  const except = exceptLoads.length > 0 ? ` (not judged here: load${exceptLoads.length > 1 ? 's' : ''} ${exceptLoads.map((l) => `"${l}"`).join(', ')})` : '';
  const of = (load !== undefined ? ` of load "${load}"` : '') + except;
  const requests = ctx.timeline.requests.filter((r) => (load === undefined || r.load === load) && !exceptLoads.includes(r.load));
  if (requests.length === 0) {
    return { name, verdict: 'inconclusive', message: `no requests${of} were sent: nothing was tested`, details: { total: 0 } };
  }
  const failed = requests.filter((r) => r.outcome !== 'ok');
  if (failed.length === 0) {
    return {
      name,
      verdict: 'pass',
      message: `${allOf(requests.length, 'request')}${of} succeeded`,
      details: { total: requests.length, failed: 0 },
    };
  }
  const { message, details } = new FailureDescriber(ctx.timeline).summarize(failed, requests.length, `requests${of}`);
  return { name, verdict: 'fail', message, details };
}
