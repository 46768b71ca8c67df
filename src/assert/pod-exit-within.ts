// podExitWithin: the pod's process exited on its own within [minMs, maxMs] of its delete (or of its
// SIGTERM). The lower bound catches a gateway that quits before its minimum drain time; the upper one
// a pod that drains too slowly. A pod killed by SIGKILL did not exit within anything.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, fromStopSignal, perPod, reference, secs, unseenSignal, type AssertContext } from './common.ts';

export type PodExitWithin = Extract<Expectation, { assert: 'podExitWithin' }>;

export function podExitWithin(expectation: PodExitWithin, ctx: AssertContext): AssertionResult {
  const { from, minMs, maxMs } = expectation;
  const what = from === 'delete' ? 'delete' : 'SIGTERM';
  const bounds = `bounds ${secs(minMs)}..${secs(maxMs)} after ${what}`;
  return perPod('podExitWithin', expectation.pod, ctx, (pod, lc) => {
    const deleted = from === 'delete' ? reference(lc, 'delete') : undefined;
    const start = deleted === undefined ? fromStopSignal(lc) : typeof deleted === 'number' ? { t: deleted, since: what, bound: false } : deleted;
    if (!('t' in start)) return start;
    const { t: ref, since, bound } = start;
    if (lc.killed !== undefined) {
      return {
        verdict: 'fail',
        message: `${pod} was killed by SIGKILL ${secs(lc.killed - ref)} after ${since} (at ${at(lc.killed)}) instead of exiting; ${bounds}`,
        details: { reference: ref, killed: lc.killed },
      };
    }
    if (lc.exit === undefined) {
      return {
        verdict: 'fail',
        message: `${pod} never exited (${since} at ${at(ref)}); ${bounds}`,
        details: { reference: ref },
      };
    }
    const took = lc.exit - ref;
    const details = { reference: ref, exit: lc.exit, durationMs: took, exitCode: lc.exitCode, exitSignal: lc.exitSignal };
    const code = lc.exitCode !== undefined && lc.exitCode !== null ? `, code ${lc.exitCode}` : lc.exitSignal ? `, signal ${lc.exitSignal}` : '';
    const exited = `${pod} exited ${secs(took)} after ${since} (at ${at(lc.exit)}${code})`;
    if (bound && (took > maxMs || (took >= minMs && minMs > 0))) {
      return { verdict: 'inconclusive', message: `${exited}; ${unseenSignal(lc)}, so its time from SIGTERM is known only to be at most that; ${bounds}`, details: { ...details, observed: 'no stop signal' } };
    }
    if (took < minMs) {
      return { verdict: 'fail', message: `${exited}, ${secs(minMs - took)} before the ${secs(minMs)} minimum`, details };
    }
    if (took > maxMs) {
      return { verdict: 'fail', message: `${exited}, ${secs(took - maxMs)} past the ${secs(maxMs)} maximum`, details };
    }
    return { verdict: 'pass', message: `${exited}, within ${bounds}`, details };
  });
}
