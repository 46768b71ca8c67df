import { backendOptions, backendTopology, backendTraffic, backendTrafficOptions, BACKEND } from './backend-topology.ts';
import { trafficExpectations } from './dense-traffic.ts';
import { defineScenario } from './definition.ts';

export default defineScenario({
  id: 'backend-sigterm-keeps-accepting',
  description:
    'The Service load balancer deprograms slowly (delay D) and the pod has no preStop, so new connections keep arriving after SIGTERM. Every new connection in [SIGTERM, SIGTERM + D] must succeed: peers have not seen the endpoint removal yet.',
  features: ['http', 'http-no-keepalive', 'backend', 'slow-lb'],
  seeds: ['001'],
  role: 'backend',
  options: {
    replicas: { ...backendOptions.replicas, default: 2 },
    graceSeconds: { ...backendOptions.graceSeconds, default: 6, nightly: 30 },
    programmingDelayMs: { default: 2000, nightly: 10_000, doc: 'D: delay before the Service load balancer applies an endpoint change' },
    rate: { default: 100, nightly: 500, doc: 'requests per second, each on a new connection' },
    deleteAtMs: backendOptions.deleteAtMs,
    settleMs: { default: 300, nightly: 5000, doc: 'load kept running after the pod is gone' },
    ...backendTrafficOptions,
  },
  build: (profile, o) => {
    const loads = [
      {
        id: 'http',
        startMs: 0,
        spec: { kind: 'http' as const, service: BACKEND, path: '/', keepAlive: false, mode: 'open' as const, rate: o.rate, connections: OPEN_LOOP_CONNECTIONS, timeoutMs: 5000 },
      },
      ...backendTraffic({ ...o, preStopSeconds: 0 }, { atMs: o.deleteAtMs }, OPEN_LOOP_CONNECTIONS),
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
