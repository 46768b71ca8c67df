import { defineScenario } from './definition.ts';
import { checkScaleDown } from './gateway-http-topology.ts';
import { buildGatewayGrpc, gatewayGrpcOptions, grpcGatewayKnownFailures } from './gateway-streams.ts';

export default defineScenario({
  id: 'gateway-scale-down-grpc',
  description:
    "Three gateway pods scaled to one under gRPC over cleartext HTTP/2 (grpc-js channels, retries off) to reference gRPC backends: unary calls on every channel, and bounded server-streaming calls of sequence-numbered messages (each lasts half the time from the last node's deprogramming to the gateway's drain timeout; a new one replaces each that ends): two pods drain at once. Every unary call must succeed; every stream must run to its last message, none cut nor ended early, no message lost or duplicated; each pod scaled in must send GOAWAY and later calls be served by the one left, keep accepting until deprogrammed and exit within its drain bounds, not by SIGKILL.",
  features: ['gateway', 'grpc', 'http2', 'scale'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: grpcGatewayKnownFailures,
  options: gatewayGrpcOptions['scale-down'],
  checkOptions: checkScaleDown,
  build: (profile, o) => buildGatewayGrpc('gateway-scale-down-grpc', profile, { disruption: 'scale-down', ...o }),
});
