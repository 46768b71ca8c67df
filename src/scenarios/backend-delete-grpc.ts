// seed 005 (kubernetes-sigs/gateway-api#5014) asks what draining means for long-lived gRPC streams
// while a backend terminates. The answer this scenario holds any system to: a unary call never fails; a server
// stream either runs to its end or is ended by the draining pod with OK between two messages; no
// message of a stream is lost or duplicated; the pod says GOAWAY so that new calls go elsewhere.

import { backendOptions, REFUSE_AFTER_SIGTERM_TOLERATED } from './backend-topology.ts';
import { defineScenario, pick } from './definition.ts';
import { buildStreamDelete, grpcOptions } from './stream-delete.ts';

export default defineScenario({
  id: 'backend-delete-grpc',
  description:
    'gRPC over cleartext HTTP/2 (grpc-js channels, retries off): unary calls on every channel and server-streaming calls of sequence-numbered messages run through the Service while one of the backends is deleted (preStop sleep, grace period). Every unary call must succeed; every stream must run to its last message or be ended early with OK, at a message boundary, by the draining pod, with no message lost or duplicated; the pod must send GOAWAY and later calls be served by another pod; it must exit on its own, not at SIGKILL.',
  features: ['grpc', 'http2', 'backend'],
  seeds: ['005'],
  role: 'backend',
  tolerates: REFUSE_AFTER_SIGTERM_TOLERATED,
  options: { ...grpcOptions, ...pick(backendOptions, ['deleteAtMs', 'settleMs']) },
  build: (profile, o) => buildStreamDelete('backend-delete-grpc', profile, { ...o, kind: 'grpc' }),
});
