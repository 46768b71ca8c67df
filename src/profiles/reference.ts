// The reference apps (fixtures/*.mjs) in their correct drain mode, and the mutants: the same
// programs deliberately broken in the ways real servers break. Every assertion of the harness is
// proven against these: it must pass on `reference` and fail on the mutant that breaks its rule.
// They are written with the public defineProfile, as a team would define its own Node backend
// (docs/own-gateway.md): one program per role and protocol, chosen by a function of the pod.

import { packageRoot } from '../paths.ts';
import { defineProfile, type PodContext, type ReadinessDefinition } from './define.ts';
import type { Profile } from './profile.ts';
import { referenceGateway, referenceGatewayDrainSettings } from './reference-gateway.ts';

export const REFERENCE_BACKEND = 'fixtures/reference-backend.mjs';
export const REFERENCE_STREAM_ECHO = 'fixtures/reference-stream-echo.mjs';
export const REFERENCE_STREAM_APP = 'fixtures/reference-stream-app.mjs';
export const REFERENCE_GRPC = 'fixtures/reference-grpc.mjs';
export const REFERENCE_UDP_RELAY = 'fixtures/reference-udp-relay.mjs';
/** HTTP port of the reference UDP relay's /healthz (ready once its first endpoint list succeeded). */
export const RELAY_HEALTH_PORT = 8086;

type DrainMode = 'graceful' | 'exit-on-sigterm' | 'refuse-after-sigterm' | 'hang-until-killed';

interface App {
  command: string[];
  env: Record<string, string>;
  readiness: ReadinessDefinition;
}

/** The protocols the reference backend and its mutants serve. */
const BACKEND_PROTOCOLS = ['http', 'tcp-stream', 'websocket', 'sse', 'grpc'] as const;

/** The reference backend (HTTP), its TCP echo for long-lived streams, its WebSocket and SSE app, or its gRPC server, in one drain mode. */
function backendApp(pod: PodContext, mode: DrainMode): App {
  switch (pod.protocol) {
    case 'tcp-stream':
      // A TCP connect that sends nothing: the echo does not count it as a stream.
      return { command: ['node', REFERENCE_STREAM_ECHO], env: { DRAIN_MODE: mode }, readiness: { tcpSocket: {} } };
    case 'websocket':
    case 'sse':
      return { command: ['node', REFERENCE_STREAM_APP], env: { DRAIN_MODE: mode }, readiness: { httpGet: { path: '/healthz' } } };
    case 'grpc':
      // A TCP connect: a probe opens no call, so it never holds the drain.
      return { command: ['node', REFERENCE_GRPC], env: { DRAIN_MODE: mode }, readiness: { tcpSocket: {} } };
    default:
      return { command: ['node', REFERENCE_BACKEND], env: { DRAIN_MODE: mode }, readiness: { httpGet: { path: '/healthz' } } };
  }
}

/**
 * The reference UDP relay (STUNner's peer filtering, seed 000), discovering the backend Service's
 * pods from EndpointSlices (correct: keeps terminating serving pods) or legacy Endpoints (drops them).
 */
function udpRelayApp(pod: PodContext, discovery: 'endpointslices' | 'endpoints'): App {
  return {
    command: ['node', REFERENCE_UDP_RELAY],
    env: { HEALTH_PORT: String(RELAY_HEALTH_PORT), BACKEND_SERVICE: pod.backendService ?? '', DISCOVERY: discovery },
    readiness: { httpGet: { path: '/healthz', port: RELAY_HEALTH_PORT } },
  };
}

/** The reference profile's program for the pod: backend, UDP relay, or HTTP/h2c/gRPC gateway. */
function referenceApp(pod: PodContext): App {
  if (pod.role === 'backend') return backendApp(pod, 'graceful');
  if (pod.protocol === 'udp') return udpRelayApp(pod, 'endpointslices');
  return { command: referenceGateway.command, env: referenceGateway.env(pod, 'graceful'), readiness: referenceGateway.readiness(pod) };
}

/** The drain fields that only the HTTP/h2c/gRPC gateway pod has; the backend's drain is the scenario's preStop and the app's own code. */
const httpGateway = (pod: PodContext) => pod.role === 'gateway' && pod.protocol !== 'udp';

