// A route moved under load (kubernetes-sigs/gateway-api#2303, #4342): two healthy backend sets, and
// the gateway's route moves from the first to the second while keep-alive and new-connection load
// flows, long requests in flight across the move. Locally the move is what a controller does with a
// changed HTTPRoute: it renders the gateway's configuration again, the route's backend now the second
// Service, and reloads every gateway pod at once. No request may fail, and the route must really
// have moved (routeMoved): every request sent once the change has landed is answered by the second set.

import { referenceProfile } from '../profiles/reference.ts';
import { backendTopology } from './backend-topology.ts';
import { defineScenario, pick, withoutNightly } from './definition.ts';
import { BACKEND_PROGRAMMING_DELAY_MS, GATEWAY, gatewayOptions } from './gateway-http-topology.ts';
import { reloadableGateway, reloadOptions, reloadTraffic } from './gateway-reload.ts';
import { RELOAD_KNOWN_FAILURES } from './gateway-reload-http.ts';

/** The second backend set, where the route moves to; the first is the gateway topology's `backend`. */
export const ROUTE_TARGET = 'backend-b';

export default defineScenario({
  id: 'gateway-route-swap-http',
  description:
    "Two healthy backend sets; under keep-alive load with long requests in flight, the gateway's route moves from the first to the second (its configuration rendered again and every gateway pod reloaded). No request may fail, the long ones complete, and every request sent once the change has landed is answered by the second set.",
  features: ['gateway', 'http', 'http-keepalive', 'reload'],
  seeds: [],
  role: 'gateway',
  // The same reload as gateway-reload-http: the same behaviours of the systems' reloads decide.
  knownFailures: RELOAD_KNOWN_FAILURES,
  options: {
    gateways: gatewayOptions.gateways,
    backends: { ...gatewayOptions.backends, doc: 'reference backend replicas in each of the two sets' },
    ...withoutNightly(pick(gatewayOptions, ['programmingDelayMs', 'graceSeconds'])),
    ...pick(gatewayOptions, ['clients', 'ratePerClient']),
    keepAliveConnections: reloadOptions.keepAliveConnections,
    ...pick(gatewayOptions, ['thinkMs', 'freshClients']),
    longRequests: { default: 2, doc: 'requests in flight across the move, started 0.5 s before it' },
    longRequestMs: reloadOptions.longRequestMs,
    swapAtMs: { default: 1000, nightly: 10_000, doc: 'when the route moves to the second backend set, after load starts' },
    movedWithinMs: { default: 1000, doc: 'how soon after the move every new request must be answered by the second set' },
    ...pick(reloadOptions, ['retireWithinMs', 'settleMs']),
  },
  checkOptions: (o) => (o.movedWithinMs > o.longRequestMs + o.settleMs ? 'movedWithinMs must leave time to see requests after it: at most longRequestMs + settleMs' : undefined),
  build: (profile, o) => {
    const setup = reloadableGateway(profile, o);
    const target = backendTopology(referenceProfile, { name: ROUTE_TARGET, replicas: o.backends, preStopSeconds: 1, graceSeconds: 5, programmingDelayMs: BACKEND_PROGRAMMING_DELAY_MS });
    const { loads, endMs, expectations } = reloadTraffic(setup, o, o.swapAtMs, true);
    const prefix = ROUTE_TARGET.toUpperCase().replace(/-/g, '_');
    return {
      id: 'gateway-route-swap-http',
      profile: profile.name,
      // The second set first: its Service exists when the gateway pods start, so they have its variables.
      topology: { workloads: [...target.workloads, ...setup.topology.workloads], services: [...target.services, ...setup.topology.services] },
      loads,
      steps: [
        {
          id: 'swap',
          when: { atMs: o.swapAtMs },
          action: { kind: 'reload-pod', workload: GATEWAY, pick: 'all', env: { BACKEND_SERVICE_HOST: `\${${prefix}_SERVICE_HOST}`, BACKEND_SERVICE_PORT: `\${${prefix}_SERVICE_PORT}` } },
        },
      ],
      end: { afterMs: endMs },
      maxDurationMs: endMs + 15_000,
      expectations: [
        ...expectations,
        { assert: 'routeMoved', step: 'swap', from: 'backend', to: ROUTE_TARGET, withinMs: o.movedWithinMs },
      ],
    };
  },
});
