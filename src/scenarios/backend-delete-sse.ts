import { defineScenario } from './definition.ts';
import { buildStreamDelete, sseLoadOptions, streamDeleteOptions } from './stream-delete.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'backend-delete-sse',
  description:
    'Server-Sent Events streams (events numbered by id at a fixed rate) run through the Service while one of the backends is deleted (preStop sleep, grace period). Each stream on that backend must run until the backend ends its body cleanly (with a retry hint); the client then reconnects with Last-Event-ID, a new stream that must succeed and continue with the next event: none lost, none repeated. No body cut short, no stall. The backend must exit on its own, not at SIGKILL.',
  features: ['sse', 'backend'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...streamDeleteOptions, ...sseLoadOptions },
  build: (profile, o) => buildStreamDelete('backend-delete-sse', profile, { ...o, kind: 'sse' }),
});
