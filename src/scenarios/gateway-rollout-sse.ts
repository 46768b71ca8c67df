import { defineScenario } from './definition.ts';
import { buildGatewayStreams, gatewayStreamOptions } from './gateway-streams.ts';

export default defineScenario({
  id: 'gateway-rollout-sse',
  description:
    "Rollout restart of two gateway pods (maxSurge 1, maxUnavailable 0) under bounded Server-Sent Events streams from reference stream backends (each lasts half the time from the last node's deprogramming to the gateway's drain timeout, then the client closes it, and a new one replaces it, all through the rollout). Every replaced gateway pod keeps every event stream it carries running to its end, never cuts one (a body cut short, a reset, a stall) nor ends one early, keeps accepting new streams until it is deprogrammed, and exits within its drain bounds, not by SIGKILL; the rollout finishes within its bound.",
  features: ['gateway', 'sse', 'rollout'],
  seeds: ['005'],
  role: 'gateway',
  options: gatewayStreamOptions.rollout,
  build: (profile, o) => buildGatewayStreams('gateway-rollout-sse', 'sse', profile, { disruption: 'rollout', ...o }),
});
