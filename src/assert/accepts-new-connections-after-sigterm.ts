// acceptsNewConnectionsAfterSigterm: a pod keeps accepting new connections for `windowMs` after
// SIGTERM, because load balancers keep sending them for a while after the endpoint turns terminating
// (kube-proxy sync, cloud deregistration delay; seed 001). Checked from both sides: every connection
// the balancer routed to the pod in [SIGTERM, SIGTERM + windowMs], and every request that opened a
// connection to the pod in that window.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { phaseAt } from '../observe/phase.ts';
import { allOf, at, count, FailureDescriber, perPod, plural, formatSeconds, reference, secs, tally, type AssertContext } from './common.ts';

export type AcceptsNewConnectionsAfterSigterm = Extract<Expectation, { assert: 'acceptsNewConnectionsAfterSigterm' }>;

const BAD_UPSTREAM = new Set(['refused', 'reset', 'error']);

export function acceptsNewConnectionsAfterSigterm(
  expectation: AcceptsNewConnectionsAfterSigterm,
  ctx: AssertContext,
): AssertionResult {
  const { windowMs } = expectation;
  const describer = new FailureDescriber(ctx.timeline);
  return perPod('acceptsNewConnectionsAfterSigterm', expectation.pod, ctx, (pod, lc) => {
    const sigterm = reference(lc, 'sigterm');
    if (typeof sigterm !== 'number') return sigterm;
    const until = sigterm + windowMs;
    const within = (t: number) => t >= sigterm && t <= until;
    const window = `in the ${secs(windowMs)} after SIGTERM (t=${formatSeconds(sigterm)}..${secs(until)})`;
    const connections = ctx.timeline.connections.filter((c) => c.pod === pod && within(c.open));
    const requests = ctx.timeline.requests.filter(
      (r) => r.newConnection && r.pod === pod && within(r.connectionStart ?? r.start),
    );
    const badConnections = connections.filter((c) => BAD_UPSTREAM.has(c.upstream)).sort((a, b) => a.open - b.open);
    const badRequests = requests.filter((r) => r.outcome !== 'ok');
    const details: Record<string, unknown> = {
      sigterm,
      windowEnd: until,
      connections: connections.length,
      failedConnections: badConnections.length,
      requests: requests.length,
      failedRequests: badRequests.length,
    };
    if (connections.length === 0 && requests.length === 0) {
      return {
        verdict: 'inconclusive',
        message: `no new connection reached ${pod} ${window}: nothing was tested`,
        details,
      };
    }
    if (badConnections.length === 0 && badRequests.length === 0) {
      const message =
        connections.length > 0
          ? `${pod} accepted ${allOf(connections.length, 'new connection')} routed to it ${window}` +
            (requests.length > 0 ? `; ${plural(requests.length, 'request')} on new connections succeeded` : '')
          : `${allOf(requests.length, 'request')} on new connections to ${pod} ${window} succeeded`;
      return { verdict: 'pass', message, details };
    }
    const parts: string[] = [];
    if (badConnections.length > 0) {
      const kinds = tally(badConnections.map((c) => c.upstream));
      details['connectionsByUpstream'] = kinds.byKey;
      parts.push(`${count(badConnections.length)} of ${plural(connections.length, 'new connection')} routed to ${pod} ${window} failed (${kinds.text})`);
    }
    if (badRequests.length > 0) {
      const summary = describer.summarize(badRequests, requests.length, 'requests');
      details['requestsByOutcome'] = summary.details['byOutcome'];
      details['firstFailures'] = summary.details['firstFailures'];
      parts.push(
        `${count(badRequests.length)} of ${plural(requests.length, 'request')} ${badConnections.length > 0 ? 'on them' : `on new connections to ${pod} ${window}`} failed (${tally(badRequests.map((r) => r.outcome)).text})`,
      );
    }
    // The earliest failure, the balancer's record first on a tie; a lagging node's request is told as sent straight to the pod.
    const firsts = [...badConnections.slice(0, 1).map((c) => ({ t: c.open, direct: false })), ...badRequests.map((r) => ({ t: r.connectionStart ?? r.start, direct: r.direct === true }))];
    const first = firsts.reduce((a, b) => (b.t < a.t ? b : a));
    parts.push(`first at ${at(first.t)}, ${secs(first.t - sigterm)} after SIGTERM, phase "${phaseAt(ctx.timeline, pod, first.t, undefined, first.direct).label}"`);
    return { verdict: 'fail', message: parts.join('; '), details };
  });
}
