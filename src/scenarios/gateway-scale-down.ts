// The gateway Deployment scaled from 3 to 1 under load (seed 000: a dataplane scaled in while its
// load balancer still sends it traffic): two pods drain at once, the last one takes all the load.

import { defineScenario, pick } from './definition.ts';
import { checkScaleDown, drainExpectations, GATEWAY, gatewayOptions, gatewayTopology, gatewayTraffic } from './gateway-http-topology.ts';
import { trafficExpectations } from './dense-traffic.ts';

export default defineScenario({
  id: 'gateway-scale-down',
  description:
    'Three gateway pods scaled to one under hey-like keep-alive load: two drain at once. No request may fail, and both drain within their bounds, never by SIGKILL.',
  features: ['gateway', 'http', 'http-keepalive', 'scale'],
  seeds: ['000', '004'],
  role: 'gateway',
  options: {
    gateways: { default: 3, doc: gatewayOptions.gateways.doc },
    replicasAfter: { default: 1, doc: 'gateway replicas after the scale down' },
    ...pick(gatewayOptions, ['backends', 'programmingDelayMs', 'graceSeconds', 'clients', 'ratePerClient']),
    scaleAtMs: { default: 1000, nightly: 10_000, doc: 'when the gateway is scaled down, after load starts' },
    ...pick(gatewayOptions, ['settleMs', 'idleExitMs', 'keepAliveConnections', 'thinkMs', 'freshClients', 'longRequests']),
  },
  checkOptions: checkScaleDown,
  build: (profile, o) => {
    const setup = gatewayTopology(profile, o);
    const loads = gatewayTraffic({ ...o, keepAlive: true }, setup, { atMs: o.scaleAtMs });
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
