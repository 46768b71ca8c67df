// The shape of the reload scenarios: the gateway's configuration is reloaded while load flows
// through it, the drain every gateway does daily. No pod is deleted and the load balancer never
// changes: whatever fails, the gateway's own reload dropped. nginx starts new workers and retires
// the old ones gracefully (https://nginx.org/en/docs/control.html), HAProxy's master starts a new
// worker that takes over the listeners (https://www.haproxy.com/blog/truly-seamless-reloads-with-haproxy-no-more-hacks),
// Caddy swaps its configuration in the same process (https://caddyserver.com/docs/api): each
// through the profile's own `reload`, as a user would define it for theirs.

import type { Expectation, LoadPhase } from '../model/scenario.ts';
import { ProfileCannotPlay } from '../profiles/profile.ts';
import { defineScenario, pick, withoutNightly, type Feature, type OptionSpecs, type ScenarioDefinition } from './definition.ts';
import { trafficExpectations } from './dense-traffic.ts';
import { GATEWAY, gatewayOptions, gatewayTopology, gatewayTraffic, type GatewaySetup, type GatewayTrafficOptions } from './gateway-http-topology.ts';
import type { Profile } from '../profiles/profile.ts';

export interface GatewayReloadShape {
  id: string;
  description: string;
  features: Feature[];
  keepAlive: boolean;
  knownFailures?: Record<string, string>;
}

/** Long requests start this long before the reload, so that the old process is serving them when it retires. */
const LONG_LEAD_MS = 500;

/** The gateway topology, refused for a profile that cannot reload (its pods would only be restarted). */
export function reloadableGateway(profile: Profile, o: Parameters<typeof gatewayTopology>[1]): GatewaySetup {
  const setup = gatewayTopology(profile, o);
  if (!setup.plan.reload) throw new ProfileCannotPlay(`profile ${profile.name} defines no configuration reload (defineProfile's \`reload\`)`);
  return setup;
}

/** Requests started before `atMs` and lasting `longRequestMs`: in flight on the old configuration's process when it is replaced. */
function longRequestsAcross(atMs: number, o: { longRequests: number; longRequestMs: number }): LoadPhase[] {
  const start = Math.max(0, atMs - LONG_LEAD_MS);
  return Array.from({ length: o.longRequests }, (_, i) => ({
    id: `long-${i + 1}`,
    startMs: start,
    spec: { kind: 'single', service: GATEWAY, path: `/delay?ms=${o.longRequestMs}`, timeoutMs: o.longRequestMs + 5_000 },
  }));
}

export interface ReloadTrafficOptions extends GatewayTrafficOptions {
  longRequests: number;
  longRequestMs: number;
  retireWithinMs: number;
  settleMs: number;
}

/**
 * The load of a reload at `atMs` (the gateway traffic, long requests across the reload), when the
 * run ends (the long requests done and settled, the retired processes given their time), and what
 * must hold: no failure, the long requests complete, the reload took.
 */
export function reloadTraffic(setup: GatewaySetup, o: ReloadTrafficOptions, atMs: number, keepAlive: boolean): { loads: LoadPhase[]; endMs: number; expectations: Expectation[] } {
  const loads = [...gatewayTraffic({ ...o, longRequests: 0, keepAlive }, setup, { atMs }), ...longRequestsAcross(atMs, o)];
  return {
    loads,
    endMs: atMs + Math.max(o.longRequestMs + o.settleMs, o.retireWithinMs),
    expectations: [
      ...trafficExpectations(loads, o),
      ...loads.filter((l) => l.id.startsWith('long-')).map((l) => ({ assert: 'completesInFlight', load: l.id }) as const),
      { assert: 'reloadSucceeded', retireWithinMs: o.retireWithinMs },
    ],
  };
}

/** The options of reloadTraffic beyond gatewayOptions, as the reload and the route swap declare them. */
export const reloadOptions = {
  keepAliveConnections: { ...gatewayOptions.keepAliveConnections, default: 20 },
  longRequestMs: { default: 1500, nightly: 10_000, doc: 'how long each long request lasts' },
  retireWithinMs: { default: 2500, nightly: 15_000, doc: 'how soon after the reload every process it retired must be gone' },
  settleMs: { default: 1000, nightly: 5000, doc: 'load kept running after the long requests have ended' },
} satisfies OptionSpecs;

export function gatewayReloadScenario(shape: GatewayReloadShape): ScenarioDefinition {
  return defineScenario({
    id: shape.id,
    description: shape.description,
    features: shape.features,
    seeds: [],
    role: 'gateway',
    ...(shape.knownFailures ? { knownFailures: shape.knownFailures } : {}),
    options: {
      // One replica: every request crosses the pod being reloaded.
      gateways: { default: 1, doc: gatewayOptions.gateways.doc },
      backends: gatewayOptions.backends,
      ...withoutNightly(pick(gatewayOptions, ['programmingDelayMs', 'graceSeconds'])),
      ...pick(gatewayOptions, ['clients', 'ratePerClient']),
      keepAliveConnections: shape.keepAlive ? reloadOptions.keepAliveConnections : { ...reloadOptions.keepAliveConnections, default: 0, nightly: 0 },
      thinkMs: gatewayOptions.thinkMs,
      freshClients: shape.keepAlive ? gatewayOptions.freshClients : { ...gatewayOptions.freshClients, default: 0 },
      longRequests: { default: 2, doc: 'requests in flight across the reload, started 0.5 s before it' },
      longRequestMs: reloadOptions.longRequestMs,
      reloadAtMs: { default: 1000, nightly: 10_000, doc: 'when the gateway pod is reloaded, after load starts' },
      ...pick(reloadOptions, ['retireWithinMs', 'settleMs']),
    },
    build: (profile, o) => {
      const setup = reloadableGateway(profile, o);
      const { loads, endMs, expectations } = reloadTraffic(setup, o, o.reloadAtMs, shape.keepAlive);
      return {
        id: shape.id,
        profile: profile.name,
        topology: setup.topology,
        loads,
        steps: [{ id: 'reload', when: { atMs: o.reloadAtMs }, action: { kind: 'reload-pod', workload: GATEWAY, pick: 'oldest' } }],
        end: { afterMs: endMs },
        maxDurationMs: endMs + 15_000,
        expectations,
      };
    },
  });
}
