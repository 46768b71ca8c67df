// seed 005 (kubernetes-sigs/gateway-api#5014) asks what draining means for gRPC streams when the
// dataplane terminates. gRPC through two gateway pods, h2c with prior knowledge on both sides, to
// reference gRPC backends that are never disturbed: whatever breaks, the gateway broke. A draining
// gateway says GOAWAY to its clients, carries every call it holds to its end, keeps accepting until
// it is deprogrammed, and leaves within its drain bounds.
//
// The server streams are bounded as in the gateway WebSocket and SSE scenarios (gateway-streams.ts):
// each lasts half the time from the last node's deprogramming to the drain timeout, so every
// stream the pod was given can end on its own before a correct drain must cut it.

import { defineScenario } from './definition.ts';
import { buildGatewayGrpc, gatewayGrpcOptions, grpcGatewayKnownFailures } from './gateway-streams.ts';

export default defineScenario({
  id: 'gateway-delete-grpc',
  description:
    "gRPC over cleartext HTTP/2 (grpc-js channels, retries off) through two gateway pods behind a Service to reference gRPC backends: unary calls on every channel, and bounded server-streaming calls of sequence-numbered messages (each lasts half the time from the last node's deprogramming to the gateway's drain timeout; a new one replaces each that ends); one gateway pod is deleted. Every unary call must succeed; every stream must run to its last message, none cut (UNAVAILABLE, INTERNAL, refused) nor ended early, no message lost or duplicated; the gateway pod must send GOAWAY and later calls be served by the other; it must keep accepting until deprogrammed and exit within its drain bounds, not by SIGKILL.",
  features: ['gateway', 'grpc', 'http2'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: grpcGatewayKnownFailures,
  options: gatewayGrpcOptions.delete,
  build: (profile, o) => buildGatewayGrpc('gateway-delete-grpc', profile, { disruption: 'delete', ...o }),
});
