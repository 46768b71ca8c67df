import { defineScenario } from './definition.ts';
import { buildStreamNodeDrain, nodeDrainBackendOptions, nodeDrainOptions } from './node-drain.ts';
import { grpcLoadOptions } from './stream-delete.ts';
import { REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';

export default defineScenario({
  id: 'node-drain-grpc',
  description:
    'Slow-starting backends behind a Service under gRPC over cleartext HTTP/2 (grpc-js channels, retries off: unary calls and server-streaming calls of sequence-numbered messages), guarded by a PodDisruptionBudget (minAvailable); the node hosting the oldest backend is cordoned and drained through the Eviction API, evictions the budget refuses retried as kubectl drain does. Every unary call must succeed; every stream must run to its last message or be ended early with OK, at a message boundary, by an evicted pod, with no message lost or duplicated; every evicted pod must send GOAWAY and later calls be served by another pod. No evicted pod may be SIGKILLed.',
  features: ['grpc', 'http2', 'backend', 'node-drain'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...nodeDrainBackendOptions, ...grpcLoadOptions, ...nodeDrainOptions },
  build: (profile, o) => buildStreamNodeDrain('node-drain-grpc', profile, { ...o, kind: 'grpc' }),
});
