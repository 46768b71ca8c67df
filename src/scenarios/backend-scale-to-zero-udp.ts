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
import { defineScenario, pick, type OptionsOf, type OptionSpecs } from './definition.ts';
import { gatewayWorkload } from './gateway-workload.ts';
import { scaleToZeroOptions, UDP_ECHO_PORT, UDP_HEALTH_PORT, udpEchoService, udpEchoWorkload } from './udp-echo-backend.ts';

export const UDP_BACKEND = 'backend';
export const UDP_GATEWAY = 'gateway';
export const UDP_GATEWAY_PORT = 3478;

const options = {
  ...pick(scaleToZeroOptions, ['preStopSeconds', 'graceSeconds', 'programmingDelayMs']),
  flows: { default: 4, nightly: 50, doc: 'concurrent UDP flows' },
  ratePerFlow: { default: 200, nightly: 100, doc: 'packets per second of each flow' },
  flowMs: { default: 3000, nightly: 45_000, doc: 'how long each flow sends (ends after the backend SIGTERM with the defaults)' },
  ...pick(scaleToZeroOptions, ['scaleAtMs', 'echoIdleMs', 'settleMs']),
} satisfies OptionSpecs;
type Options = OptionsOf<typeof options>;

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

export default defineScenario({
  id: 'backend-scale-to-zero-udp',
  description:
    'STUNner #138: long-lived UDP flows through a relay gateway to one UDP echo backend, which is scaled to 0 with a preStop sleep. No packet may be lost while the backend is alive: a relay must keep relaying to a terminating, serving pod (EndpointSlices), not drop it at once (legacy Endpoints).',
  features: ['udp', 'gateway', 'backend', 'endpoint-discovery'],
  seeds: ['000', '002'],
  role: 'gateway',
  options,
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
