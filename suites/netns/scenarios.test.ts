// The catalog's kube path on a real cluster: the scenarios run through the kube provider unchanged
// (manifests, server-side apply, watches, pod logs, chaos as kubectl sends it, eviction), on upstream's
// control plane and kube-proxy, with pods run by the node agent. The reference profile passes each;
// a mutant fails each by the assertion that catches it on the local provider too.

import { describe, expect, it } from 'vitest';
import { findProfile } from '../../src/profiles/index.ts';
import type { OptionValues } from '../../src/model/verdict.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectFailedBy, expectPass, repeatUnmeasured } from '../helpers/run-case.ts';
import { skipReason, title, useNetnsCluster } from './context.ts';
import { isBuilt } from '../../src/providers/netns/go-module-build.ts';
import { stunnerModule } from '../../src/providers/netns/stunner-binary.ts';

// STUNner runs from its Go modules (npm run stunner:build; .ci/run builds it): without a build its
// cases skip and say so, as a profile whose binary is missing does.
const stunnerUnbuilt = (await isBuilt(stunnerModule())) ? undefined : 'STUNner is not built here (npm run stunner:build)';

// phase: what the first failure's message of `phaseOf` (the first expected assertion unless named)
// must say of where it happened; an assertion the case does not require to fail is checked where it failed.
const CASES: { scenario: string; profile: string; expect: 'pass' | string[]; overrides?: OptionValues; phase?: RegExp; phaseOf?: string; skip?: string | undefined }[] = [
  { scenario: 'backend-delete-http', profile: 'reference', expect: 'pass' },
  { scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm', expect: ['noFailedRequests'] },
  { scenario: 'node-drain-http', profile: 'reference', expect: 'pass' },
  { scenario: 'node-drain-http', profile: 'mutant-exit-on-sigterm', expect: ['noFailedRequests'] },
  { scenario: 'backend-scale-to-zero-udp', profile: 'reference', expect: 'pass' },
  { scenario: 'backend-scale-to-zero-udp', profile: 'mutant-endpoints-api', expect: ['noLostPackets'] },
  // Streams through kube-proxy: the draining pod closes each the protocol's way (WebSocket 1001, an
  // SSE body ended with a retry hint); a pod that dies at SIGTERM cuts them (1006, a body cut short).
  // kube-proxy picks a backend at random per connection, not in turn as the local balancer does: with
  // 4 streams all of them missed the deleted pod in 1 run of 16 (inconclusive, nothing tested), so
  // the scenarios take 12 on a cluster (their `cluster` option values): 1 in 4,096.
  { scenario: 'backend-delete-websocket', profile: 'reference', expect: 'pass' },
  { scenario: 'backend-delete-websocket', profile: 'mutant-exit-on-sigterm', expect: ['streamsIntact'] },
  { scenario: 'backend-delete-sse', profile: 'reference', expect: 'pass' },
  { scenario: 'backend-delete-sse', profile: 'mutant-exit-on-sigterm', expect: ['streamsIntact'] },
  // gRPC from its bundle (providers/kube/app-bundle.ts): the draining pod says GOAWAY and ends its
  // streams with OK; one that dies at SIGTERM cuts them (UNAVAILABLE). A channel is one connection,
  // so kube-proxy's random choice is per channel: on a cluster the scenario takes 12 channels, a
  // stream on each.
  { scenario: 'backend-delete-grpc', profile: 'reference', expect: 'pass' },
  { scenario: 'backend-delete-grpc', profile: 'mutant-exit-on-sigterm', expect: ['grpcStreamsComplete', 'http2Goaway'] },
  // Pooled h2c through 2 gateway pods, one deleted: a gateway that closes its connections without
  // GOAWAY fails it; the streams it cuts (in most runs: a slot has a stream in flight a fifth of the
  // time) die with no response, and the load's own record of their connection, which earlier
  // responses named, places them on the deleted gateway.
  {
    scenario: 'gateway-http2-goaway',
    profile: 'mutant-gateway-no-goaway',
    expect: ['http2Goaway'],
    phaseOf: 'noFailedRequests',
    phase: /first at t=\S+ s on (gateway-\S+), phase "after SIG(TERM|KILL) of \1, /,
  },
  // Through 2 gateway pods, one deleted: the reference gateway keeps each WebSocket to its end, and
  // exits once its last one has. On a cluster only the load's own record of its streams tells when
  // that was (kube-proxy shows the harness no connection); nginx as packaged cuts them (1006).
  { scenario: 'gateway-delete-websocket', profile: 'reference', expect: 'pass' },
  { scenario: 'gateway-delete-websocket', profile: 'nginx-naive', expect: ['streamsIntact', 'drainTiming'] },
  // A rolling update deletes each old pod once its replacement is Ready, seconds after the step on a
  // cluster (a fraction of one on the model): the long requests of each old pod start as its
  // replacement turns ready, so a grace below the drain timeout is SIGKILLed with requests in flight
  // here as on the model (2 s after the stop signal, the kubelet's floor).
  { scenario: 'gateway-rollout-http', profile: 'reference', expect: 'pass' },
  { scenario: 'gateway-rollout-http', profile: 'reference-without-grace', expect: ['noFailedRequests', 'drainTiming', 'notKilled'] },
  // Through the harness's one node a delete is deprogrammed within milliseconds; a lagging node's
  // connections straight to the pod (the `lagging-node` load) are what a pod that refuses at its
  // stop signal without a preStop meets on a real cluster, every run.
  { scenario: 'backend-sigterm-keeps-accepting', profile: 'reference', expect: 'pass' },
  { scenario: 'backend-sigterm-keeps-accepting', profile: 'mutant-refuse-after-sigterm', expect: ['acceptsNewConnectionsAfterSigterm', 'noFailedRequests'] },
  // The control: a force delete cuts the long requests in flight on the pod (SIGKILL 2 s after its
  // SIGTERM). They die with no response (EOF), so only the node's conntrack says which pod kube-proxy
  // had sent them to: each is placed on the deleted pod (without conntrack: "no pod").
  { scenario: 'force-delete', profile: 'reference', expect: ['noFailedRequests', 'notKilled'], phase: /first at t=\S+ s on (backend-\S+), phase "after SIG(TERM|KILL) of \1, / },
  // STUNner #138 on STUNner itself: 0.18.0 (legacy Endpoints) loses the terminating, serving backend;
  // coturn, which checks no peer against discovered backends, relays to it to the end, and so does
  // the same STUNner 0.18.0 whose route also names a StaticService of the cluster's pod ranges.
  { scenario: 'backend-scale-to-zero-turn', profile: 'coturn', expect: 'pass' },
  { scenario: 'backend-scale-to-zero-turn', profile: 'stunner-018', expect: ['noLostPackets'], phase: /phase "terminating, serving"/, skip: stunnerUnbuilt },
  { scenario: 'backend-scale-to-zero-turn', profile: 'stunner-018-static', expect: 'pass', skip: stunnerUnbuilt },
  // Allocations, like streams, meet kube-proxy's random choice between the two stunnerd pods (the
  // scenario's 12 on a cluster).
  { scenario: 'gateway-delete-turn', profile: 'stunner-018', expect: 'pass', skip: stunnerUnbuilt },
  // The operator restarted under load: it takes the lease ~22 s later and rolls the dataplane, which drains.
  { scenario: 'gateway-controller-restart-turn', profile: 'stunner-018', expect: 'pass', skip: stunnerUnbuilt },
];

describe.skipIf(skipReason !== '')(title('scenarios on a netns cluster'), () => {
  const cluster = useNetnsCluster(2);

  function run(scenarioId: string, profileName: string, overrides: OptionValues = {}): Promise<ScenarioResult> {
    const profile = findProfile(profileName);
    if (!profile) throw new Error(`unknown profile ${profileName}`);
    return cluster.runPair(scenarioId, profile, { overrides });
  }

  for (const c of CASES) {
    it.skipIf(c.skip !== undefined)(`${c.scenario} ${c.expect === 'pass' ? 'passes' : `fails by ${c.expect.join(', ')}`} on ${c.profile}${c.skip ? ` (${c.skip})` : ''}`, async () => {
      // A run the harness could not measure (its own lag, a load not held) is run again, as
      // runCase does locally; a verdict never is.
      const result = await repeatUnmeasured(() => run(c.scenario, c.profile, c.overrides));
      if (c.expect === 'pass') expectPass(result);
      else expectFailedBy(result, ...c.expect);
      const required = c.expect === 'pass' ? [] : c.expect;
      const phaseOf = c.phaseOf ?? required[0];
      const placed = result.assertions.find((a) => a.name === phaseOf);
      if (c.phase && (placed?.verdict === 'fail' || required.includes(phaseOf ?? ''))) expect(placed?.message, describeResult(result)).toMatch(c.phase);
      expect(result.verdict, describeResult(result)).not.toBe('skipped');
    }, 10 * 60_000);
  }
});
