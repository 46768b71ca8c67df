import { defineScenario } from './definition.ts';
import { streamOptions } from './stream-delete.ts';
import { buildStreamRollout, rolloutOptions } from './stream-rollout.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'backend-rollout-websocket',
  description:
    'Rollout restart of the backends (maxSurge 1, maxUnavailable 0) under long-lived WebSocket echo streams. Every old pod must close its WebSockets with 1001 (going away), every message echoed, and a stream it closed may be closed again by the next old pod it reconnects to: every reconnect must succeed and every stream end properly. No old pod may be SIGKILLed, and the rollout must finish within its bound.',
  features: ['websocket', 'backend', 'rollout'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...streamOptions, ...rolloutOptions },
  build: (profile, o) => buildStreamRollout('backend-rollout-websocket', profile, { ...o, kind: 'websocket' }),
});
