import { backendTopology, BACKEND } from './backend-topology.ts';
import { defineScenario } from './definition.ts';

export default defineScenario({
  id: 'backend-long-request',
  description:
    'A long request is in flight on the only backend when that backend is deleted. It must complete successfully within the grace period, and the pod must then exit on its own.',
  features: ['http', 'backend'],
  seeds: ['004'],
  role: 'backend',
  tolerates: {
    'mutant-refuse-after-sigterm':
      'its one request is in flight before SIGTERM and no other connection comes',
  },
  options: {
    requestMs: { default: 5000, nightly: 60_000, doc: 'duration of the long request' },
    graceSeconds: { default: 8, nightly: 120, doc: 'terminationGracePeriodSeconds (must exceed what is left of the request)' },
    deleteAtMs: { default: 1000, nightly: 5000, doc: 'when the pod is deleted, after the request starts' },
  },
  build: (profile, o) => ({
    id: 'backend-long-request',
    profile: profile.name,
    // One replica, so the long request is certainly on the pod that gets deleted.
    topology: backendTopology(profile, { replicas: 1, preStopSeconds: 0, graceSeconds: o.graceSeconds, programmingDelayMs: 0 }),
    loads: [{ id: 'long', startMs: 0, spec: { kind: 'single', service: BACKEND, path: `/delay?ms=${o.requestMs}`, timeoutMs: o.requestMs + o.graceSeconds * 1000 } }],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: 0 },
    maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + 10_000,
    expectations: [
      { assert: 'completesInFlight', load: 'long' },
      { assert: 'noFailedRequests' },
      { assert: 'notKilled', pod: { step: 'delete' } },
    ],
  }),
});
