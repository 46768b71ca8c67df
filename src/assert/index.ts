// The assertions: each Expectation of a Scenario (src/model/scenario.ts) evaluated over the Timeline.
// Every assertion is a pure function (expectation, ctx) -> AssertionResult whose message says what
// it saw, with numbers. evaluate() joins requests to the balancer's connection records on a copy of
// the requests first, so pods and `refused` outcomes are filled even if the runner did not join.

import type { Expectation } from '../model/scenario.ts';
import type { Timeline } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { joinedRequests } from '../observe/join.ts';
import { acceptsNewConnectionsAfterSigterm } from './accepts-new-connections-after-sigterm.ts';
import { allocationsKeepRelaying } from './allocations-keep-relaying.ts';
import type { AssertContext } from './common.ts';
import { completesInFlight } from './completes-in-flight.ts';
import { drainTiming } from './drain-timing.ts';
import { exitsPromptlyWhenIdle } from './exits-promptly-when-idle.ts';
import { http2Goaway } from './http2-goaway.ts';
import { keepAliveClosedPolitely } from './keep-alive-closed-politely.ts';
import { noFailedRequests } from './no-failed-requests.ts';
import { noIdleUpstreamAtDrain } from './no-idle-upstream-at-drain.ts';
import { newAllocationsSucceed } from './new-allocations-succeed.ts';
import { noLostPackets } from './no-lost-packets.ts';
import { noNewConnectionsAfterDeprogram } from './no-new-connections-after-deprogram.ts';
import { notKilled } from './not-killed.ts';
import { podExitWithin } from './pod-exit-within.ts';
import { reloadSucceeded } from './reload-succeeded.ts';
import { routeMoved } from './route-moved.ts';
import { preStopOutlastsDeprogramming } from './prestop-outlasts-deprogramming.ts';
import { rolloutCompletesWithin } from './rollout-completes-within.ts';
import { streamsIntact } from './streams-intact.ts';
import { grpcStreamsComplete } from './grpc-streams-complete.ts';

export { acceptsNewConnectionsAfterSigterm } from './accepts-new-connections-after-sigterm.ts';
export { allocationsKeepRelaying } from './allocations-keep-relaying.ts';
export { newAllocationsSucceed } from './new-allocations-succeed.ts';
export { resolvePods, type AssertContext } from './common.ts';
export { completesInFlight } from './completes-in-flight.ts';
export { drainTiming } from './drain-timing.ts';
export { http2Goaway } from './http2-goaway.ts';
export { exitsPromptlyWhenIdle } from './exits-promptly-when-idle.ts';
export { keepAliveClosedPolitely } from './keep-alive-closed-politely.ts';
export { noFailedRequests } from './no-failed-requests.ts';
export { noIdleUpstreamAtDrain } from './no-idle-upstream-at-drain.ts';
export { noLostPackets, packetPhase, servingPod, type PacketPhase } from './no-lost-packets.ts';
export { noNewConnectionsAfterDeprogram } from './no-new-connections-after-deprogram.ts';
export { notKilled } from './not-killed.ts';
export { podExitWithin } from './pod-exit-within.ts';
export { reloadSucceeded } from './reload-succeeded.ts';
export { routeMoved } from './route-moved.ts';
export { preStopOutlastsDeprogramming } from './prestop-outlasts-deprogramming.ts';
export { rolloutCompletesWithin } from './rollout-completes-within.ts';
export { streamsIntact } from './streams-intact.ts';
export { grpcStreamsComplete } from './grpc-streams-complete.ts';
export { harnessResponsive, loadHeld, slowConnects, type HeldLoad, type LoadSummary } from './validity.ts';

export function assertOne(expectation: Expectation, ctx: AssertContext): AssertionResult {
  switch (expectation.assert) {
    case 'noFailedRequests':
      return noFailedRequests(expectation, ctx);
    case 'podExitWithin':
      return podExitWithin(expectation, ctx);
    case 'exitsPromptlyWhenIdle':
      return exitsPromptlyWhenIdle(expectation, ctx);
    case 'acceptsNewConnectionsAfterSigterm':
      return acceptsNewConnectionsAfterSigterm(expectation, ctx);
    case 'noNewConnectionsAfterDeprogram':
      return noNewConnectionsAfterDeprogram(expectation, ctx);
    case 'completesInFlight':
      return completesInFlight(expectation, ctx);
    case 'notKilled':
      return notKilled(expectation, ctx);
    case 'rolloutCompletesWithin':
      return rolloutCompletesWithin(expectation, ctx);
    case 'noLostPackets':
      return noLostPackets(expectation, ctx);
    case 'drainTiming':
      return drainTiming(expectation, ctx);
    case 'http2Goaway':
      return http2Goaway(expectation, ctx);
    case 'streamsIntact':
      return streamsIntact(expectation, ctx);
    case 'grpcStreamsComplete':
      return grpcStreamsComplete(expectation, ctx);
    case 'allocationsKeepRelaying':
      return allocationsKeepRelaying(expectation, ctx);
    case 'newAllocationsSucceed':
      return newAllocationsSucceed(expectation, ctx);
    case 'keepAliveClosedPolitely':
      return keepAliveClosedPolitely(expectation, ctx);
    case 'noIdleUpstreamAtDrain':
      return noIdleUpstreamAtDrain(expectation, ctx);
    case 'preStopOutlastsDeprogramming':
      return preStopOutlastsDeprogramming(expectation, ctx);
    case 'reloadSucceeded':
      return reloadSucceeded(expectation, ctx);
    case 'routeMoved':
      return routeMoved(expectation, ctx);
    default: {
      const unknown: never = expectation;
      throw new Error(`unknown assertion ${JSON.stringify(unknown)}`);
    }
  }
}

/**
 * Evaluates every expectation, in order. Does not modify `timeline`. An assertion that throws
 * yields `inconclusive` with the error, never `pass`.
 */
export function evaluate(expectations: readonly Expectation[], timeline: Timeline): AssertionResult[] {
  const joined: Timeline = { ...timeline, requests: joinedRequests(timeline) };
  const ctx: AssertContext = { timeline: joined };
  return expectations.map((expectation) => {
    try {
      return assertOne(expectation, ctx);
    } catch (error) {
      return {
        name: String((expectation as { assert?: unknown }).assert),
        verdict: 'inconclusive',
        message: `could not be evaluated: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
  });
}
