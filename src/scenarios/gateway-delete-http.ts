import { gatewayDeleteScenario } from './gateway-delete.ts';

export default gatewayDeleteScenario({
  id: 'gateway-delete-http',
  description:
    'Two gateway pods behind a Service (200 ms programming delay) under hey-like keep-alive load (clients x 10 requests/s); one gateway pod is deleted. No request may fail; the pod exits no earlier than its minimum drain, no later than its drain timeout, promptly once its connections reach zero, and not by SIGKILL.',
  features: ['gateway', 'http', 'http-keepalive'],
  seeds: ['004'],
  keepAlive: true,
  programmingDelayMs: 200,
  clients: 10,
  overlongRequests: 2,
  nightly: { programmingDelayMs: 1000 },
});
