import { defineScenario } from './definition.ts';
import { buildGatewayStreamDelete, gatewayStreamDeleteOptions } from './gateway-stream-delete.ts';

export default defineScenario({
  id: 'gateway-delete-websocket',
  description:
    "WebSocket echo streams (sequence-numbered messages at a fixed rate) through two gateway pods behind a Service to reference stream backends; each stream is bounded (it lasts half the time from the last node's deprogramming to the gateway's drain timeout, then closes itself with 1000) and a new one replaces it, so streams are in flight across the delete of one gateway pod. A draining gateway keeps every stream it carries running to its end, never cuts one (1006, a reset, a stall) nor closes one early, even politely with 1001, keeps accepting new streams until it is deprogrammed (no refused connect), and exits within its drain bounds once its streams have ended, not by SIGKILL.",
  features: ['gateway', 'websocket'],
  seeds: ['005'],
  role: 'gateway',
  knownFailures: {
    caddy:
      "streamsIntact: Caddy 2.6 closes every proxied WebSocket with 1001 as soon as its stop signal unloads the configuration, whatever its grace_period; stream_close_delay, which delays that close, came with Caddy 2.7.0 (https://caddyserver.com/docs/caddyfile/directives/reverse_proxy#stream_close_delay), and Debian 12's caddy is 2.6.2. Measured with Caddy 2.11.9 (caddy-built): stream_close_delay alone does not carry them through a stop, since the process exits once its requests are done and the streams die with it (1006); loaded away by the preStop (a configuration without a server) they run on in the live process, and caddy-built passes",
  },
  options: gatewayStreamDeleteOptions,
  build: (profile, o) => buildGatewayStreamDelete('gateway-delete-websocket', 'websocket', profile, o),
});
