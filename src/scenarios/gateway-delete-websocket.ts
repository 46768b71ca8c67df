import { defineScenario } from './definition.ts';
import { buildGatewayStreams, caddyClosesWebSockets, gatewayStreamOptions } from './gateway-streams.ts';

export default defineScenario({
  id: 'gateway-delete-websocket',
  description:
    "WebSocket echo streams (sequence-numbered messages at a fixed rate) through two gateway pods behind a Service to reference stream backends; each stream is bounded (it lasts half the time from the last node's deprogramming to the gateway's drain timeout, then closes itself with 1000) and a new one replaces it, so streams are in flight across the delete of one gateway pod. A draining gateway keeps every stream it carries running to its end, never cuts one (1006, a reset, a stall) nor closes one early, even politely with 1001, keeps accepting new streams until it is deprogrammed (no refused connect), and exits within its drain bounds once its streams have ended, not by SIGKILL.",
  features: ['gateway', 'websocket'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: { caddy: caddyClosesWebSockets },
  options: gatewayStreamOptions.delete,
  build: (profile, o) => buildGatewayStreams('gateway-delete-websocket', 'websocket', profile, { disruption: 'delete', ...o }),
});
