// drainTiming: the drain bounds of Envoy Gateway's shutdown manager (seed 004), checked on the pod.
// Its preStop drains listeners and waits at least a minimum drain period, then polls the proxy's
// active connections and lets it exit once they reach zero, or once the drain timeout expires; the
// grace period sits above that timeout so that SIGKILL never decides. So: the pod exits no earlier
// than `minDrainMs` after its delete, no later than `drainTimeoutMs` after it, within `idleExitMs`
// of being idle (no connection left and the minimum passed), and not by SIGKILL. Connections are the
// Service load balancer's records of the pod (a connection still open at exit ends at the exit).
// A system that waits out its own shutdown timeout whatever the traffic (its profile declares
// `drain.exits: 'at-timeout'`) is held to the drain timeout only: exiting late once idle is how it
// is built, not a drain failure, and the idle bound would fail it every time.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, perPod, plural, reference, secs, type AssertContext } from './common.ts';

export type DrainTiming = Extract<Expectation, { assert: 'drainTiming' }>;

/**
 * How close to a pod's recorded exit a connection that names no pod must end, cut without a
 * response, to be taken as cut by that exit. A cluster records the exit from the pod's status (a
 * watch, after the node reported it), so the cut comes first; measured on netns under load: 78 ms.
 */
export const CUT_AT_EXIT_MS = 1000;

export function drainTiming(expectation: DrainTiming, ctx: AssertContext): AssertionResult {
  const { minDrainMs, drainTimeoutMs, idleExitMs } = expectation;
  const atTimeout = expectation.exits === 'at-timeout';
  const bounds = `min drain ${secs(minDrainMs)}, drain timeout ${secs(drainTimeoutMs)}, ${atTimeout ? 'exits at its own timeout (declared drain.exits "at-timeout")' : `exit within ${secs(idleExitMs)} of idle`}`;
  return perPod('drainTiming', expectation.pod, ctx, (pod, lc) => {
    const deleted = reference(lc, 'delete');
    if (typeof deleted !== 'number') return deleted;
    const end = lc.exit ?? lc.killed ?? Infinity;
    const connections = ctx.timeline.connections.filter((c) => c.pod === pod && c.open < end);
    const openAtSigterm =
      lc.sigterm === undefined ? undefined : connections.filter((c) => c.open <= (lc.sigterm ?? 0) && (c.close ?? Infinity) > (lc.sigterm ?? 0)).length;
    // Where the HTTP load records its own connections (no Service balancer records them, a
    // cluster), a connection that never got a response names no pod (a request cut at the pod's
    // exit, or one the client gave up on). One cut, without a response, as this pod exited was held
    // by it until then (the overlong requests of gateway-delete-http, cut at the drain timeout by
    // design): it is the pod's last connection, as a balancer's record of it would be.
    const unnamed = ctx.timeline.connections.filter((c) => c.pod === undefined && (c.upstream === 'open' || c.upstream === 'error') && c.open < end);
    const cutAtExit =
      lc.exit === undefined ? [] : unnamed.filter((c) => c.upstream === 'error' && c.close !== undefined && c.close > deleted && Math.abs(c.close - (lc.exit ?? 0)) <= CUT_AT_EXIT_MS);
    let lastClose: number | undefined;
    for (const c of [...connections, ...cutAtExit]) {
      const close = Math.min(c.close ?? end, end);
      if (Number.isFinite(close)) lastClose = Math.max(lastClose ?? close, close);
    }
    const idle = Math.max(deleted + minDrainMs, lastClose ?? deleted);
    const details: Record<string, unknown> = {
      delete: deleted,
      sigterm: lc.sigterm,
      connectionsAtSigterm: openAtSigterm,
      lastConnectionClose: lastClose,
      idle,
    };
    const atSigterm = openAtSigterm === undefined ? '' : `; ${plural(openAtSigterm, 'connection')} open at SIGTERM`;
    if (lc.killed !== undefined) {
      return {
        verdict: 'fail',
        message: `${pod} was killed by SIGKILL ${secs(lc.killed - deleted)} after delete (at ${at(lc.killed)})${atSigterm}; ${bounds}`,
        details: { ...details, killed: lc.killed },
      };
    }
    if (lc.exit === undefined) return { verdict: 'fail', message: `${pod} never exited (delete at ${at(deleted)}); ${bounds}`, details };
    const took = lc.exit - deleted;
    details['exit'] = lc.exit;
    details['durationMs'] = took;
    const exited = `${pod} exited ${secs(took)} after delete (at ${at(lc.exit)})`;
    if (took < minDrainMs) {
      return { verdict: 'fail', message: `${exited}${atSigterm}, ${secs(minDrainMs - took)} before its ${secs(minDrainMs)} minimum drain`, details };
    }
    if (took > drainTimeoutMs) {
      return { verdict: 'fail', message: `${exited}${atSigterm}, ${secs(took - drainTimeoutMs)} past its ${secs(drainTimeoutMs)} drain timeout`, details };
    }
    const cut = cutAtExit.length > 0 ? `, ${plural(cutAtExit.length, 'connection')} without a response cut at its exit` : '';
    if (cutAtExit.length > 0) details['cutAtExit'] = cutAtExit.length;
    const idleText =
      lastClose !== undefined && lastClose > deleted + minDrainMs
        ? `its last connection closed at ${at(lastClose)}${cut}`
        : `the minimum drain ended at ${at(deleted + minDrainMs)} with no connection left`;
    const lingered = lc.exit - idle;
    // Any other connection naming no pod, open after this pod went idle, may have held it until its
    // exit. Then the idle moment is unknown, not late.
    const unknown = unnamed.filter((c) => !cutAtExit.includes(c) && (c.close ?? Infinity) > idle);
    if (!atTimeout && lingered > idleExitMs && unknown.length > 0) {
      return {
        verdict: 'inconclusive',
        message: `${exited}${atSigterm}, ${secs(lingered)} after its last known connection closed (${idleText}), but ${plural(unknown.length, 'connection')} without any response naming its pod ${unknown.length === 1 ? 'was' : 'were'} still open then (first opened at ${at(Math.min(...unknown.map((c) => c.open)))}); one may have held ${pod} until its exit, so when it went idle is unknown`,
        details: { ...details, unattributedConnections: unknown.length },
      };
    }
    if (!atTimeout && lingered > idleExitMs) {
      return {
        verdict: 'fail',
        message:
          `${exited}${atSigterm}, ${secs(lingered)} after it went idle (${idleText}): ${secs(lingered - idleExitMs)} past the ${secs(idleExitMs)} bound ` +
          `(the scenario's idleExitMs, --set idleExitMs=N; a system that exits at its own shutdown timeout rather than once idle declares drain: { ..., exits: 'at-timeout' } in its profile)`,
        details,
      };
    }
    return { verdict: 'pass', message: `${exited}${atSigterm}, ${secs(Math.max(0, lingered))} after it went idle (${idleText}); within ${bounds}`, details };
  });
}
