import { defineScenario } from './definition.ts';
import { buildGatewayStreams, caddyClosesWebSockets, gatewayStreamOptions } from './gateway-streams.ts';
import { checkScaleDown } from './gateway-http-topology.ts';

export default defineScenario({
  id: 'gateway-scale-down-websocket',
  description:
    "Three gateway pods scaled to one under bounded WebSocket echo streams to reference stream backends (each lasts half the time from the last node's deprogramming to the gateway's drain timeout, then closes itself with 1000, and a new one replaces it): two pods drain at once. Each keeps every stream it carries running to its end, never cuts one (1006, a reset, a stall) nor closes one early, even politely with 1001, keeps accepting new streams until it is deprogrammed, and exits within its drain bounds, not by SIGKILL.",
  features: ['gateway', 'websocket', 'scale'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: { caddy: caddyClosesWebSockets },
  options: gatewayStreamOptions['scale-down'],
  checkOptions: checkScaleDown,
  build: (profile, o) => buildGatewayStreams('gateway-scale-down-websocket', 'websocket', profile, { disruption: 'scale-down', ...o }),
});
