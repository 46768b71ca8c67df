import { backendTopology, backendTraffic, backendTrafficDefaults, backendTrafficOptionDocs, BACKEND } from './backend-topology.ts';
import { trafficExpectations } from './dense-traffic.ts';
import { defineScenario } from './definition.ts';

export default defineScenario({
  id: 'backend-sigterm-keeps-accepting',
  description:
    'The Service load balancer deprograms slowly (delay D) and the pod has no preStop, so new connections keep arriving after SIGTERM. Every new connection in [SIGTERM, SIGTERM + D] must succeed: peers have not seen the endpoint removal yet.',
  features: ['http', 'http-no-keepalive', 'backend', 'slow-lb'],
  seeds: ['001'],
  role: 'backend',
  defaults: {
    replicas: 2,
    graceSeconds: 6,
    programmingDelayMs: 2000,
    rate: 100,
    deleteAtMs: 1000,
    settleMs: 300,
    ...backendTrafficDefaults,
  },
  nightly: { graceSeconds: 30, programmingDelayMs: 10_000, rate: 500, deleteAtMs: 10_000, settleMs: 5000 },
  optionDocs: {
    replicas: 'backend replicas',
    graceSeconds: 'terminationGracePeriodSeconds',
    programmingDelayMs: 'D: delay before the Service load balancer applies an endpoint change',
    rate: 'requests per second, each on a new connection',
    deleteAtMs: 'when the pod is deleted, after load starts',
    settleMs: 'load kept running after the pod is gone',
    ...backendTrafficOptionDocs,
  },
  build: (profile, o) => {
    const loads = [
      {
        id: 'http',
        startMs: 0,
        spec: { kind: 'http' as const, service: BACKEND, path: '/', keepAlive: false, mode: 'open' as const, rate: o.rate, connections: OPEN_LOOP_CONNECTIONS, timeoutMs: 5000 },
      },
      ...backendTraffic({ ...o, preStopSeconds: 0 }, o.deleteAtMs, OPEN_LOOP_CONNECTIONS),
    ];
    return {
      id: 'backend-sigterm-keeps-accepting',
      profile: profile.name,
      topology: backendTopology(profile, { ...o, preStopSeconds: 0 }),
      loads,
      steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
      end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
      maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + o.settleMs + 10_000,
      expectations: [
        { assert: 'acceptsNewConnectionsAfterSigterm', pod: { step: 'delete' }, windowMs: o.programmingDelayMs },
        ...trafficExpectations(loads, o),
        { assert: 'notKilled', pod: { step: 'delete' } },
      ],
    };
  },
});

/** Connections of the open loop: enough for 100 requests/s on loopback through a stall of about 200 ms. */
const OPEN_LOOP_CONNECTIONS = 20;
