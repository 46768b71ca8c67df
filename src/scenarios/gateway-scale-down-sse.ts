import { defineScenario } from './definition.ts';
import { buildGatewayStreams, gatewayStreamOptions } from './gateway-streams.ts';
import { checkScaleDown } from './gateway-http-topology.ts';

export default defineScenario({
  id: 'gateway-scale-down-sse',
  description:
    "Three gateway pods scaled to one under bounded Server-Sent Events streams from reference stream backends (each lasts half the time from the last node's deprogramming to the gateway's drain timeout, then the client closes it, and a new one replaces it): two pods drain at once. Each keeps every event stream it carries running to its end, never cuts one (a body cut short, a reset, a stall) nor ends one early, keeps accepting new streams until it is deprogrammed, and exits within its drain bounds, not by SIGKILL.",
  features: ['gateway', 'sse', 'scale'],
  seeds: ['005'],
  role: 'gateway',
  options: gatewayStreamOptions['scale-down'],
  checkOptions: checkScaleDown,
  build: (profile, o) => buildGatewayStreams('gateway-scale-down-sse', 'sse', profile, { disruption: 'scale-down', ...o }),
});
