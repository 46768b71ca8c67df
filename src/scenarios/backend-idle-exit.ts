import { backendOptions, backendTopology, BACKEND } from './backend-topology.ts';
import { defineScenario } from './definition.ts';

export default defineScenario({
  id: 'backend-idle-exit',
  description:
    'No traffic at all; a backend is deleted. With nothing to drain it must exit promptly after SIGTERM, not run out its grace period and be SIGKILLed.',
  features: ['backend', 'idle'],
  seeds: ['003', '004'],
  role: 'backend',
  tolerates: {
    'mutant-exit-on-sigterm':
      'an idle pod has nothing to drain: exiting at SIGTERM is what it should do',
    'mutant-refuse-after-sigterm':
      'an idle pod gets no connection at all; it exits once its listener is closed',
  },
  options: {
    replicas: { ...backendOptions.replicas, default: 1 },
    graceSeconds: { ...backendOptions.graceSeconds, default: 8 },
    exitWithinMs: { default: 2500, doc: 'bound on SIGTERM (or last connection closed) to exit' },
    deleteAtMs: { default: 200, doc: 'when the pod is deleted' },
  },
  build: (profile, o) => ({
    id: 'backend-idle-exit',
    profile: profile.name,
    topology: backendTopology(profile, { ...o, preStopSeconds: 0, programmingDelayMs: 0 }),
    loads: [],
    steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: BACKEND, pick: 'oldest' } }],
    end: { podGone: { step: 'delete' }, settleMs: 0 },
    maxDurationMs: o.deleteAtMs + o.graceSeconds * 1000 + 10_000,
    expectations: [
      { assert: 'exitsPromptlyWhenIdle', pod: { step: 'delete' }, withinMs: o.exitWithinMs },
      { assert: 'podExitWithin', pod: { step: 'delete' }, from: 'sigterm', minMs: 0, maxMs: o.exitWithinMs },
      { assert: 'notKilled', pod: { step: 'delete' } },
    ],
  }),
});
