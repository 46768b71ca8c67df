// The topology of the HTTP gateway scenarios: clients -> gateway Service (with its programming
// delay, standing for kube-proxy or a cloud load balancer) -> gateway pods supplied by the profile
// -> backend Service -> reference backend pods. Gateway pods name themselves in every response
// (x-zerodrop-gateway) and pass the backend's x-zerodrop-pod through, so each request is
// attributed to both. The backends are never disturbed here: whatever fails, the gateway dropped.

import type { Expectation, LoadPhase, PodRef } from '../model/scenario.ts';
import type { HttpLoadSpec, Http2LoadSpec } from '../model/load.ts';
import type { Topology } from '../model/workload.ts';
import type { GatewayPlan, Profile } from '../profiles/profile.ts';
import { ProfileCannotPlay } from '../profiles/profile.ts';
import { checkHarnessFiles } from '../profiles/limits.ts';
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

/** Every client connection a scenario's traffic may hold at once: one pod may have to hold them all. */
function peakConnections(o: GatewayTopologyOptions & Partial<GatewayTrafficOptions> & { sessions?: number }): number {
  return (o.clients ?? 0) + (o.keepAliveConnections ?? 0) + (o.freshClients ?? 0) + (o.longRequests ?? 0) + (o.overlongRequests ?? 0) + (o.sessions ?? 0);
}

export interface GatewaySetup {
  topology: Topology;
  plan: GatewayPlan;
  /** The drain bounds the assertions hold the gateway to, in ms from its delete. */
  minDrainMs: number;
  drainTimeoutMs: number;
  graceSeconds: number;
}

