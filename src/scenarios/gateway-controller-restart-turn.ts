// The control plane restarted under load (envoyproxy/gateway#1712: stay hitless through a
// control-plane upgrade): live TURN allocations relay through the dataplane while the controller
// that configures it is rollout-restarted. The new controller process comes up, takes the leader
// lease and reconciles everything again; the dataplane it manages must not notice. A controller
// that re-creates or rolls its dataplane on start, or pushes it an empty or partial configuration
// before it has read the world, cuts the allocations; new allocations made once it has taken over
// must succeed too.

import { defineScenario } from './definition.ts';
import { TURN_GATEWAY, turnLoad, turnTopology } from './turn-topology.ts';

export default defineScenario({
  id: 'gateway-controller-restart-turn',
  description:
    "Live TURN allocations relay through the gateway's dataplane while the controller that configures it (a chart's controller Deployment) is rollout-restarted; more allocations are made once the new controller has had time to take over. Every allocation must succeed and every packet of it be relayed: the dataplane must not notice its control plane restarting.",
  features: ['turn', 'udp', 'gateway', 'control-plane'],
  seeds: ['000'],
  role: 'gateway',
  tolerates: {
    'stunner-naive':
      "its 30 s grace period cuts allocations only if the dataplane pod they are on is deleted more than 30 s before they end; the dataplane rollout that follows the controller's takeover starts near the flows' end",
  },
  options: {
    gatewayReplicas: { default: 1, nightly: 2, doc: 'dataplane replicas' },
    flows: { default: 4, nightly: 50, doc: 'allocations live through the restart' },
    // 50 packets/s: one audio frame every 20 ms, as a voice call sends.
    ratePerFlow: { default: 50, doc: 'packets per second on each allocation' },
    // Past the new controller's takeover and what it does then. Measured with STUNner 0.18.0 on the
    // netns cluster: the new operator starts in about 0.5 s, the old one is stopped 5 s later, and
    // the new one leads about 22 s after the restart (the old lease expires: 15 s, controller-runtime's
    // default), then rolls the dataplane Deployment.
    flowMs: { default: 40_000, nightly: 120_000, doc: 'how long each of those allocations relays' },
    restartAtMs: { default: 1000, nightly: 10_000, doc: 'when the controller is rollout-restarted, after load starts' },
    newFlows: { default: 4, nightly: 20, doc: 'allocations made after the restart, once the new controller should lead' },
    newFlowsAtMs: { default: 30_000, nightly: 90_000, doc: 'when those allocations are made, after load starts' },
    newFlowMs: { default: 8000, nightly: 20_000, doc: 'how long each new allocation relays' },
    settleMs: { default: 200, nightly: 2000, doc: 'time kept after the last flow ends' },
  },
  checkOptions: (o) =>
    o.restartAtMs >= o.flowMs
      ? `restartAtMs ${o.restartAtMs} is not before flowMs ${o.flowMs}: no allocation would be live through the restart; raise flowMs`
      : undefined,
  build: (profile, o) => ({
    id: 'gateway-controller-restart-turn',
    profile: profile.name,
    topology: turnTopology(profile, {
      gatewayReplicas: o.gatewayReplicas,
      gatewayGraceSeconds: 30,
      programmingDelayMs: 100,
      peak: o.flows + o.newFlows,
      backend: { replicas: 2, graceSeconds: 5 },
    }),
    loads: [
      { id: 'allocations', startMs: 0, spec: turnLoad({ flows: o.flows, ratePerFlow: o.ratePerFlow, durationMs: o.flowMs }) },
      { id: 'new-allocations', startMs: o.newFlowsAtMs, spec: turnLoad({ flows: o.newFlows, ratePerFlow: o.ratePerFlow, durationMs: o.newFlowMs }) },
    ],
    steps: [{ id: 'restart', when: { atMs: o.restartAtMs }, action: { kind: 'restart-controller', workload: TURN_GATEWAY } }],
    end: { afterMs: Math.max(o.flowMs, o.newFlowsAtMs + o.newFlowMs) + 1000 + o.settleMs },
    maxDurationMs: Math.max(o.flowMs, o.newFlowsAtMs + o.newFlowMs) + 1000 + o.settleMs + 15_000,
    // A failed allocation loses every packet of its flow: noLostPackets judges the new ones too.
    expectations: [
      { assert: 'noLostPackets', load: 'allocations' },
      { assert: 'noLostPackets', load: 'new-allocations' },
    ],
  }),
});
