// The control plane restarted under load (envoyproxy/gateway#1712: stay hitless through a
// control-plane upgrade): live TURN allocations relay through the dataplane while the controller
// that configures it is rollout-restarted. The new controller process comes up, takes the leader
// lease and reconciles everything again; the dataplane it manages must not notice. A controller
// that re-creates or rolls its dataplane on start, or pushes it an empty or partial configuration
// before it has read the world, cuts the allocations; new allocations made once it has taken over
// must succeed too.

import { defineScenario } from './definition.ts';
import { TURN_GATEWAY, turnLoad, turnTopology } from './turn-topology.ts';

type Options = {
  gatewayReplicas: number;
  flows: number;
  ratePerFlow: number;
  flowMs: number;
  restartAtMs: number;
  newFlows: number;
  newFlowsAtMs: number;
  newFlowMs: number;
  settleMs: number;
};

export default defineScenario<Options>({
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
  defaults: {
    gatewayReplicas: 1,
    flows: 4,
    // 50 packets/s: one audio frame every 20 ms, as a voice call sends.
    ratePerFlow: 50,
    // Past the new controller's takeover and what it does then. Measured with STUNner 0.18.0 on the
    // netns cluster: the new operator starts in about 0.5 s, the old one is stopped 5 s later, and
    // the new one leads about 22 s after the restart (the old lease expires: 15 s, controller-runtime's
    // default), then rolls the dataplane Deployment.
    flowMs: 40_000,
    restartAtMs: 1000,
    newFlows: 4,
    newFlowsAtMs: 30_000,
    newFlowMs: 8000,
    settleMs: 200,
  },
  nightly: { gatewayReplicas: 2, flows: 50, flowMs: 120_000, restartAtMs: 10_000, newFlows: 20, newFlowsAtMs: 90_000, newFlowMs: 20_000, settleMs: 2000 },
  optionDocs: {
    gatewayReplicas: 'dataplane replicas',
    flows: 'allocations live through the restart',
    ratePerFlow: 'packets per second on each allocation',
    flowMs: 'how long each of those allocations relays',
    restartAtMs: 'when the controller is rollout-restarted, after load starts',
    newFlows: 'allocations made after the restart, once the new controller should lead',
    newFlowsAtMs: 'when those allocations are made, after load starts',
    newFlowMs: 'how long each new allocation relays',
    settleMs: 'time kept after the last flow ends',
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
