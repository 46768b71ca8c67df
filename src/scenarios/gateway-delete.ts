// The shape shared by the gateway-delete scenarios: a gateway pod is deleted under hey-like load
// (the Envoy Gateway test in seed 004: `hey -c 100 -q 10`, fewer clients by default so that a
// 2-core machine holds the rate; the nightly options carry the full shape). No request may fail,
// and the pod must drain within the bounds of Envoy Gateway's shutdown manager, never by SIGKILL.

import { defineScenario, type Feature, type ScenarioDefinition, type Seed } from './definition.ts';
import { drainExpectations, GATEWAY, gatewayLoad, gatewayOptionDocs, gatewayTopology } from './gateway-http-topology.ts';

export interface GatewayDeleteShape {
  id: string;
  description: string;
  features: Feature[];
  seeds: Seed[];
  keepAlive: boolean;
  programmingDelayMs: number;
  clients: number;
  nightly: { programmingDelayMs: number };
}

export function gatewayDeleteScenario(shape: GatewayDeleteShape): ScenarioDefinition {
  return defineScenario({
    id: shape.id,
    description: shape.description,
    features: shape.features,
    seeds: shape.seeds,
    role: 'gateway',
    defaults: {
      gateways: 2,
      backends: 2,
      programmingDelayMs: shape.programmingDelayMs,
      graceSeconds: 5,
      clients: shape.clients,
      ratePerClient: 10,
      deleteAtMs: 1000,
      settleMs: 500,
      idleExitMs: 1500,
    },
    nightly: { gateways: 3, backends: 3, clients: 100, deleteAtMs: 10_000, settleMs: 5000, graceSeconds: 30, ...shape.nightly },
    optionDocs: { ...gatewayOptionDocs, deleteAtMs: 'when the gateway pod is deleted, after load starts' },
    build: (profile, o) => {
      const setup = gatewayTopology(profile, o);
      return {
        id: shape.id,
        profile: profile.name,
        topology: setup.topology,
        loads: [{ id: 'http', startMs: 0, spec: gatewayLoad({ ...o, keepAlive: shape.keepAlive }) }],
        steps: [{ id: 'delete', when: { atMs: o.deleteAtMs }, action: { kind: 'delete-pod', workload: GATEWAY, pick: 'oldest' } }],
        end: { podGone: { step: 'delete' }, settleMs: o.settleMs },
        maxDurationMs: o.deleteAtMs + setup.graceSeconds * 1000 + o.settleMs + 15_000,
        expectations: [{ assert: 'noFailedRequests' }, ...drainExpectations({ step: 'delete' }, setup, o.idleExitMs)],
      };
    },
  });
}