export function gatewayTopology(profile: Profile, o: GatewayTopologyOptions & Partial<GatewayTrafficOptions> & { sessions?: number }): GatewaySetup {
  if (!profile.gateway) throw new ProfileCannotPlay(`profile ${profile.name} provides no gateway`);
  const peak = peakConnections(o);
  checkHarnessFiles(peak, 'client connections (clients, keepAliveConnections, freshClients, longRequests, overlongRequests, sessions)');
  const backends = backendTopology(referenceProfile, {
    replicas: o.backends,
    preStopSeconds: 1,
    graceSeconds: 5,
    programmingDelayMs: BACKEND_PROGRAMMING_DELAY_MS,
  });
  const backendPort = backends.services[0]?.ports[0]?.port ?? 8080;
  const plan = profile.gateway({
    protocol: o.protocol ?? 'http',
    port: GATEWAY_PORT,
    backendService: 'backend',
    backendPort,
    programmingDelayMs: o.programmingDelayMs,
    peak,
  });
  const graceSeconds = plan.terminationGracePeriodSeconds ?? o.graceSeconds;
  const gateway = gatewayWorkload(profile, plan, {
    name: GATEWAY,
    replicas: o.gateways,
    ports: [{ name: 'http', containerPort: GATEWAY_PORT, protocol: 'TCP' }],
    graceSeconds,
    // h2c too: HTTPRoute routes HTTP/2 as HTTP/1.1 (GRPCRoute is for gRPC); whether a class's HTTP
    // listener takes h2c with prior knowledge is for a run on a real cluster to show.
    route: { kind: 'HTTPRoute', backend: { service: 'backend', port: backendPort } },
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

/** The options of the traffic every HTTP/1.1 gateway scenario carries (gatewayTraffic). */
export interface GatewayTrafficOptions {
  clients: number;
  ratePerClient: number;
  keepAliveConnections: number;
  thinkMs: number;
  freshClients: number;
  longRequests: number;
  /** Requests outlasting the drain timeout (gateway-delete-http only): not judged; the pod must still leave by its drain timeout. */
  overlongRequests?: number;
}

export const gatewayTrafficDefaults: Omit<GatewayTrafficOptions, 'clients' | 'ratePerClient' | 'overlongRequests'> = {
  keepAliveConnections: 60,
  thinkMs: 200,
  freshClients: 4,
  longRequests: 8,
};

/** Nightly: the seed's `hey -c 100`, as keep-alive connections beside the clients. */
export const gatewayTrafficNightly: Partial<GatewayTrafficOptions> = { keepAliveConnections: 100 };

/**
 * A long request ends halfway between the profile's minimum drain (its stop signal) and its drain
 * timeout: in flight at the stop signal and well into the drain, so that a grace period below the
 * drain timeout or a stop that cuts what is in flight fails it, yet clear of the drain timeout by
 * seconds, so that a machine too busy to answer on time does not read as a drain failure (ending 2 s
 * before the timeout, one run of a correct nginx under a load average of 8 on 2 cores was cut).
 */
const LONG_REQUEST_SHARE_OF_DRAIN = 0.5;
/** Long requests start this long before the stop, so that they are in flight on every pod then. */
const LONG_LEAD_MS = 500;

/**
 * The traffic a real gateway carries, at the moment one of its pods is stopped:
 * - `http`: the hey-like clients (keep-alive or not, by the scenario), mostly idle between requests;
 * - `keepalive`: many keep-alive connections, each thinking `thinkMs` on a timer between a response
 *   and its next request. A gateway that closes one between two requests (an idle close at its stop
 *   signal) races the client's next request: a request already on the wire fails, and every such
 *   close is counted by keepAliveClosedPolitely whether a request crossed it or not, so the race is
 *   seen every run, not by luck (issue 19). Connections mostly idle are what a graceful stop closes
 *   at once; connections mid-request are closed politely after their response by every system here,
 *   so many connections with a think time show the race more surely than a few busy ones. A polite
 *   drain needs one request on each connection while it drains (a response saying Connection:
 *   close), so each must send at least every thinkMs + 100 ms, or the run is inconclusive;
 * - `fresh`: a new connection per request alongside, crossing the load balancer all the time;
 * - `long`: requests started just before the stop, lasting halfway into the drain the profile promises:
 *   in flight at the stop signal, they must complete;
 * - `overlong` (when asked for): requests outlasting the grace period, cut at the drain timeout by
 *   design and not judged; the pod must still leave by its drain timeout, not by SIGKILL.
 */
export function gatewayTraffic(o: GatewayTrafficOptions & { keepAlive: boolean }, setup: GatewaySetup, stopAtMs: number): LoadPhase[] {
  const loads: LoadPhase[] = [{ id: 'http', startMs: 0, spec: gatewayLoad(o) }];
  if (o.keepAliveConnections > 0) {
    loads.push({
      id: 'keepalive',
      startMs: 0,
      spec: {
        kind: 'http',
        service: GATEWAY,
        path: '/',
        thinkMs: o.thinkMs,
        keepAlive: true,
        mode: 'closed',
        connections: o.keepAliveConnections,
        heldRatePerWorker: 1000 / (o.thinkMs + TURNAROUND_MS),
        timeoutMs: 5_000,
      },
    });
  }
  if (o.freshClients > 0) loads.push({ id: 'fresh', startMs: 0, spec: gatewayLoad({ clients: o.freshClients, ratePerClient: o.ratePerClient, keepAlive: false }) });
  const longStart = Math.max(0, stopAtMs - LONG_LEAD_MS);
  const longMs = Math.round(stopAtMs - longStart + setup.minDrainMs + (setup.drainTimeoutMs - setup.minDrainMs) * LONG_REQUEST_SHARE_OF_DRAIN);
  for (let i = 0; i < o.longRequests && longMs > 0; i++) {
    loads.push({ id: `long-${i + 1}`, startMs: longStart, spec: { kind: 'single', service: GATEWAY, path: `/delay?ms=${longMs}`, timeoutMs: longMs + 5_000 } });
  }
  // Past the grace period too: a gateway that does not bound its drain is then SIGKILLed with it.
  const overlongMs = stopAtMs - longStart + Math.max(setup.drainTimeoutMs, setup.graceSeconds * 1000) + OVERLONG_PAST_GRACE_MS;
  for (let i = 0; i < (o.overlongRequests ?? 0); i++) {
    loads.push({ id: `${OVERLONG}${i + 1}`, startMs: longStart, spec: { kind: 'single', service: GATEWAY, path: `/delay?ms=${overlongMs}`, timeoutMs: overlongMs + 5_000 } });
  }
  return loads;
}

const OVERLONG = 'overlong-';
/** What a keep-alive connection may spend per request beyond its think time, and still count as held. */
const TURNAROUND_MS = 100;
/** How far an overlong request outlasts the grace period (and so the drain timeout below it). */
const OVERLONG_PAST_GRACE_MS = 1000;

/**
 * No request of `loads` may fail, except the overlong ones: those outlast the drain by design and
 * are cut at the drain timeout; what holds the pod to that timeout is drainTiming and notKilled.
 */
export function noFailedGatewayRequests(loads: readonly LoadPhase[], o: { ratePerClient: number; thinkMs?: number }): Expectation[] {
  const exceptLoads = loads.filter((l) => l.id.startsWith(OVERLONG)).map((l) => l.id);
  const keepAlive = loads.some((l) => l.spec.kind === 'http' && l.spec.keepAlive);
  return [
    exceptLoads.length > 0 ? { assert: 'noFailedRequests', exceptLoads } : { assert: 'noFailedRequests' },
    // Every keep-alive connection sends at least every 1/ratePerClient s or thinkMs: idle for twice
    // the longer (and at least a second), it may have met a keep-alive timeout, which is no drain.
    ...(keepAlive
      ? [{ assert: 'keepAliveClosedPolitely', idleTimeoutMs: Math.max(KEEPALIVE_IDLE_TIMEOUT_MS, 2000 / o.ratePerClient, 2 * (o.thinkMs ?? 0)) } as const]
      : []),
  ];
}

/** Idle this long at least, a keep-alive connection may be closed without notice (a keep-alive timeout). */
const KEEPALIVE_IDLE_TIMEOUT_MS = 1000;

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
  keepAliveConnections: 'keep-alive connections beside the clients, each thinking thinkMs between requests: a close between two requests races the next one',
  thinkMs: 'think time of a keep-alive connection between a response and its next request, on a timer',
  freshClients: 'clients opening a new connection per request beside the keep-alive ones (at ratePerClient)',
  longRequests: 'requests in flight at the stop signal, lasting halfway from the minimum drain to the drain timeout the profile promises',
  overlongRequests: 'requests in flight at the stop signal that outlast the grace period by 1 s: cut at the drain timeout (not judged), the pod must still leave by its drain timeout',
  settleMs: 'load kept running after the gateway pod is gone',
  idleExitMs: 'how soon a gateway must exit once it has no connection left (after its minimum drain)',
} as const;
