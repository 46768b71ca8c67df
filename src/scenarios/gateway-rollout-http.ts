// Rollout restart of the gateway Deployment under hey-like keep-alive load (seed 004): every
// gateway pod is replaced, one at a time (maxSurge 1, maxUnavailable 0), each draining as if deleted.

import { defineScenario } from './definition.ts';
import {
  drainExpectations,
  GATEWAY,
  gatewayOptionDocs,
  gatewayTopology,
  gatewayTraffic,
  gatewayTrafficNightly,
} from './gateway-http-topology.ts';
import { denseTrafficDefaults, trafficExpectations } from './dense-traffic.ts';

export default defineScenario({
  id: 'gateway-rollout-http',
  description:
    'Rollout restart of two gateway pods (maxSurge 1, maxUnavailable 0) under hey-like keep-alive load: no request may fail, and every replaced pod drains within its bounds, never by SIGKILL.',
  features: ['gateway', 'http', 'http-keepalive', 'rollout'],
  seeds: ['004'],
  role: 'gateway',
  defaults: {
    gateways: 2,
    backends: 2,
    programmingDelayMs: 200,
    graceSeconds: 5,
    clients: 10,
    ratePerClient: 10,
    rolloutAtMs: 1000,
    settleMs: 500,
    idleExitMs: 1500,
    ...denseTrafficDefaults,
  },
  nightly: { gateways: 3, backends: 3, clients: 100, programmingDelayMs: 1000, graceSeconds: 30, rolloutAtMs: 10_000, settleMs: 5000, ...gatewayTrafficNightly },
  optionDocs: { ...gatewayOptionDocs, rolloutAtMs: 'when the rollout restart starts, after load starts' },
  build: (profile, o) => {
    const setup = gatewayTopology(profile, o);
    const loads = gatewayTraffic({ ...o, keepAlive: true }, setup, o.rolloutAtMs);
    return {
      id: 'gateway-rollout-http',
      profile: profile.name,
      topology: setup.topology,
      loads,
      steps: [{ id: 'rollout', when: { atMs: o.rolloutAtMs }, action: { kind: 'rollout-restart', workload: GATEWAY } }],
      end: { rolloutComplete: GATEWAY, settleMs: o.settleMs },
      maxDurationMs: o.rolloutAtMs + o.gateways * (setup.graceSeconds * 1000 + 10_000) + o.settleMs + 15_000,
      expectations: [
        ...trafficExpectations(loads, o),
        ...drainExpectations({ workload: GATEWAY }, setup, o.idleExitMs),
        // Pods drain one after another: each takes at most its drain timeout, plus a new pod's start.
        { assert: 'rolloutCompletesWithin', workload: GATEWAY, maxMs: o.gateways * (setup.drainTimeoutMs + 5000) },
      ],
    };
  },
});
