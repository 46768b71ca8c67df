import { backendOptions, REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';
import { defineScenario } from './definition.ts';
import { grpcOptions } from './stream-delete.ts';
import { buildStreamRollout, rolloutOptions } from './stream-rollout.ts';

export default defineScenario({
  id: 'backend-rollout-grpc',
  description:
    'Rollout restart of the backends (maxSurge 1, maxUnavailable 0) under gRPC over cleartext HTTP/2 (grpc-js channels, retries off): unary calls on every channel and server-streaming calls of sequence-numbered messages. Every unary call must succeed through the whole rollout; every stream must run to its last message or be ended early with OK, at a message boundary, by a draining old pod, with no message lost or duplicated; every old pod must send GOAWAY and later calls be served by another pod. No old pod may be SIGKILLed, and the rollout must finish within its bound.',
  features: ['grpc', 'http2', 'backend', 'rollout'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: {
    ...grpcOptions,
    settleMs: {
      ...backendOptions.settleMs,
      default: 2000,
      doc: "load kept running after the last pod is gone: the unary rate is judged over the whole run (loadHeld), and a short one lets each channel's reconnect after GOAWAY, twice in a rollout, pull it below what it must hold",
    },
    ...rolloutOptions,
  },
  build: (profile, o) => buildStreamRollout('backend-rollout-grpc', profile, { ...o, kind: 'grpc' }),
});
