import { backendOptions, backendTopology, backendTraffic, backendTrafficOptions, BACKEND, inFlightLoad, REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';
import { trafficExpectations, type RolloutStep } from './dense-traffic.ts';
import { defineScenario, pick } from './definition.ts';

export default defineScenario({
  id: 'backend-rollout-http',
  description:
    'Rollout restart of three backends (maxSurge 1, maxUnavailable 0) under keep-alive HTTP load. No request may fail, no old pod may be SIGKILLed, and the rollout must finish within its bound.',
  features: ['http', 'http-keepalive', 'backend', 'rollout'],
  seeds: ['004'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: {
    ...pick(backendOptions, ['replicas', 'preStopSeconds', 'graceSeconds', 'programmingDelayMs', 'connections', 'requestMs', 'restartAtMs', 'rolloutMaxMs', 'settleMs']),
    ...backendTrafficOptions,
    keepAliveConnections: { ...backendTrafficOptions.keepAliveConnections, nightly: 100 },
  },
  build: (profile, o) => {
    const restart: RolloutStep = { id: 'restart', when: { atMs: o.restartAtMs }, action: { kind: 'rollout-restart', workload: BACKEND } };
    const loads = [{ id: 'http', startMs: 0, spec: inFlightLoad(o) }, ...backendTraffic(o, { rollout: restart, pods: o.replicas }, o.connections)];
    return {
      id: 'backend-rollout-http',
      profile: profile.name,
      topology: backendTopology(profile, { ...o, maxSurge: 1, maxUnavailable: 0 }),
      loads,
      steps: [restart],
      end: { rolloutComplete: BACKEND, settleMs: o.settleMs },
      maxDurationMs: o.restartAtMs + o.rolloutMaxMs + o.graceSeconds * 1000 + o.settleMs + 10_000,
      expectations: [
        ...trafficExpectations(loads, o),
        { assert: 'notKilled', pod: { workload: BACKEND } },
        { assert: 'rolloutCompletesWithin', workload: BACKEND, maxMs: o.rolloutMaxMs },
      ],
    };
  },
});
