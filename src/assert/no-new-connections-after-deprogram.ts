// noNewConnectionsAfterDeprogram: once the Service's load balancer has deprogrammed a pod, no new
// connection reaches it. A connection that does means the balancer (or a gateway's own endpoint
// tracking, e.g. one reading the legacy Endpoints API) still routes to a pod on its way out.
//
// On a cluster the deprogram is seen at the EndpointSlice change, and each node's kube-proxy applies
// it some time later: the event states that bound (`programmingBoundMs`), and only a connection
// after the change plus the bound is one the balancer should no longer have made.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, perPod, plural, secs, type AssertContext } from './common.ts';

export type NoNewConnectionsAfterDeprogram = Extract<Expectation, { assert: 'noNewConnectionsAfterDeprogram' }>;

/** Timestamps of the deprogram event and of a connection's open come from different places. */
const EPSILON_MS = 1;

export function noNewConnectionsAfterDeprogram(
  expectation: NoNewConnectionsAfterDeprogram,
  ctx: AssertContext,
): AssertionResult {
  return perPod('noNewConnectionsAfterDeprogram', expectation.pod, ctx, (pod, lc) => {
    const deprogrammed = lc.deprogrammed;
    if (deprogrammed === undefined) {
      return {
        verdict: 'inconclusive',
        message: `${pod} was never deprogrammed from the load balancer: nothing to check`,
      };
    }
    const bound = programmingBound(ctx, pod, deprogrammed);
    const after = (t: number) => t > deprogrammed + bound + EPSILON_MS;
    const mine = ctx.timeline.connections.filter((c) => c.pod === pod);
    const late = mine.filter((c) => after(c.open)).sort((a, b) => a.open - b.open);
    // A lagging node's requests reach the pod past the balancer by design.
    const lateRequests = ctx.timeline.requests
      .filter((r) => r.newConnection && r.connectionStart !== undefined && after(r.connectionStart) && r.pod === pod && !r.direct)
      .sort((a, b) => (a.connectionStart ?? 0) - (b.connectionStart ?? 0));
    const before = mine.length - late.length;
    const details: Record<string, unknown> = {
      deprogrammed,
      programmingBoundMs: bound,
      connectionsBefore: before,
      connectionsAfter: late.length,
      requestsOnNewConnectionsAfter: lateRequests.length,
      firstConnections: late.slice(0, 20).map((c) => ({ id: c.id, open: c.open, clientPort: c.clientPort, upstream: c.upstream })),
      firstRequests: lateRequests.slice(0, 20).map((r) => ({ id: r.id, connectionStart: r.connectionStart, outcome: r.outcome })),
    };
    const firstTimes = [late[0]?.open, lateRequests[0]?.connectionStart].filter((t): t is number => t !== undefined);
    if (firstTimes.length === 0) {
      return {
        verdict: 'pass',
        message: `no new connection reached ${pod} after it was deprogrammed at ${at(deprogrammed)}${bound > 0 ? ` (plus the balancer's programming bound, ${secs(bound)})` : ''} (${plural(before, 'connection')} before)`,
        details,
      };
    }
    const first = Math.min(...firstTimes);
    const seen = [
      late.length > 0 ? `${plural(late.length, 'connection')} routed by the balancer` : '',
      lateRequests.length > 0 ? `${plural(lateRequests.length, 'request')} on new connections answered by it` : '',
    ].filter(Boolean);
    return {
      verdict: 'fail',
      message: `${pod} got new connections after it was deprogrammed at ${at(deprogrammed)}${bound > 0 ? ` (plus the balancer's programming bound, ${secs(bound)})` : ''}: ${seen.join(' and ')}; first at ${at(first)}, ${secs(first - deprogrammed)} after`,
      details,
    };
  });
}

/** The programming bound the final deprogram event of `pod` states (a cluster's kube-proxy), else 0. */
function programmingBound(ctx: AssertContext, pod: string, deprogrammed: number): number {
  const event = ctx.timeline.events.find((e) => e.kind === 'lb-deprogrammed' && e.pod === pod && e.t === deprogrammed);
  const bound = event?.detail?.['programmingBoundMs'];
  return typeof bound === 'number' && bound > 0 ? bound : 0;
}
