import { defineScenario } from './definition.ts';
import { buildStreamNodeDrain, nodeDrainBackendOptions, nodeDrainOptions } from './node-drain.ts';
import { streamLoadOptions } from './stream-delete.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'node-drain-websocket',
  description:
    'Slow-starting backends behind a Service under long-lived WebSocket echo streams, guarded by a PodDisruptionBudget (minAvailable); the node hosting the oldest backend is cordoned and drained through the Eviction API, evictions the budget refuses retried as kubectl drain does. Every evicted pod must close its WebSockets with 1001 (going away), every message echoed; the streams reconnect, and every reconnect must be served (by the pod the budget holds back, then by the replacements). No evicted pod may be SIGKILLed.',
  features: ['websocket', 'backend', 'node-drain'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...nodeDrainBackendOptions, ...streamLoadOptions, ...nodeDrainOptions },
  build: (profile, o) => buildStreamNodeDrain('node-drain-websocket', profile, { ...o, kind: 'websocket' }),
});
