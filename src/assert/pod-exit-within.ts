// podExitWithin: the pod's process exited on its own within [minMs, maxMs] of its delete (or of its
// SIGTERM). The lower bound catches a gateway that quits before its minimum drain time; the upper one
// a pod that drains too slowly. A pod killed by SIGKILL did not exit within anything.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, perPod, reference, secs, type AssertContext } from './common.ts';

export type PodExitWithin = Extract<Expectation, { assert: 'podExitWithin' }>;

export function podExitWithin(expectation: PodExitWithin, ctx: AssertContext): AssertionResult {
  const { from, minMs, maxMs } = expectation;
  const what = from === 'delete' ? 'delete' : 'SIGTERM';
  const bounds = `bounds ${secs(minMs)}..${secs(maxMs)} after ${what}`;
  return perPod('podExitWithin', expectation.pod, ctx, (pod, lc) => {
    const ref = reference(lc, from);
    if (typeof ref !== 'number') return ref;
    if (lc.killed !== undefined) {
      return {
        verdict: 'fail',
        message: `${pod} was killed by SIGKILL ${secs(lc.killed - ref)} after ${what} (at ${at(lc.killed)}) instead of exiting; ${bounds}`,
        details: { reference: ref, killed: lc.killed },
      };
    }
    if (lc.exit === undefined) {
      return {
        verdict: 'fail',
        message: `${pod} never exited (${what} at ${at(ref)}); ${bounds}`,
        details: { reference: ref },
      };
    }
    const took = lc.exit - ref;
    const details = { reference: ref, exit: lc.exit, durationMs: took, exitCode: lc.exitCode, exitSignal: lc.exitSignal };
    const code = lc.exitCode !== undefined && lc.exitCode !== null ? `, code ${lc.exitCode}` : lc.exitSignal ? `, signal ${lc.exitSignal}` : '';
    const exited = `${pod} exited ${secs(took)} after ${what} (at ${at(lc.exit)}${code})`;
    if (took < minMs) {
      return { verdict: 'fail', message: `${exited}, ${secs(minMs - took)} before the ${secs(minMs)} minimum`, details };
    }
    if (took > maxMs) {
      return { verdict: 'fail', message: `${exited}, ${secs(took - maxMs)} past the ${secs(maxMs)} maximum`, details };
    }
    return { verdict: 'pass', message: `${exited}, within ${bounds}`, details };
  });
}
