import { defineScenario } from './definition.ts';
import { buildGatewayStreams, gatewayStreamOptions } from './gateway-streams.ts';

export default defineScenario({
  id: 'gateway-delete-sse',
  description:
    "Server-Sent Events streams (events numbered by id at a fixed rate) through two gateway pods behind a Service to reference stream backends; each stream is bounded (it lasts half the time from the last node's deprogramming to the gateway's drain timeout, then the client closes it) and a new one replaces it, so streams are in flight across the delete of one gateway pod. A draining gateway keeps every event stream it carries running to its end, never cuts one (a body cut short, a reset, a stall) nor ends one early, keeps accepting new streams until it is deprogrammed (no refused connect), and exits within its drain bounds once its streams have ended, not by SIGKILL.",
  features: ['gateway', 'sse'],
  seeds: ['005'],
  role: 'gateway',
  options: gatewayStreamOptions.delete,
  build: (profile, o) => buildGatewayStreams('gateway-delete-sse', 'sse', profile, { disruption: 'delete', ...o }),
});
