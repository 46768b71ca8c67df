import { defineScenario } from './definition.ts';
import { buildStreamDelete, streamDeleteOptions } from './stream-delete.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'backend-delete-websocket',
  description:
    'Long-lived WebSocket echo streams (sequence-numbered messages at a fixed rate) run through the Service while one of the backends is deleted (preStop sleep, grace period). Each stream on that backend must stay open until the backend closes it with 1001 (going away), every message it was sent echoed; no 1006 (a connection cut without a close frame), no other close code, no stall. Streams it closed reconnect, as new streams, to the other backend, and every reconnect must succeed. The backend must exit on its own, not at SIGKILL.',
  features: ['websocket', 'backend'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: streamDeleteOptions,
  build: (profile, o) => buildStreamDelete('backend-delete-websocket', profile, { ...o, kind: 'websocket' }),
});
