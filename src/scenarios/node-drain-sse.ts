import { defineScenario } from './definition.ts';
import { buildStreamNodeDrain, nodeDrainBackendOptions, nodeDrainOptions } from './node-drain.ts';
import { sseLoadOptions } from './stream-delete.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'node-drain-sse',
  description:
    'Slow-starting backends behind a Service under Server-Sent Events streams (events numbered by id at a fixed rate), guarded by a PodDisruptionBudget (minAvailable); the node hosting the oldest backend is cordoned and drained through the Eviction API, evictions the budget refuses retried as kubectl drain does. Every evicted pod must end its event streams cleanly (with a retry hint); the client reconnects with Last-Event-ID, and every reconnect must be served (by the pod the budget holds back, then by the replacements) and continue with the next event, none lost, none repeated, no body cut short, no stall. No evicted pod may be SIGKILLed.',
  features: ['sse', 'backend', 'node-drain'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...nodeDrainBackendOptions, ...sseLoadOptions, ...nodeDrainOptions },
  build: (profile, o) => buildStreamNodeDrain('node-drain-sse', profile, { ...o, kind: 'sse' }),
});
