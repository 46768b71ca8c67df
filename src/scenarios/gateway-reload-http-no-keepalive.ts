import { gatewayReloadScenario } from './gateway-reload.ts';

export default gatewayReloadScenario({
  id: 'gateway-reload-http-no-keepalive',
  description:
    'gateway-reload-http with a new connection per request: every request needs the listener at the moment it is handed from the old configuration to the new, so a reload that closes it and binds again has clients refused or reset.',
  features: ['gateway', 'http', 'http-no-keepalive', 'reload'],
  keepAlive: false,
});
