// The reference backend (fixtures/reference-backend.mjs) in its correct drain mode, and the mutants:
// the same program deliberately broken in the ways real servers break. Every assertion of the harness
// is proven against these: it must pass on `reference` and fail on the mutant that breaks its rule.

import { defaultProbe } from '../model/workload.ts';
import { referenceGateway, referenceGatewayDrainSettings } from './reference-gateway.ts';
import { ProfileCannotPlay, type BackendRequest, type GatewayPlan, type GatewayRequest, type Profile } from './profile.ts';

export const REFERENCE_BACKEND = 'fixtures/reference-backend.mjs';
export const REFERENCE_STREAM_ECHO = 'fixtures/reference-stream-echo.mjs';
export const REFERENCE_UDP_RELAY = 'fixtures/reference-udp-relay.mjs';
/** HTTP port of the reference UDP relay's /healthz (ready once its first endpoint list succeeded). */
export const RELAY_HEALTH_PORT = 8086;

/**
 * The reference UDP relay (STUNner's peer filtering, seed 000), discovering the backend Service's
 * pods from EndpointSlices (correct: keeps terminating serving pods) or legacy Endpoints (drops them).
 */
function udpRelay(discovery: 'endpointslices' | 'endpoints') {
  return (request: GatewayRequest): GatewayPlan => ({
    command: ['node', REFERENCE_UDP_RELAY],
    env: {
      PORT: String(request.port),
      HEALTH_PORT: String(RELAY_HEALTH_PORT),
      BACKEND_SERVICE: request.backendService,
      DISCOVERY: discovery,
    },
    readinessProbe: defaultProbe({ httpGet: { port: RELAY_HEALTH_PORT, path: '/healthz' } }),
  });
}

/** Gateways by protocol: each engineer's protocol is one entry. */
function gatewayByProtocol(profile: string, plans: Partial<Record<GatewayRequest['protocol'], (r: GatewayRequest) => GatewayPlan>>) {
  return (request: GatewayRequest): GatewayPlan => {
    const plan = plans[request.protocol];
    if (!plan) throw new ProfileCannotPlay(`profile ${profile} has no ${request.protocol} gateway`);
    return plan(request);
  };
}

type DrainMode = 'graceful' | 'exit-on-sigterm' | 'refuse-after-sigterm' | 'hang-until-killed';

function referenceBackend(mode: DrainMode) {
  return (request: BackendRequest) =>
    request.protocol === 'tcp-stream'
      ? {
          command: ['node', REFERENCE_STREAM_ECHO],
          env: { DRAIN_MODE: mode, PORT: String(request.port) },
          // A TCP connect that sends nothing: the echo does not count it as a stream.
          readinessProbe: defaultProbe({ tcpSocket: { port: request.port } }),
        }
      : {
          command: ['node', REFERENCE_BACKEND],
          env: { DRAIN_MODE: mode, PORT: String(request.port) },
          readinessProbe: defaultProbe({ httpGet: { port: request.port, path: '/healthz' } }),
        };
}

export const referenceProfile: Profile = {
  name: 'reference',
  kind: 'reference',
  description:
    'Correct drain: keeps accepting after SIGTERM, closes keep-alive connections politely, exits once idle.',
  requires: [],
  backend: referenceBackend('graceful'),
  gateway: gatewayByProtocol('reference', {
    udp: udpRelay('endpointslices'),
    http: referenceGateway('graceful'),
    h2c: referenceGateway('graceful'),
  }),
  // Those of its gateway pod; the backend's drain is the scenario's preStop and the app's own code.
  drainSettings: referenceGatewayDrainSettings,
};

export const mutantProfiles: Profile[] = [
  {
    name: 'mutant-exit-on-sigterm',
    kind: 'mutant',
    description: 'Dies at SIGTERM (no handler): in-flight requests and open connections are cut.',
    requires: [],
    backend: referenceBackend('exit-on-sigterm'),
  },
  {
    name: 'mutant-refuse-after-sigterm',
    kind: 'mutant',
    description:
      'Stops listening at SIGTERM (the old Linkerd behaviour): peers that have not seen the endpoint removal are refused.',
    requires: [],
    backend: referenceBackend('refuse-after-sigterm'),
  },
  {
    name: 'mutant-hang-until-killed',
    kind: 'mutant',
    description: 'Ignores SIGTERM and never exits: runs out the grace period and is SIGKILLed mid-request.',
    requires: [],
    backend: referenceBackend('hang-until-killed'),
  },
  {
    name: 'mutant-endpoints-api',
    kind: 'mutant',
    description:
      'A UDP relay that discovers backends from the legacy Endpoints API, which drops a terminating pod at once: its flows break while it still serves (STUNner #138).',
    requires: [],
    gateway: gatewayByProtocol('mutant-endpoints-api', { udp: udpRelay('endpoints') }),
  },
];
