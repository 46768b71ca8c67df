import { backendOptions, backendTopology, backendTraffic, backendTrafficOptions, BACKEND, inFlightLoad, REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';
import { trafficExpectations } from './dense-traffic.ts';
import { defineScenario, pick } from './definition.ts';

export default defineScenario({
  id: 'backend-delete-http',
  description:
    'Three backends behind a Service under keep-alive HTTP load; one is deleted with a preStop sleep that outlasts load balancer deprogramming. No request may fail, the deleted pod must get no new connection once deprogrammed, and it must exit within its grace period.',
  features: ['http', 'http-keepalive', 'backend'],
  seeds: ['004', '001'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: {
    ...pick(backendOptions, ['replicas', 'preStopSeconds', 'graceSeconds', 'programmingDelayMs', 'connections', 'requestMs', 'deleteAtMs', 'settleMs']),
    ...backendTrafficOptions,
    keepAliveConnections: { ...backendTrafficOptions.keepAliveConnections, nightly: 100 },
  },
  build: (profile, o) => {
    const loads = [{ id: 'http', startMs: 0, spec: inFlightLoad(o) }, ...backendTraffic(o, { atMs: o.deleteAtMs }, o.connections)];
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