export const referenceProfile = defineProfile({
  name: 'reference',
  kind: 'reference',
  role: ['backend', 'gateway'],
  protocols: { backend: [...BACKEND_PROTOCOLS], gateway: ['udp', 'http', 'h2c', 'grpc'] },
  description: 'Correct drain: keeps accepting after SIGTERM, closes keep-alive connections politely, exits once idle.',
  directory: packageRoot,
  command: (pod) => referenceApp(pod).command,
  env: (pod) => referenceApp(pod).env,
  readiness: (pod) => referenceApp(pod).readiness,
  preStop: (pod) => (httpGateway(pod) ? referenceGateway.preStop(pod) : undefined),
  terminationGracePeriodSeconds: (pod) => (httpGateway(pod) ? referenceGateway.terminationGracePeriodSeconds(pod) : undefined),
  drain: (pod) => (httpGateway(pod) ? referenceGateway.drain(pod) : undefined),
  // Those of its gateway pod.
  drainSettings: referenceGatewayDrainSettings,
});

/** A backend mutant: the reference backend in a broken drain mode. */
const backendMutant = (name: string, mode: DrainMode, description: string): Profile =>
  defineProfile({
    name,
    kind: 'mutant',
    role: 'backend',
    protocols: [...BACKEND_PROTOCOLS],
    description,
    directory: packageRoot,
    command: (pod) => backendApp(pod, mode).command,
    env: (pod) => backendApp(pod, mode).env,
    readiness: (pod) => backendApp(pod, mode).readiness,
  });

export const mutantProfiles: Profile[] = [
  backendMutant('mutant-exit-on-sigterm', 'exit-on-sigterm', 'Dies at SIGTERM (no handler): in-flight requests and open connections are cut.'),
  backendMutant(
    'mutant-refuse-after-sigterm',
    'refuse-after-sigterm',
    'Stops listening at SIGTERM (the old Linkerd behaviour): peers that have not seen the endpoint removal are refused.',
  ),
  backendMutant('mutant-hang-until-killed', 'hang-until-killed', 'Ignores SIGTERM and never exits: runs out the grace period and is SIGKILLed mid-request.'),
  defineProfile({
    name: 'mutant-sse-no-resume',
    kind: 'mutant',
    role: 'backend',
    // It only breaks event streams.
    protocols: ['sse'],
    description:
      'Ends its event streams cleanly when it drains, with a retry hint, but ignores Last-Event-ID: a client that resumes on another pod is sent every event again from the first.',
    directory: packageRoot,
    command: ['node', REFERENCE_STREAM_APP],
    env: { DRAIN_MODE: 'graceful', SSE_RESUME: 'ignore' },
    readiness: { httpGet: { path: '/healthz' } },
  }),
  defineProfile({
    name: 'mutant-endpoints-api',
    kind: 'mutant',
    role: 'gateway',
    protocols: ['udp'],
    description:
      'A UDP relay that discovers backends from the legacy Endpoints API, which drops a terminating pod at once: its flows break while it still serves (STUNner #138).',
    directory: packageRoot,
    command: ['node', REFERENCE_UDP_RELAY],
    env: (pod) => udpRelayApp(pod, 'endpoints').env,
    readiness: { httpGet: { path: '/healthz', port: RELAY_HEALTH_PORT } },
  }),
];

export const mutantGatewayNoGoaway: Profile = defineProfile({
  name: 'mutant-gateway-no-goaway',
  kind: 'mutant',
  role: 'gateway',
  // It only breaks HTTP/2 gateways.
  protocols: ['h2c', 'grpc'],
  description:
    'Reference gateway that closes its HTTP/2 connections at SIGTERM without GOAWAY: pooled clients learn of it by their streams failing.',
  directory: packageRoot,
  command: referenceGateway.command,
  env: (pod) => referenceGateway.env(pod, 'no-goaway'),
  readiness: referenceGateway.readiness,
  preStop: referenceGateway.preStop,
  terminationGracePeriodSeconds: referenceGateway.terminationGracePeriodSeconds,
  drain: referenceGateway.drain,
});
