import { backendOptionDocs, backendTopology, backendTraffic, backendTrafficDefaults, backendTrafficOptionDocs, BACKEND, inFlightLoad, pick } from './backend-topology.ts';
import { trafficExpectations } from './dense-traffic.ts';
import { defineScenario } from './definition.ts';

export default defineScenario({
  id: 'backend-rollout-http',
  description:
    'Rollout restart of three backends (maxSurge 1, maxUnavailable 0) under keep-alive HTTP load. No request may fail, no old pod may be SIGKILLed, and the rollout must finish within its bound.',
  features: ['http', 'http-keepalive', 'backend', 'rollout'],
  seeds: ['004'],
  role: 'backend',
  tolerates: {
    'mutant-refuse-after-sigterm':
      'a preStop sleep outlasts deprogramming, so no new connection reaches the pod after SIGTERM (backend-sigterm-keeps-accepting catches it)',
  },
  defaults: {
    replicas: 3,
    preStopSeconds: 1,
    graceSeconds: 5,
    programmingDelayMs: 200,
    connections: 12,
    requestMs: 100,
    restartAtMs: 1000,
    rolloutMaxMs: 20_000,
    settleMs: 500,
    ...backendTrafficDefaults,
  },
  nightly: { preStopSeconds: 15, graceSeconds: 60, programmingDelayMs: 5000, connections: 100, restartAtMs: 10_000, rolloutMaxMs: 300_000, settleMs: 5000, keepAliveConnections: 100 },
  optionDocs: {
    ...pick(backendOptionDocs, ['replicas', 'preStopSeconds', 'graceSeconds', 'programmingDelayMs', 'connections', 'requestMs', 'settleMs']),
    ...backendTrafficOptionDocs,
    restartAtMs: 'when the rollout restart is issued, after load starts',
    rolloutMaxMs: 'bound on the rollout, from restart to the last old pod gone',
  },
  build: (profile, o) => {
    const loads = [{ id: 'http', startMs: 0, spec: inFlightLoad(o) }, ...backendTraffic(o, o.restartAtMs, o.connections)];
    return {
      id: 'backend-rollout-http',
      profile: profile.name,
      topology: backendTopology(profile, { ...o, maxSurge: 1, maxUnavailable: 0 }),
      loads,
      steps: [{ id: 'restart', when: { atMs: o.restartAtMs }, action: { kind: 'rollout-restart', workload: BACKEND } }],
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
