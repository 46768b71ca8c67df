import { defineScenario } from './definition.ts';
import { buildStreamDelete, streamDeleteOptions } from './stream-delete.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'backend-delete-tcp-stream',
  description:
    'Long-lived TCP echo streams (sequence-numbered messages at a fixed rate) run through the Service while one of the backends is deleted (preStop sleep, grace period). Each stream on that backend must stay intact until the backend closes it gracefully: the backend announces its drain, echoes every message sent before its close, and closes; no reset, no stall, no unannounced close. Streams it closed reconnect to the other backend. The backend must exit on its own, not at SIGKILL.',
  features: ['tcp-stream', 'backend'],
  seeds: ['000', '003'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: streamDeleteOptions,
  build: (profile, o) => buildStreamDelete('backend-delete-tcp-stream', profile, { ...o, kind: 'tcp-stream' }),
});
