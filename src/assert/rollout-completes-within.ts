// rolloutCompletesWithin: a rollout of the workload finished (every replica new and ready, old pods
// gone) within `maxMs` of its start. A drain that hangs stalls a rolling update behind it.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, runEnd, secs, type AssertContext } from './common.ts';

export type RolloutCompletesWithin = Extract<Expectation, { assert: 'rolloutCompletesWithin' }>;

export function rolloutCompletesWithin(expectation: RolloutCompletesWithin, ctx: AssertContext): AssertionResult {
  const name = 'rolloutCompletesWithin';
  const { workload, maxMs } = expectation;
  const events = [...ctx.timeline.events].sort((a, b) => a.t - b.t);
  const start = events.find((e) => e.kind === 'rollout-start' && e.workload === workload);
  if (!start) {
    return { name, verdict: 'inconclusive', message: `no rollout of ${workload} started: nothing to measure` };
  }
  const complete = events.find((e) => e.kind === 'rollout-complete' && e.workload === workload && e.t >= start.t);
  if (!complete) {
    const end = runEnd(ctx.timeline);
    return {
      name,
      verdict: 'fail',
      message: `the rollout of ${workload} started at ${at(start.t)} never completed (run ended ${secs(end - start.t)} later; bound ${secs(maxMs)})`,
      details: { start: start.t, runEnd: end },
    };
  }
  const took = complete.t - start.t;
  const details = { start: start.t, complete: complete.t, durationMs: took };
  const done = `the rollout of ${workload} completed in ${secs(took)} (${at(start.t)}..${secs(complete.t)})`;
  if (took > maxMs) {
    return { name, verdict: 'fail', message: `${done}, ${secs(took - maxMs)} past the ${secs(maxMs)} bound`, details };
  }
  return { name, verdict: 'pass', message: `${done}, within ${secs(maxMs)}`, details };
}
