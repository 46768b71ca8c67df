import { defineScenario } from './definition.ts';
import { buildGatewayStreams, caddyClosesWebSockets, gatewayStreamOptions } from './gateway-streams.ts';

export default defineScenario({
  id: 'gateway-rollout-websocket',
  description:
    "Rollout restart of two gateway pods (maxSurge 1, maxUnavailable 0) under bounded WebSocket echo streams to reference stream backends (each lasts half the time from the last node's deprogramming to the gateway's drain timeout, then closes itself with 1000, and a new one replaces it, all through the rollout). Every replaced gateway pod keeps every stream it carries running to its end, never cuts one (1006, a reset, a stall) nor closes one early, even politely with 1001, keeps accepting new streams until it is deprogrammed, and exits within its drain bounds, not by SIGKILL; the rollout finishes within its bound.",
  features: ['gateway', 'websocket', 'rollout'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: { caddy: caddyClosesWebSockets },
  options: gatewayStreamOptions.rollout,
  build: (profile, o) => buildGatewayStreams('gateway-rollout-websocket', 'websocket', profile, { disruption: 'rollout', ...o }),
});
