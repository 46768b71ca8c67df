// The shape shared by the gateway-delete scenarios: a gateway pod is deleted under hey-like load
// (the Envoy Gateway test in seed 004: `hey -c 100 -q 10`, fewer clients by default so that a
// 2-core machine holds the rate; the nightly options carry the full shape). No request may fail,
// and the pod must drain within the bounds of Envoy Gateway's shutdown manager, never by SIGKILL.

import { defineScenario, pick, type Feature, type ScenarioDefinition, type Seed } from './definition.ts';
import { drainExpectations, GATEWAY, gatewayOptions, gatewayTopology, gatewayTraffic } from './gateway-http-topology.ts';
import { trafficExpectations } from './dense-traffic.ts';

/** Overlong requests where the Service balancer picks at random: all 12 miss 1 of 2 pods 1 run in 4,096. */
const OVERLONG_ON_A_CLUSTER = 12;

export interface GatewayDeleteShape {
  id: string;
  description: string;
  features: Feature[];
  seeds: Seed[];
  keepAlive: boolean;
  programmingDelayMs: number;
  clients: number;
  /** Requests that outlast the drain timeout: the one scenario that holds a gateway to its own bound. */
  overlongRequests?: number;
  nightly: { programmingDelayMs: number };
}

export function gatewayDeleteScenario(shape: GatewayDeleteShape): ScenarioDefinition {
  return defineScenario({
    id: shape.id,
    description: shape.description,
    features: shape.features,
    seeds: shape.seeds,
    role: 'gateway',
    options: {
      ...pick(gatewayOptions, ['gateways', 'backends']),
      programmingDelayMs: { ...gatewayOptions.programmingDelayMs, default: shape.programmingDelayMs, nightly: shape.nightly.programmingDelayMs },
      graceSeconds: gatewayOptions.graceSeconds,
      clients: { ...gatewayOptions.clients, default: shape.clients },
      ...pick(gatewayOptions, ['ratePerClient', 'deleteAtMs', 'settleMs', 'idleExitMs']),
      // Without keep-alive every request crosses the balancer: no keep-alive connection to race, and the
      // main load is already all new connections.
      keepAliveConnections: shape.keepAlive ? gatewayOptions.keepAliveConnections : { default: 0, doc: gatewayOptions.keepAliveConnections.doc },
      thinkMs: gatewayOptions.thinkMs,
      freshClients: shape.keepAlive ? gatewayOptions.freshClients : { ...gatewayOptions.freshClients, default: 0 },
      longRequests: gatewayOptions.longRequests,
      overlongRequests: {
        ...gatewayOptions.overlongRequests,
        default: shape.overlongRequests ?? 0,
        // Each is a connection of its own: at random over 2 pods, 2 of them all missed the deleted pod
        // 1 run in 4 on a cluster, and a gateway with no drain timeout then passed (seen on netns).
        ...(shape.overlongRequests ? { cluster: OVERLONG_ON_A_CLUSTER } : {}),
      },
    },
    build: (profile, o) => {
      const setup = gatewayTopology(profile, o);
      const loads = gatewayTraffic({ ...o, keepAlive: shape.keepAlive }, setup, { atMs: o.deleteAtMs });
      return {
        id: shape.id,
        profile: profile.name,
        topology: setup.topology,
        loads,
        steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: GATEWAY, pick: 'oldest' } }],
        end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
        maxDurationMs: o.deleteAtMs + setup.graceSeconds * 1000 + o.settleMs + 15_000,
        expectations: [...trafficExpectations(loads, o), ...drainExpectations({ step: 'delete' }, setup, o.idleExitMs)],
      };
    },
  });
}
