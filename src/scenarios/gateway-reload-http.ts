import { gatewayReloadScenario } from './gateway-reload.ts';

const CADDY_RELOAD = "keepAliveClosedPolitely: the reload shuts the old configuration's servers down, which closes their idle keep-alive connections at once, unannounced";

const NGINX_RELOAD =
  'keepAliveClosedPolitely: the old workers close their idle keep-alive connections at once when the reload retires them, unannounced; keepalive_time cannot help, since a reload, unlike a delete, has no preStop to let it act first';

/**
 * Drain-correct gateways whose reload with keep-alive clients fails by what the system itself does.
 * Measured: each reload closed 16 to 30 idle client connections at once, none of them announced.
 */
export const RELOAD_KNOWN_FAILURES: Record<string, string> = {
  nginx: NGINX_RELOAD,
  // The same workers and the same reload: its pool is on the upstream side.
  'nginx-pooled': NGINX_RELOAD,
  caddy: CADDY_RELOAD,
  // Measured with Caddy 2.11.9 too: its reload closes them the same way.
  'caddy-built': CADDY_RELOAD,
};

export default gatewayReloadScenario({
  id: 'gateway-reload-http',
  description:
    "The gateway's configuration is reloaded under keep-alive load (hey-like clients, keep-alive connections thinking between requests, new connections) with long requests in flight across it. No request may fail, the long ones complete, no keep-alive connection is closed unannounced, and the processes the reload retired leave.",
  features: ['gateway', 'http', 'http-keepalive', 'reload'],
  keepAlive: true,
  knownFailures: RELOAD_KNOWN_FAILURES,
});
