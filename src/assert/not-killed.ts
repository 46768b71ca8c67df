// notKilled: the pod ended on its own, not by SIGKILL at the end of its grace period. A pod that has
// to be killed either ignores SIGTERM or drains longer than Kubernetes allows, and whatever it still
// held is cut off.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, perPod, secs, type AssertContext } from './common.ts';

export type NotKilled = Extract<Expectation, { assert: 'notKilled' }>;

export function notKilled(expectation: NotKilled, ctx: AssertContext): AssertionResult {
  return perPod('notKilled', expectation.pod, ctx, (pod, lc) => {
    const sinceTerm = (t: number) => (lc.sigterm !== undefined ? `${secs(t - lc.sigterm)} after SIGTERM` : 'with no SIGTERM before');
    const grace = lc.gracePeriodSeconds !== undefined ? ` (grace period ${lc.gracePeriodSeconds} s)` : '';
    if (lc.killed !== undefined) {
      return {
        verdict: 'fail',
        message: `${pod} was killed by SIGKILL at ${at(lc.killed)}, ${sinceTerm(lc.killed)}${grace}`,
        details: { sigterm: lc.sigterm, killed: lc.killed, gracePeriodSeconds: lc.gracePeriodSeconds },
      };
    }
    if (lc.exit === undefined) {
      return {
        verdict: 'inconclusive',
        message: `${pod} had neither exited nor been killed when the run ended${lc.sigterm !== undefined ? ` (SIGTERM at ${at(lc.sigterm)})` : ''}`,
        details: { sigterm: lc.sigterm },
      };
    }
    return {
      verdict: 'pass',
      message: `${pod} exited on its own at ${at(lc.exit)}, ${sinceTerm(lc.exit)}${grace}, not killed`,
      details: { sigterm: lc.sigterm, exit: lc.exit, gracePeriodSeconds: lc.gracePeriodSeconds },
    };
  });
}
