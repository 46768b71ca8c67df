import { gatewayDeleteScenario } from './gateway-delete.ts';

export default gatewayDeleteScenario({
  id: 'gateway-slow-lb',
  description:
    'A gateway pod behind a load balancer that deprograms it only 5 s after the delete (an AWS NLB, seed 000), new connection per request: new connections must be accepted throughout that window, no request may fail, and the drain bounds hold.',
  features: ['gateway', 'http', 'http-no-keepalive', 'slow-lb'],
  seeds: ['000', '001'],
  keepAlive: false,
  programmingDelayMs: 5000,
  clients: 10,
  nightly: { programmingDelayMs: 10_000 },
});
