// https://github.com/l7mp/stunner/issues/138 (seed 000), reproduced: client -> UDP gateway Service -> relay pod (the profile
// under test, which relays only to backend pods it has discovered through the Kubernetes API) ->
// backend pod (the reference UDP echo). Long-lived flows run through the relay; the backend
// Deployment is scaled to 0 with a preStop sleep, so its one pod terminates while still serving.
// A relay that discovers through EndpointSlices keeps relaying to the terminating, serving pod and
// the flows lose nothing while it is alive; one that reads the legacy Endpoints API drops the pod
// at once and the flows break in the phase "terminating, serving".
//
// The flows end on their own shortly after the backend's SIGTERM, so the echo drains and exits by
// itself (idle after SIGTERM); packets sent after it exited would be counted apart, never as drain losses.

import type { Topology } from '../model/workload.ts';
import { ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import { defineScenario } from './definition.ts';
import { gatewayWorkload } from './gateway-workload.ts';
import { UDP_ECHO_PORT, UDP_HEALTH_PORT, udpEchoService, udpEchoWorkload } from './udp-echo-backend.ts';

export const UDP_BACKEND = 'backend';
export const UDP_GATEWAY = 'gateway';
export const UDP_GATEWAY_PORT = 3478;

type Options = {
  preStopSeconds: number;
  graceSeconds: number;
  programmingDelayMs: number;
  flows: number;
  ratePerFlow: number;
  flowMs: number;
  scaleAtMs: number;
  echoIdleMs: number;
  settleMs: number;
};

function topology(profile: Profile, o: Options): Topology {
  if (!profile.gateway) throw new ProfileCannotPlay(`profile ${profile.name} provides no gateway`);
  const plan = profile.gateway({ protocol: 'udp', port: UDP_GATEWAY_PORT, backendService: UDP_BACKEND, backendPort: UDP_ECHO_PORT, programmingDelayMs: o.programmingDelayMs });
  return {
    workloads: [
      udpEchoWorkload({
        name: UDP_BACKEND,
        replicas: 1,
        graceSeconds: o.graceSeconds,
        preStopSeconds: o.preStopSeconds,
        env: { DRAIN_IDLE_MS: String(o.echoIdleMs) },
      }),
      gatewayWorkload(profile, plan, {
        name: UDP_GATEWAY,
        replicas: 1,
        ports: [
          { name: 'udp', containerPort: UDP_GATEWAY_PORT, protocol: 'UDP' },
          { name: 'health', containerPort: UDP_HEALTH_PORT, protocol: 'TCP' },
        ],
        graceSeconds: o.graceSeconds,
        route: { kind: 'UDPRoute', backend: { service: UDP_BACKEND, port: UDP_ECHO_PORT } },
      }),
    ],
    services: [
      udpEchoService(UDP_BACKEND, o.programmingDelayMs),
      {
        name: UDP_GATEWAY,
        selector: UDP_GATEWAY,
        ports: [{ name: 'udp', port: UDP_GATEWAY_PORT, targetPort: UDP_GATEWAY_PORT, protocol: 'UDP' }],
        programmingDelayMs: o.programmingDelayMs,
      },
    ],
  };
}

export default defineScenario<Options>({
  id: 'backend-scale-to-zero-udp',
  description:
    'STUNner #138: long-lived UDP flows through a relay gateway to one UDP echo backend, which is scaled to 0 with a preStop sleep. No packet may be lost while the backend is alive: a relay must keep relaying to a terminating, serving pod (EndpointSlices), not drop it at once (legacy Endpoints).',
  features: ['udp', 'gateway', 'backend', 'endpoint-discovery'],
  seeds: ['000', '002'],
  role: 'gateway',
  defaults: {
    preStopSeconds: 1.5,
    graceSeconds: 6,
    programmingDelayMs: 100,
    flows: 4,
    ratePerFlow: 200,
    flowMs: 3000,
    scaleAtMs: 1000,
    echoIdleMs: 500,
    settleMs: 200,
  },
  nightly: { preStopSeconds: 30, graceSeconds: 300, programmingDelayMs: 1000, flows: 50, ratePerFlow: 100, flowMs: 45_000, scaleAtMs: 10_000, echoIdleMs: 2000, settleMs: 2000 },
  optionDocs: {
    preStopSeconds: 'preStop sleep of the backend pod (seed 000: 300)',
    graceSeconds: 'terminationGracePeriodSeconds of the backend pod',
    programmingDelayMs: 'delay before the Services apply an endpoint change',
    flows: 'concurrent UDP flows',
    ratePerFlow: 'packets per second of each flow',
    flowMs: 'how long each flow sends (ends after the backend SIGTERM with the defaults)',
    scaleAtMs: 'when the backend is scaled to 0, after load starts',
    echoIdleMs: 'the echo exits this long after its last datagram once SIGTERMed',
    settleMs: 'time kept after the backend pod is gone',
  },
  build: (profile, o) => ({
    id: 'backend-scale-to-zero-udp',
    profile: profile.name,
    topology: topology(profile, o),
    loads: [
      {
        id: 'udp',
        startMs: 0,
        spec: { kind: 'udp', service: UDP_GATEWAY, port: 'udp', flows: o.flows, ratePerFlow: o.ratePerFlow, durationMs: o.flowMs, payloadBytes: 64, replyTimeoutMs: 1000 },
      },
    ],
    steps: [{ id: 'scale', when: { atMs: o.scaleAtMs }, action: { kind: 'scale', workload: UDP_BACKEND, replicas: 0 } }],
    end: { workloadGone: UDP_BACKEND, settleMs: o.settleMs },
    maxDurationMs: Math.max(o.flowMs, o.scaleAtMs + o.graceSeconds * 1000) + o.settleMs + 15_000,
    expectations: [
      { assert: 'noLostPackets', load: 'udp' },
      { assert: 'notKilled', pod: { step: 'scale' } },
    ],
  }),
});
