// A route moved under load (kubernetes-sigs/gateway-api#2303, #4342): two healthy backend sets, and
// the gateway's route moves from the first to the second while keep-alive and new-connection load
// flows, long requests in flight across the move. On a cluster with a GatewayClass the move is what
// a user or a GitOps tool does: the HTTPRoute's backendRefs written to name the second Service, and
// the implementation's controller reprograms its dataplane. Locally it is what such a controller
// does for a process gateway: the configuration rendered again, the route's backend now the second
// Service, and every gateway pod reloaded at once. No request may fail, and the route must really
// have moved (routeMoved): every request sent once the change has landed is answered by the second set.
// `routeRecreate=1` moves it the way a pipeline that replaces objects does (delete the route, then
// create the new one): in between the gateway has no route, and answers for itself.

import { referenceProfile } from '../profiles/reference.ts';
import { backendTopology } from './backend-topology.ts';
import { defineScenario, pick, withoutNightly } from './definition.ts';
import { BACKEND_PRESTOP_SECONDS, BACKEND_PROGRAMMING_DELAY_MS, GATEWAY, gatewayOptions, gatewayTopology } from './gateway-http-topology.ts';
import { reloadableGateway, reloadOptions, reloadTraffic } from './gateway-reload.ts';
import { isGatewayClassProfile } from './gateway-class-profile.ts';
import { RELOAD_KNOWN_FAILURES } from './gateway-reload-http.ts';

/** The second backend set, where the route moves to; the first is the gateway topology's `backend`. */
export const ROUTE_TARGET = 'backend-b';

export default defineScenario({
  id: 'gateway-route-swap-http',
  description:
    "Two healthy backend sets; under keep-alive load with long requests in flight, the gateway's route moves from the first to the second (on a cluster with a GatewayClass, its HTTPRoute's backendRefs patched; locally, its configuration rendered again and every gateway pod reloaded). No request may fail, the long ones complete, and every request sent once the change has landed is answered by the second set.",
  features: ['gateway', 'http', 'http-keepalive', 'route-change'],
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
    routeRecreate: { default: 0, doc: '1: the route is deleted and then created again with the second set (a pipeline replacing objects), not patched; needs a GatewayClass' },
  },
  checkOptions: (o) => (o.movedWithinMs > o.longRequestMs + o.settleMs ? 'movedWithinMs must leave time to see requests after it: at most longRequestMs + settleMs' : undefined),
  build: (profile, o) => {
    // A class's controller moves the route from the HTTPRoute; only a process gateway needs a reload of its own.
    const byClass = isGatewayClassProfile(profile);
    const setup = byClass ? gatewayTopology(profile, o) : reloadableGateway(profile, o);
    const target = backendTopology(referenceProfile, { name: ROUTE_TARGET, replicas: o.backends, preStopSeconds: BACKEND_PRESTOP_SECONDS, graceSeconds: 5, programmingDelayMs: BACKEND_PROGRAMMING_DELAY_MS });
    const { loads, endMs, expectations } = reloadTraffic(setup, o, o.swapAtMs, true);
    const targetPort = target.services[0]?.ports[0]?.port ?? 8080;
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
          action: { kind: 'move-route', workload: GATEWAY, from: 'backend', to: { service: ROUTE_TARGET, port: targetPort }, ...(o.routeRecreate ? { recreate: true } : {}) },
        },
      ],
      end: { afterMs: endMs },
      maxDurationMs: endMs + 15_000,
      expectations: [
        // Nothing of a class's dataplane is reloaded: the controller reprograms it from the route.
        ...expectations.filter((e) => !(byClass && e.assert === 'reloadSucceeded')),
        { assert: 'routeMoved', step: 'swap', from: 'backend', to: ROUTE_TARGET, withinMs: o.movedWithinMs },
      ],
    };
  },
});
