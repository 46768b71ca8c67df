// The topology of the HTTP gateway scenarios: clients -> gateway Service (with its programming
// delay, standing for kube-proxy or a cloud load balancer) -> gateway pods supplied by the profile
// -> backend Service -> reference backend pods. Gateway pods name themselves in every response
// (x-zerodrop-gateway) and pass the backend's x-zerodrop-pod through, so each request is
// attributed to both. The backends are never disturbed here: whatever fails, the gateway dropped.

import type { Expectation, PodRef } from '../model/scenario.ts';
import type { HttpLoadSpec, Http2LoadSpec } from '../model/load.ts';
import type { Topology } from '../model/workload.ts';
import type { GatewayPlan, Profile } from '../profiles/profile.ts';
import { ProfileCannotPlay } from '../profiles/profile.ts';
import { referenceProfile } from '../profiles/reference.ts';
import { backendTopology } from './backend-topology.ts';
import { gatewayWorkload } from './gateway-workload.ts';

export const GATEWAY = 'gateway';
export const GATEWAY_PORT = 8000;
/** The backend Service's own programming delay: short, since its pods are never deleted here. */
const BACKEND_PROGRAMMING_DELAY_MS = 100;

export interface GatewayTopologyOptions {
  gateways: number;
  backends: number;
  /** The gateway Service's programming delay. */
  programmingDelayMs: number;
  /** terminationGracePeriodSeconds of a gateway whose profile does not set its own. */
  graceSeconds: number;
  protocol?: 'http' | 'h2c';
}

export interface GatewaySetup {
  topology: Topology;
  plan: GatewayPlan;
  /** The drain bounds the assertions hold the gateway to, in ms from its delete. */
  minDrainMs: number;
  drainTimeoutMs: number;
  graceSeconds: number;
}

export function gatewayTopology(profile: Profile, o: GatewayTopologyOptions): GatewaySetup {
  if (!profile.gateway) throw new ProfileCannotPlay(`profile ${profile.name} provides no gateway`);
  const backends = backendTopology(referenceProfile, {
    replicas: o.backends,
    preStopSeconds: 1,
    graceSeconds: 5,
    programmingDelayMs: BACKEND_PROGRAMMING_DELAY_MS,
  });
  const plan = profile.gateway({
    protocol: o.protocol ?? 'http',
    port: GATEWAY_PORT,
    backendService: 'backend',
    backendPort: backends.services[0]?.ports[0]?.port ?? 8080,
    programmingDelayMs: o.programmingDelayMs,
  });
  const graceSeconds = plan.terminationGracePeriodSeconds ?? o.graceSeconds;
  const gateway = gatewayWorkload(profile, plan, {
    name: GATEWAY,
    replicas: o.gateways,
    ports: [{ name: 'http', containerPort: GATEWAY_PORT, protocol: 'TCP' }],
    graceSeconds,
  });
  return {
    topology: {
      workloads: [...backends.workloads, gateway],
      services: [
        ...backends.services,
        {
          name: GATEWAY,
          selector: GATEWAY,
          ports: [{ name: 'http', port: GATEWAY_PORT, targetPort: GATEWAY_PORT, protocol: 'TCP' }],
          programmingDelayMs: o.programmingDelayMs,
        },
      ],
    },
    plan,
    // A profile without drain parameters (the naive ones) is held to what any gateway owes its
    // clients: stay until the load balancer has deprogrammed it, and leave before SIGKILL.
    minDrainMs: (plan.drain?.minDrainSeconds ?? 0) * 1000 || o.programmingDelayMs,
    drainTimeoutMs: (plan.drain?.drainTimeoutSeconds ?? graceSeconds) * 1000,
    graceSeconds,
  };
}

/** hey-like load through the gateway: `clients` connections, each at most `ratePerClient`/s. */
export function gatewayLoad(o: { clients: number; ratePerClient: number; keepAlive: boolean }): HttpLoadSpec {
  return {
    kind: 'http',
    service: GATEWAY,
    path: '/',
    keepAlive: o.keepAlive,
    mode: 'closed',
    connections: o.clients,
    ratePerWorker: o.ratePerClient,
    timeoutMs: 5_000,
  };
}

/**
 * Pooled h2c clients through the gateway, each stream held `requestMs` by the backend, so that a
 * connection always has streams in flight when the gateway drains.
 */
export function gatewayHttp2Load(o: { sessions: number; streamsPerSession: number; ratePerStream: number; requestMs: number }): Http2LoadSpec {
  const { sessions, streamsPerSession, ratePerStream } = o;
  return { kind: 'http2', service: GATEWAY, path: `/delay?ms=${o.requestMs}`, sessions, streamsPerSession, ratePerStream, timeoutMs: o.requestMs + 5_000 };
}

/** The drain timing of Envoy Gateway's shutdown manager, and never SIGKILL. */
export function drainExpectations(pod: PodRef, setup: GatewaySetup, idleExitMs: number): Expectation[] {
  return [
    { assert: 'drainTiming', pod, minDrainMs: setup.minDrainMs, drainTimeoutMs: setup.drainTimeoutMs, idleExitMs },
    { assert: 'notKilled', pod },
  ];
}

export const gatewayOptionDocs = {
  gateways: 'gateway replicas',
  backends: 'reference backend replicas behind the backend Service',
  programmingDelayMs: 'delay before the gateway Service load balancer applies an endpoint change',
  graceSeconds: 'terminationGracePeriodSeconds of a gateway whose profile sets none',
  clients: 'concurrent clients (hey -c)',
  ratePerClient: 'requests per second per client (hey -q)',
  settleMs: 'load kept running after the gateway pod is gone',
  idleExitMs: 'how soon a gateway must exit once it has no connection left (after its minimum drain)',
} as const;
