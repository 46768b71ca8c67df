import { backendOptionDocs, backendTopology, backendTraffic, backendTrafficDefaults, backendTrafficOptionDocs, BACKEND, inFlightLoad, pick } from './backend-topology.ts';
import { trafficExpectations } from './dense-traffic.ts';
import { defineScenario } from './definition.ts';

export default defineScenario({
  id: 'backend-delete-http',
  description:
    'Three backends behind a Service under keep-alive HTTP load; one is deleted with a preStop sleep that outlasts load balancer deprogramming. No request may fail, the deleted pod must get no new connection once deprogrammed, and it must exit within its grace period.',
  features: ['http', 'http-keepalive', 'backend'],
  seeds: ['004', '001'],
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
    deleteAtMs: 1000,
    settleMs: 500,
    ...backendTrafficDefaults,
  },
  nightly: { preStopSeconds: 15, graceSeconds: 60, programmingDelayMs: 5000, connections: 100, deleteAtMs: 10_000, settleMs: 5000, keepAliveConnections: 100 },
  optionDocs: {
    ...pick(backendOptionDocs, ['replicas', 'preStopSeconds', 'graceSeconds', 'programmingDelayMs', 'connections', 'requestMs', 'settleMs']),
    ...backendTrafficOptionDocs,
    deleteAtMs: 'when the pod is deleted, after load starts',
  },
  build: (profile, o) => {
    const loads = [{ id: 'http', startMs: 0, spec: inFlightLoad(o) }, ...backendTraffic(o, o.deleteAtMs, o.connections)];
    return {
      id: 'backend-delete-http',
      profile: profile.name,
      topology: backendTopology(profile, o),
      loads,
      steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
      end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
      maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + o.settleMs + 10_000,
      expectations: [
        ...trafficExpectations(loads, o),
        { assert: 'noNewConnectionsAfterDeprogram', pod: { step: 'delete' } },
        { assert: 'podExitWithin', pod: { step: 'delete' }, from: 'delete', minMs: o.preStopSeconds * 1000, maxMs: o.graceSeconds * 1000 },
        { assert: 'notKilled', pod: { step: 'delete' } },
      ],
    };
  },
});
