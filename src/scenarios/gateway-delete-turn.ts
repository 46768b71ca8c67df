// A TURN gateway pod is deleted while it relays live allocations (seed 000, STUNner #138: media
// sessions through a TURN relay must survive the relay's rollout). client -> gateway Service (UDP,
// kube-proxy semantics) -> TURN server pod (the profile under test) -> relay -> backend Service ->
// UDP echo pods. Each flow of a TURN load is one allocation with long-term credentials and one
// channel to the backend Service's address; its packets are accounted one by one (src/load/udp.ts).
//
// What coturn 4.6.1 does when its pod is deleted (measured here, and the reason for its two
// profiles): turnserver is terminated by SIGTERM itself, 2-5 ms after the signal, logging nothing
// and sending nothing to its clients; its allocations and relay ports vanish with the process (a
// client's Refresh to delete its allocation goes unanswered). So with the packaged
// behaviour (`coturn-naive`) every allocation it held stops relaying at the delete, and the
// Allocate requests the Service still routes to it until it deprograms the pod go unanswered. The
// drain-correct deployment (`coturn`) holds SIGTERM back with a preStop sleep until just before the
// grace period ends.

import type { Topology } from '../model/workload.ts';
import type { Profile } from '../profiles/profile.ts';
import { defineScenario, type OptionsOf, type OptionSpecs } from './definition.ts';
import { TURN_GATEWAY, turnLoad, turnTopology } from './turn-topology.ts';

const options = {
  gatewayReplicas: { default: 2, doc: 'TURN gateway replicas' },
  graceSeconds: { default: 4, nightly: 300, doc: 'terminationGracePeriodSeconds of the gateway pods' },
  programmingDelayMs: { default: 300, nightly: 5000, doc: 'delay before the Services apply an endpoint change' },
  flows: { default: 4, cluster: 12, nightly: 50, doc: 'allocations live when the gateway pod is deleted' },
  // 50 packets/s: one audio frame every 20 ms, as a voice call sends.
  ratePerFlow: { default: 50, nightly: 50, doc: 'packets per second on each allocation' },
  flowMs: { default: 3000, nightly: 120_000, doc: 'how long each of those allocations relays' },
  newFlows: { default: 4, nightly: 20, doc: 'allocations made 50 ms after the delete, while the pod drains' },
  newFlowMs: { default: 1500, nightly: 30_000, doc: 'how long each new allocation relays' },
  deleteAtMs: { default: 1000, nightly: 10_000, doc: 'when the gateway pod is deleted, after load starts' },
  settleMs: { default: 200, nightly: 2000, doc: 'time kept after the deleted pod is gone' },
} satisfies OptionSpecs;
type Options = OptionsOf<typeof options>;

function topology(profile: Profile, o: Options): Topology {
  return turnTopology(profile, {
    gatewayReplicas: o.gatewayReplicas,
    gatewayGraceSeconds: o.graceSeconds,
    programmingDelayMs: o.programmingDelayMs,
    // The live allocations and the new ones may all meet on the pod that stays.
    peak: o.flows + o.newFlows,
    backend: { replicas: 2, graceSeconds: 5 },
  });
}

/**
 * The relayed packet rate the local TURN path carried without loss on a 2-core machine (the
 * harness's TURN clients, two Service balancers, the relay and the echo backends): 5,000 packets/s
 * (500 allocations x 10/s) lost nothing, 10,000 (500 x 20/s, 50 x 200/s) lost 37-76% of its packets
 * on every pod, disturbed or not (docs/drain-settings.md). Beyond it the run would measure the path, not the drain.
 */
export const TURN_PATH_PACKETS_PER_SECOND = 5000;

/** Last end of a flow (plus its reply time) or of the deleted pod's grace period, ms after load start. */
function lastMoment(o: Options): number {
  const replyMs = 1000;
  return Math.max(o.flowMs + replyMs, o.deleteAtMs + 50 + o.newFlowMs + replyMs, o.deleteAtMs + o.graceSeconds * 1000);
}

export default defineScenario({
  id: 'gateway-delete-turn',
  description:
    'Active TURN allocations (long-term credentials, a channel each, ChannelData at a fixed rate to UDP echo backends) are relayed by a gateway pod that is deleted; more allocations are made while it drains. The allocations it holds must keep relaying every packet until their flows end or its grace period expires, and every new allocation must succeed. coturn 4.6.1 has no drain: SIGTERM terminates turnserver within milliseconds (killed by the signal, nothing logged, nothing sent to clients) and its allocations die with it, so `coturn-naive` (as packaged) fails both and `coturn` (preStop sleep until just before the grace period ends) passes.',
  features: ['turn', 'udp', 'gateway'],
  seeds: ['000'],
  role: 'gateway',
  options,
  checkOptions: (o) => {
    const rate = (o.flows + o.newFlows) * o.ratePerFlow;
    return rate > TURN_PATH_PACKETS_PER_SECOND
      ? `(flows ${o.flows} + newFlows ${o.newFlows}) x ratePerFlow ${o.ratePerFlow} = ${rate} packets/s, above the ${TURN_PATH_PACKETS_PER_SECOND} packets/s the local TURN path carries without loss (lost packets would be ours, not the drain's); lower flows or ratePerFlow`
      : undefined;
  },
  build: (profile, o) => ({
    id: 'gateway-delete-turn',
    profile: profile.name,
    topology: topology(profile, o),
    loads: [
      { id: 'allocations', startMs: 0, spec: turnLoad({ flows: o.flows, ratePerFlow: o.ratePerFlow, durationMs: o.flowMs }) },
      { id: 'new-allocations', startMs: o.deleteAtMs + 50, spec: turnLoad({ flows: o.newFlows, ratePerFlow: o.ratePerFlow, durationMs: o.newFlowMs }) },
    ],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: TURN_GATEWAY, pick: 'oldest' } }],
    // Until every flow has run its course and the deleted pod's grace period is over, whichever is
    // later: a pod that dies early must not end the run before its flows show the losses.
    end: { afterMs: lastMoment(o) + o.settleMs },
    maxDurationMs: lastMoment(o) + o.settleMs + 15_000,
    expectations: [
      { assert: 'allocationsKeepRelaying', load: 'allocations', pod: { step: 'delete' } },
      { assert: 'newAllocationsSucceed', load: 'new-allocations' },
      { assert: 'notKilled', pod: { step: 'delete' } },
    ],
  }),
});
