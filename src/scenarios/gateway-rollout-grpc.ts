import { defineScenario } from './definition.ts';
import { buildGatewayGrpc, gatewayGrpcOptions, grpcGatewayKnownFailures } from './gateway-streams.ts';

export default defineScenario({
  id: 'gateway-rollout-grpc',
  description:
    "Rollout restart of two gateway pods (maxSurge 1, maxUnavailable 0) under gRPC over cleartext HTTP/2 (grpc-js channels, retries off) to reference gRPC backends: unary calls on every channel, and bounded server-streaming calls of sequence-numbered messages (each lasts half the time from the last node's deprogramming to the gateway's drain timeout; a new one replaces each that ends, all through the rollout). Every unary call must succeed; every stream must run to its last message, none cut nor ended early, no message lost or duplicated; every replaced gateway pod must send GOAWAY and later calls be served by another, keep accepting until deprogrammed and exit within its drain bounds, not by SIGKILL; the rollout finishes within its bound.",
  features: ['gateway', 'grpc', 'http2', 'rollout'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: grpcGatewayKnownFailures,
  options: gatewayGrpcOptions.rollout,
  build: (profile, o) => buildGatewayGrpc('gateway-rollout-grpc', profile, { disruption: 'rollout', ...o }),
});
