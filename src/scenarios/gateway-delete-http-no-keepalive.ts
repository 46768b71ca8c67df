import { gatewayDeleteScenario } from './gateway-delete.ts';

export default gatewayDeleteScenario({
  id: 'gateway-delete-http-no-keepalive',
  description:
    'gateway-delete-http with a new connection per request: every request crosses the load balancer, so a gateway that closes its listener before it is deprogrammed has its clients refused.',
  features: ['gateway', 'http', 'http-no-keepalive'],
  seeds: ['004', '001'],
  keepAlive: false,
  programmingDelayMs: 200,
  clients: 10,
  nightly: { programmingDelayMs: 1000 },
});
