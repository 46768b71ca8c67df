// The gateway Deployment scaled from 3 to 1 under load (seed 000: a dataplane scaled in while its
// load balancer still sends it traffic): two pods drain at once, the last one takes all the load.

import { defineScenario } from './definition.ts';
import {
  drainExpectations,
  GATEWAY,
  gatewayOptionDocs,
  gatewayTopology,
  gatewayTraffic,
  gatewayTrafficNightly,
} from './gateway-http-topology.ts';
import { denseTrafficDefaults, trafficExpectations } from './dense-traffic.ts';

export default defineScenario({
  id: 'gateway-scale-down',
  description:
    'Three gateway pods scaled to one under hey-like keep-alive load: two drain at once. No request may fail, and both drain within their bounds, never by SIGKILL.',
  features: ['gateway', 'http', 'http-keepalive', 'scale'],
  seeds: ['000', '004'],
  role: 'gateway',
  defaults: {
    gateways: 3,
    replicasAfter: 1,
    backends: 2,
    programmingDelayMs: 200,
    graceSeconds: 5,
    clients: 10,
    ratePerClient: 10,
    scaleAtMs: 1000,
    settleMs: 500,
    idleExitMs: 1500,
    ...denseTrafficDefaults,
  },
  nightly: { backends: 3, clients: 100, programmingDelayMs: 1000, graceSeconds: 30, scaleAtMs: 10_000, settleMs: 5000, ...gatewayTrafficNightly },
  optionDocs: {
    ...gatewayOptionDocs,
    replicasAfter: 'gateway replicas after the scale down',
    scaleAtMs: 'when the gateway is scaled down, after load starts',
  },
  checkOptions: (o) => (o.replicasAfter < o.gateways ? undefined : `replicasAfter (${o.replicasAfter}) must be below gateways (${o.gateways}), or nothing is scaled down`),
  build: (profile, o) => {
    const setup = gatewayTopology(profile, o);
    const loads = gatewayTraffic({ ...o, keepAlive: true }, setup, o.scaleAtMs);
    return {
      id: 'gateway-scale-down',
      profile: profile.name,
      topology: setup.topology,
      loads,
      steps: [{ id: 'scale-down', when: { atMs: o.scaleAtMs }, action: { kind: 'scale', workload: GATEWAY, replicas: o.replicasAfter } }],
      end: { podGone: { step: 'scale-down' }, settleMs: o.settleMs },
      maxDurationMs: o.scaleAtMs + setup.graceSeconds * 1000 + o.settleMs + 15_000,
      expectations: [...trafficExpectations(loads, o), ...drainExpectations({ step: 'scale-down' }, setup, o.idleExitMs)],
    };
  },
});
