import { defineScenario } from './definition.ts';
import { sseLoadOptions, streamOptions } from './stream-delete.ts';
import { buildStreamRollout, rolloutOptions } from './stream-rollout.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'backend-rollout-sse',
  description:
    'Rollout restart of the backends (maxSurge 1, maxUnavailable 0) under Server-Sent Events streams (events numbered by id at a fixed rate). Every old pod must end its event streams cleanly (with a retry hint); the client reconnects with Last-Event-ID, maybe to the next old pod, which ends it again: every reconnect must succeed and continue with the next event, none lost, none repeated, no body cut short, no stall. No old pod may be SIGKILLed, and the rollout must finish within its bound.',
  features: ['sse', 'backend', 'rollout'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...streamOptions, ...sseLoadOptions, ...rolloutOptions },
  build: (profile, o) => buildStreamRollout('backend-rollout-sse', profile, { ...o, kind: 'sse' }),
});
