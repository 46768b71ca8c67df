import { backendTopology, BACKEND } from './backend-topology.ts';
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
  },
  nightly: { graceSeconds: 30, programmingDelayMs: 10_000, rate: 500, deleteAtMs: 10_000, settleMs: 5000 },
  optionDocs: {
    replicas: 'backend replicas',
    graceSeconds: 'terminationGracePeriodSeconds',
    programmingDelayMs: 'D: delay before the Service load balancer applies an endpoint change',
    rate: 'requests per second, each on a new connection',
    deleteAtMs: 'when the pod is deleted, after load starts',
    settleMs: 'load kept running after the pod is gone',
  },
  build: (profile, o) => ({
    id: 'backend-sigterm-keeps-accepting',
    profile: profile.name,
    topology: backendTopology(profile, { ...o, preStopSeconds: 0 }),
    loads: [
      {
        id: 'http',
        startMs: 0,
        spec: { kind: 'http', service: BACKEND, path: '/', keepAlive: false, mode: 'open', rate: o.rate, connections: 20, timeoutMs: 5000 },
      },
    ],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
    maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + o.settleMs + 10_000,
    expectations: [
      { assert: 'acceptsNewConnectionsAfterSigterm', pod: { step: 'delete' }, windowMs: o.programmingDelayMs },
      { assert: 'noFailedRequests' },
      { assert: 'notKilled', pod: { step: 'delete' } },
    ],
  }),
});
