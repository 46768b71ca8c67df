// preStopOutlastsDeprogramming: the pod's stop signal came after the last node of its Service's load
// balancer could have deprogrammed it, not merely after the programming delay. Each node's proxy
// applies an endpoint change at its own sync, up to `spreadMs` past `programmingDelayMs` (kube-proxy's
// minSyncPeriod, 1 s by default: https://kubernetes.io/docs/reference/command-line-tools-reference/kube-proxy/),
// so a preStop that ends at the delay sends the stop signal while some node may still send the pod
// new connections. Whether one does in a given run is luck (the nodes' lags of that run); the margin
// is not: it is measured from the delete to the stop signal, and must cover the spread.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, perPod, reference, secs, type AssertContext } from './common.ts';

export type PreStopOutlastsDeprogramming = Extract<Expectation, { assert: 'preStopOutlastsDeprogramming' }>;

export function preStopOutlastsDeprogramming(expectation: PreStopOutlastsDeprogramming, ctx: AssertContext): AssertionResult {
  const { programmingDelayMs, spreadMs } = expectation;
  return perPod('preStopOutlastsDeprogramming', expectation.pod, ctx, (pod, lc) => {
    const deleted = reference(lc, 'delete');
    if (typeof deleted !== 'number') return deleted;
    // A cluster records neither the preStop nor the stop signal, unless the app logs the signal or
    // the node agent is zerodrop's own (src/providers/kube/observers.ts): there is no margin to
    // measure, and no SIGTERM missing.
    if (lc.sigterm === undefined && (lc.preStopStart === undefined || lc.sigtermSource === 'unseen')) {
      return { verdict: 'pass', message: `${pod}'s preStop and stop signal are not on the Timeline (a cluster shows the signal only where the app logs it): its margin is not measured here`, details: { delete: deleted, observed: false } };
    }
    // A kubelet's cluster shows the signal where the app logs it (or its exit by the signal proves
    // it), and never the preStop: such a signal, with no preStop on the Timeline, says nothing of
    // whether the pod had a hook, so nothing is measured. A signal the harness or zerodrop's node
    // agent sent comes with the preStop the same sender ran, if there was one.
    if (lc.preStopStart === undefined && lc.sigterm !== undefined && (lc.sigtermSource === 'pod-log' || lc.sigtermSource === 'exit')) {
      return {
        verdict: 'pass',
        message: `${pod}'s stop signal came ${secs(lc.sigterm - deleted)} after its delete (at ${at(lc.sigterm)}, ${lc.sigtermSource === 'exit' ? 'its exit by the signal' : 'from its log'}); a cluster does not show a preStop, so its margin over deprogramming is not measured here`,
        details: { delete: deleted, stopSignal: lc.sigterm, observed: 'signal only' },
      };
    }
    // Without a preStop hook the stop signal comes at the delete by design: a gateway that keeps
    // accepting after it (as a proxy must where peers have not yet seen the endpoint go) drains
    // correctly without one, and one that does not is caught by the requests it refuses.
    if (lc.preStopStart === undefined) {
      return { verdict: 'pass', message: `${pod} has no preStop hook: there is no margin to measure (whether it kept accepting after its stop signal until it was deprogrammed is for noFailedRequests)`, details: { delete: deleted, preStop: false } };
    }
    const stop = reference(lc, 'sigterm');
    if (typeof stop !== 'number') return stop;
    const marginMs = stop - (deleted + programmingDelayMs);
    const details = { delete: deleted, stopSignal: stop, deprogrammed: lc.deprogrammed, programmingDelayMs, marginMs, neededMs: spreadMs };
    const signalled = `${pod}'s stop signal came ${secs(stop - deleted)} after its delete (at ${at(stop)})`;
    const margin = `a margin of ${secs(marginMs)} over the ${secs(programmingDelayMs)} programming delay`;
    const needed = `the ${secs(spreadMs)} past it within which each node deprograms the pod at its own sync`;
    if (lc.deprogrammed !== undefined && stop < lc.deprogrammed) {
      return {
        verdict: 'fail',
        message: `${signalled}, ${secs(lc.deprogrammed - stop)} before the last node deprogrammed it (at ${at(lc.deprogrammed)}): ${margin}, less than ${needed}`,
        details,
      };
    }
    if (marginMs < spreadMs) {
      const thisRun = lc.deprogrammed === undefined ? '' : ` (this run the last node deprogrammed it ${secs(lc.deprogrammed - deleted)} after the delete; another run's nodes may be later)`;
      return { verdict: 'fail', message: `${signalled}: ${margin}, less than ${needed}${thisRun}`, details };
    }
    return { verdict: 'pass', message: `${signalled}: ${margin}, covering ${needed}`, details };
  });
}
