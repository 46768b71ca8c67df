import { backendOptions, backendTopology, BACKEND, inFlightLoad } from './backend-topology.ts';
import { defineScenario, pick, withoutNightly } from './definition.ts';

export default defineScenario({
  id: 'force-delete',
  description:
    'Control: a backend is deleted with grace period 0 under load, so it is killed with requests in flight. The harness must report this as failing, naming the phase of each failure; a pass here means the harness is blind. Its requests last 8 s, longer than any kubelet lets a force-deleted pod live (1 s for preStop, then SIGKILL 2 s after the stop signal; at most the pod\'s 5 s grace), so that even the reference backend, which finishes what it has in flight, is killed with requests in flight.',
  features: ['http', 'http-keepalive', 'backend'],
  seeds: ['000', '001', '002', '003', '004'],
  role: 'backend',
  control: true,
  options: withoutNightly({
    ...pick(backendOptions, ['replicas', 'programmingDelayMs', 'connections']),
    // Not 100 ms: a real kubelet does not SIGKILL a force-deleted pod at once (src/providers/local/pod.ts
    // models its minimum grace), and a backend that drains would finish short requests and pass the control.
    requestMs: { ...backendOptions.requestMs, default: 8_000 },
    deleteAtMs: { default: 1000, doc: 'when the pod is force deleted, after load starts' },
    settleMs: backendOptions.settleMs,
  }),
  build: (profile, o) => ({
    id: 'force-delete',
    profile: profile.name,
    topology: backendTopology(profile, { ...o, preStopSeconds: 1, graceSeconds: 5 }),
    loads: [{ id: 'http', startMs: 0, spec: inFlightLoad(o) }],
    steps: [
      { id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest', gracePeriodSeconds: 0 } },
    ],
    end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
    maxDurationMs: o.deleteAtMs + o.settleMs + 15_000,
    expectations: [{ assert: 'noFailedRequests' }, { assert: 'notKilled', pod: { step: 'delete' } }],
  }),
});
