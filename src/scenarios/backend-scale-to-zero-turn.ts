// STUNner issue 138 (seed 000) as its users met it: TURN allocations through the gateway (the
// profile under test) relay to a media server's own pod address, and that backend Deployment is
// scaled to 0 with a preStop sleep, so its one pod terminates while still serving. A TURN server
// that admits a peer only while it is one of the backends it discovered (STUNner's peer check)
// must keep the terminating, serving pod among them (EndpointSlices, STUNner 0.19 and later: seed
// 002); one that reads the legacy Endpoints API loses the pod the moment it terminates, and every
// packet relayed to it from then on is dropped, while the pod is still alive and echoing.
//
// The flows end on their own shortly after the backend's SIGTERM, so the echo drains and exits by
// itself (idle after SIGTERM); packets sent after it exited would be counted apart, never as drain losses.

import { defineScenario, pick } from './definition.ts';
import { TURN_BACKEND, turnLoad, turnTopology } from './turn-topology.ts';
import { scaleToZeroOptions } from './udp-echo-backend.ts';

export default defineScenario({
  id: 'backend-scale-to-zero-turn',
  description:
    "STUNner #138 as reported: TURN allocations relay to the backend pod's own address (a media server's ICE candidate), and the backend is scaled to 0 with a preStop sleep. No packet may be lost while the backend is alive: a TURN server that checks peers against the backends it discovered must keep a terminating, serving pod (EndpointSlices), not drop it at once (legacy Endpoints, STUNner before 0.19).",
  features: ['turn', 'udp', 'gateway', 'backend', 'endpoint-discovery'],
  seeds: ['000', '002'],
  role: 'gateway',
  tolerates: {
    'coturn-naive': "the TURN server is never deleted here, so coturn's exit at SIGTERM is not exercised; it relays to any peer it is allowed, with no discovery to lose a pod from",
    'stunner-naive': 'the TURN server is never deleted here: its 30 s grace period is not exercised',
  },
  knownFailures: {
    'stunner-018':
      'STUNner 0.18.0 feeds stunnerd its backends from the legacy Endpoints API, which drops a pod the moment it terminates: https://github.com/l7mp/stunner/issues/138, fixed by the EndpointSlice controller of 0.19.0 (https://github.com/l7mp/stunner/releases/tag/v0.19.0)',
  },
  options: {
    preStopSeconds: { ...scaleToZeroOptions.preStopSeconds, default: 3 },
    graceSeconds: { ...scaleToZeroOptions.graceSeconds, default: 8 },
    programmingDelayMs: scaleToZeroOptions.programmingDelayMs,
    flows: { default: 4, nightly: 50, doc: 'concurrent TURN allocations, each relaying to the backend pod' },
    // 50 packets/s: one audio frame every 20 ms, as a voice call sends.
    ratePerFlow: { default: 50, doc: 'packets per second of each allocation' },
    flowMs: { default: 5000, nightly: 45_000, doc: 'how long each allocation relays (ends after the backend SIGTERM with the defaults)' },
    scaleAtMs: { ...scaleToZeroOptions.scaleAtMs, default: 1500 },
    ...pick(scaleToZeroOptions, ['echoIdleMs', 'settleMs']),
  },
  checkOptions: (o) =>
    o.flowMs <= o.scaleAtMs
      ? `flowMs ${o.flowMs} ends before scaleAtMs ${o.scaleAtMs}: no packet would be relayed while the backend terminates; raise flowMs`
      : undefined,
  build: (profile, o) => ({
    id: 'backend-scale-to-zero-turn',
    profile: profile.name,
    topology: turnTopology(profile, {
      gatewayReplicas: 1,
      // The TURN server is not what terminates here; a long grace keeps it out of the way.
      gatewayGraceSeconds: 30,
      programmingDelayMs: o.programmingDelayMs,
      peak: o.flows,
      backend: { replicas: 1, graceSeconds: o.graceSeconds, preStopSeconds: o.preStopSeconds, env: { DRAIN_IDLE_MS: String(o.echoIdleMs) } },
    }),
    loads: [{ id: 'turn', startMs: 0, spec: turnLoad({ flows: o.flows, ratePerFlow: o.ratePerFlow, durationMs: o.flowMs, peerPods: true }) }],
    steps: [{ id: 'scale', when: { atMs: o.scaleAtMs }, action: { kind: 'scale', workload: TURN_BACKEND, replicas: 0 } }],
    end: { workloadGone: TURN_BACKEND, settleMs: o.settleMs },
    maxDurationMs: Math.max(o.flowMs, o.scaleAtMs + o.graceSeconds * 1000) + o.settleMs + 15_000,
    expectations: [
      { assert: 'noLostPackets', load: 'turn' },
      { assert: 'notKilled', pod: { step: 'scale' } },
    ],
  }),
});
