// exitsPromptlyWhenIdle: after SIGTERM, once the pod has no open connection left, it exits within
// `withinMs`, rather than waiting out a fixed timer or the grace period (seed 003: a drained proxy
// should not linger until SIGKILL). Idle is the later of SIGTERM and the last close of a connection
// the balancer routed to the pod (a connection still open at exit counts as ending at the exit).

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, fromStopSignal, perPod, plural, secs, unseenSignal, type AssertContext } from './common.ts';

export type ExitsPromptlyWhenIdle = Extract<Expectation, { assert: 'exitsPromptlyWhenIdle' }>;

export function exitsPromptlyWhenIdle(expectation: ExitsPromptlyWhenIdle, ctx: AssertContext): AssertionResult {
  const { withinMs } = expectation;
  return perPod('exitsPromptlyWhenIdle', expectation.pod, ctx, (pod, lc) => {
    // Where the signal is unseen, the delete stands in for it: idle is then measured no later than it
    // was, so a prompt exit is proven and a slow one is not a verdict.
    const start = fromStopSignal(lc);
    if (!('t' in start)) return start;
    const { t: sigterm, since: from, bound } = start;
    const end = lc.exit ?? lc.killed ?? Infinity;
    const connections = ctx.timeline.connections.filter((c) => c.pod === pod && c.open < end);
    let lastClose: number | undefined;
    for (const c of connections) {
      const close = Math.min(c.close ?? end, end);
      if (Number.isFinite(close)) lastClose = Math.max(lastClose ?? close, close);
    }
    const idle = Math.max(sigterm, lastClose ?? sigterm);
    const idleText =
      lastClose !== undefined && lastClose > sigterm
        ? `idle at ${at(idle)}, ${secs(idle - sigterm)} after ${from}, when the last of its ${plural(connections.length, 'connection')} closed`
        : `idle from ${from} at ${at(sigterm)}`;
    const details = { sigterm, idle, lastConnectionClose: lastClose, connections: connections.length };
    if (lc.killed !== undefined) {
      return {
        verdict: 'fail',
        message: `${pod} was killed by SIGKILL at ${at(lc.killed)}, ${secs(lc.killed - idle)} after it went idle (${idleText}); bound ${secs(withinMs)}`,
        details: { ...details, killed: lc.killed },
      };
    }
    if (lc.exit === undefined) {
      return { verdict: 'fail', message: `${pod} never exited (${idleText}); bound ${secs(withinMs)}`, details };
    }
    const took = lc.exit - idle;
    const exited = `${pod} exited ${secs(took)} after it went idle (${idleText})`;
    if (took > withinMs && bound) {
      return {
        verdict: 'inconclusive',
        message: `${exited}; ${unseenSignal(lc)}, so whether it went idle later than its delete is not known; bound ${secs(withinMs)}`,
        details: { ...details, exit: lc.exit, durationMs: took, observed: 'no stop signal' },
      };
    }
    if (took > withinMs) {
      return { verdict: 'fail', message: `${exited}, ${secs(took - withinMs)} past the ${secs(withinMs)} bound`, details: { ...details, exit: lc.exit, durationMs: took } };
    }
    return { verdict: 'pass', message: `${exited}, within ${secs(withinMs)}`, details: { ...details, exit: lc.exit, durationMs: took } };
  });
}
