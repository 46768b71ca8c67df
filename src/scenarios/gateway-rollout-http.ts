// Rollout restart of the gateway Deployment under hey-like keep-alive load (seed 004): every
// gateway pod is replaced, one at a time (maxSurge 1, maxUnavailable 0), each draining as if deleted.

import { defineScenario, pick } from './definition.ts';
import { drainExpectations, GATEWAY, gatewayOptions, gatewayTopology, gatewayTraffic } from './gateway-http-topology.ts';
import { trafficExpectations, type RolloutStep } from './dense-traffic.ts';

export default defineScenario({
  id: 'gateway-rollout-http',
  description:
    'Rollout restart of two gateway pods (maxSurge 1, maxUnavailable 0) under hey-like keep-alive load: no request may fail, and every replaced pod drains within its bounds, never by SIGKILL.',
  features: ['gateway', 'http', 'http-keepalive', 'rollout'],
  seeds: ['004'],
  role: 'gateway',
  options: {
    ...pick(gatewayOptions, ['gateways', 'backends', 'programmingDelayMs', 'graceSeconds', 'clients', 'ratePerClient']),
    rolloutAtMs: { default: 1000, nightly: 10_000, doc: 'when the rollout restart starts, after load starts' },
    ...pick(gatewayOptions, ['settleMs', 'idleExitMs', 'keepAliveConnections', 'thinkMs', 'freshClients', 'longRequests']),
  },
  build: (profile, o) => {
    const setup = gatewayTopology(profile, o);
    const rollout: RolloutStep = { id: 'rollout', when: { atMs: o.rolloutAtMs }, action: { kind: 'rollout-restart', workload: GATEWAY } };
    const loads = gatewayTraffic({ ...o, keepAlive: true }, setup, { rollout, pods: o.gateways });
    return {
      id: 'gateway-rollout-http',
      profile: profile.name,
      topology: setup.topology,
      loads,
      steps: [rollout],
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
