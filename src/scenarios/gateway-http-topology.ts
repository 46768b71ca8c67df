// The topology of the HTTP gateway scenarios: clients -> gateway Service (with its programming
// delay, standing for kube-proxy or a cloud load balancer) -> gateway pods supplied by the profile
// -> backend Service -> reference backend pods. Gateway pods name themselves in every response
// (x-zerodrop-gateway) and pass the backend's x-zerodrop-pod through, so each request is
// attributed to both. The backends are never disturbed here: whatever fails, the gateway dropped.

import type { DrainEnd, Expectation, LoadPhase, PodRef } from '../model/scenario.ts';
import type { HttpLoadSpec, Http2LoadSpec } from '../model/load.ts';
import type { Topology } from '../model/workload.ts';
import type { BackendProtocol, GatewayPlan, Profile } from '../profiles/profile.ts';
import { ProfileCannotPlay } from '../profiles/profile.ts';
import { checkHarnessFiles } from '../profiles/limits.ts';
import { referenceProfile } from '../profiles/reference.ts';
import { backendTopology } from './backend-topology.ts';
import { preStopOutlasting, PROGRAMMING_SPREAD_MS } from '../profiles/gateway-drain.ts';
import { denseTraffic, denseTrafficDefaults, laggingNode, longRequestStart, OVERLONG, type DenseTrafficOptions, type Stops } from './dense-traffic.ts';
import type { OptionSpecs } from './definition.ts';
import { gatewayWorkload } from './gateway-workload.ts';

export const GATEWAY = 'gateway';
export const GATEWAY_PORT = 8000;
/** The backend Service's own programming delay: short, since its pods are never deleted here. */
export const BACKEND_PROGRAMMING_DELAY_MS = 100;
/** The backends' preStop: they drain correctly, outlasting the backend Service's last node. */
export const BACKEND_PRESTOP_SECONDS = preStopOutlasting({ programmingDelayMs: BACKEND_PROGRAMMING_DELAY_MS, programmingSpreadMs: PROGRAMMING_SPREAD_MS });

export interface GatewayTopologyOptions {
  gateways: number;
  backends: number;
  /** The gateway Service's programming delay. */
  programmingDelayMs: number;
  /** terminationGracePeriodSeconds of a gateway whose profile does not set its own. */
  graceSeconds: number;
  /** `grpc`: h2c with prior knowledge from the clients through to the backends. */
  protocol?: 'http' | 'h2c' | 'grpc';
  /** What the backends behind the gateway serve (HTTP by default; WebSocket and SSE streams for the stream scenarios). */
  backendProtocol?: BackendProtocol;
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
  /** The gateway Service's programming delay, and the spread of its nodes past it. */
  programmingDelayMs: number;
  programmingSpreadMs: number;
  drainTimeoutMs: number;
  /** How the profile says it ends its drain (drainTiming's idle bound applies to `when-idle` only). */
  exits: DrainEnd;
  graceSeconds: number;
}

export function gatewayTopology(profile: Profile, o: GatewayTopologyOptions & Partial<GatewayTrafficOptions> & { sessions?: number }): GatewaySetup {
  if (!profile.gateway) throw new ProfileCannotPlay(`profile ${profile.name} provides no gateway`);
  const peak = peakConnections(o);
  checkHarnessFiles(peak, 'client connections (clients, keepAliveConnections, freshClients, longRequests, overlongRequests, sessions)');
  const backends = backendTopology(referenceProfile, {
    replicas: o.backends,
    preStopSeconds: BACKEND_PRESTOP_SECONDS,
    graceSeconds: 5,
    programmingDelayMs: BACKEND_PROGRAMMING_DELAY_MS,
    ...(o.backendProtocol ? { protocol: o.backendProtocol } : {}),
  });
  const backendPort = backends.services[0]?.ports[0]?.port ?? 8080;
  const plan = profile.gateway({
    protocol: o.protocol ?? 'http',
    port: GATEWAY_PORT,
    backendService: 'backend',
    backendPort,
    programmingDelayMs: o.programmingDelayMs,
    programmingSpreadMs: PROGRAMMING_SPREAD_MS,
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
    route: { kind: o.protocol === 'grpc' ? 'GRPCRoute' : 'HTTPRoute', backend: { service: 'backend', port: backendPort } },
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
          programmingSpreadMs: PROGRAMMING_SPREAD_MS,
        },
      ],
    },
    plan,
    // A profile without drain parameters (the naive ones) is held to what any gateway owes its
    // clients: stay until the last node has deprogrammed it, and leave before SIGKILL.
    minDrainMs: (plan.drain?.minDrainSeconds ?? 0) * 1000 || o.programmingDelayMs + PROGRAMMING_SPREAD_MS,
    programmingDelayMs: o.programmingDelayMs,
    programmingSpreadMs: PROGRAMMING_SPREAD_MS,
    drainTimeoutMs: (plan.drain?.drainTimeoutSeconds ?? graceSeconds) * 1000,
    exits: plan.drain?.exits ?? 'when-idle',
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
export interface GatewayTrafficOptions extends DenseTrafficOptions {
  clients: number;
  /** Requests outlasting the drain timeout (gateway-delete-http only): not judged; the pod must still leave by its drain timeout. */
  overlongRequests?: number;
}

/**
 * The traffic a real gateway carries, at the moment one of its pods is stopped: the hey-like clients
 * (`http`: keep-alive or not, by the scenario, mostly idle between requests), the dense traffic of
 * denseTraffic (keep-alive connections with a think time, new connections, long requests), and,
 * when asked for, `overlong` requests outlasting the grace period, cut at the drain timeout by
 * design and not judged: the pod must still leave by its drain timeout, not by SIGKILL.
 */
export function gatewayTraffic(o: GatewayTrafficOptions & { keepAlive: boolean }, setup: GatewaySetup, stops: Stops): LoadPhase[] {
  const loads: LoadPhase[] = [
    { id: 'http', startMs: 0, spec: gatewayLoad(o) },
    ...denseTraffic(GATEWAY, o, setup, stops),
    laggingNode(GATEWAY, GATEWAY, setup.programmingDelayMs + setup.programmingSpreadMs),
  ];
  // Overlong requests belong to a stop at a known time (gateway-delete-http).
  if (!('atMs' in stops)) return loads;
  const longStart = longRequestStart(stops.atMs);
  // Past the grace period too: a gateway that does not bound its drain is then SIGKILLed with it.
  const overlongMs = stops.atMs - longStart + Math.max(setup.drainTimeoutMs, setup.graceSeconds * 1000) + OVERLONG_PAST_GRACE_MS;
  for (let i = 0; i < (o.overlongRequests ?? 0); i++) {
    loads.push({ id: `${OVERLONG}${i + 1}`, startMs: longStart, spec: { kind: 'single', service: GATEWAY, path: `/delay?ms=${overlongMs}`, timeoutMs: overlongMs + 5_000 } });
  }
  return loads;
}

/** How far an overlong request outlasts the grace period (and so the drain timeout below it). */
const OVERLONG_PAST_GRACE_MS = 1000;

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
    { assert: 'drainTiming', pod, minDrainMs: setup.minDrainMs, drainTimeoutMs: setup.drainTimeoutMs, idleExitMs, exits: setup.exits },
    { assert: 'preStopOutlastsDeprogramming', pod, programmingDelayMs: setup.programmingDelayMs, spreadMs: setup.programmingSpreadMs },
    { assert: 'notKilled', pod },
  ];
}

/** The scale-down scenarios' checkOptions: a scale to as many replicas or more stops no pod, and tests nothing. */
export function checkScaleDown(o: { gateways: number; replicasAfter: number }): string | undefined {
  return o.replicasAfter < o.gateways ? undefined : `replicasAfter (${o.replicasAfter}) must be below gateways (${o.gateways}), or nothing is scaled down`;
}

/** The options of the HTTP gateway scenarios: the pods, the gateway Service, the traffic (gatewayTraffic), the chaos. */
export const gatewayOptions = {
  gateways: { default: 2, nightly: 3, doc: 'gateway replicas' },
  backends: { default: 2, nightly: 3, doc: 'reference backend replicas behind the backend Service' },
  programmingDelayMs: { default: 200, nightly: 1000, doc: 'delay before the gateway Service load balancer applies an endpoint change' },
  graceSeconds: { default: 5, nightly: 30, doc: 'terminationGracePeriodSeconds of a gateway whose profile sets none' },
  clients: { default: 10, nightly: 100, doc: 'concurrent clients (hey -c)' },
  ratePerClient: { default: 10, doc: 'requests per second per client (hey -q)' },
  keepAliveConnections: {
    default: denseTrafficDefaults.keepAliveConnections,
    // The seed's `hey -c 100`, as keep-alive connections beside the clients.
    nightly: 100,
    doc: 'keep-alive connections beside the clients, each thinking thinkMs between requests: a close between two requests races the next one',
  },
  thinkMs: { default: denseTrafficDefaults.thinkMs, doc: 'think time of a keep-alive connection between a response and its next request, on a timer' },
  freshClients: { default: denseTrafficDefaults.freshClients, doc: 'clients opening a new connection per request beside the keep-alive ones (at ratePerClient)' },
  longRequests: {
    default: denseTrafficDefaults.longRequests,
    doc: 'requests in flight at the stop signal (in a rollout, as many for each old pod, sent as its replacement turns ready), lasting halfway from the minimum drain to the drain timeout the profile promises',
  },
  overlongRequests: {
    default: 0,
    doc: 'requests in flight at the stop signal that outlast the grace period by 1 s: cut at the drain timeout (not judged), the pod must still leave by its drain timeout',
  },
  deleteAtMs: { default: 1000, nightly: 10_000, doc: 'when the gateway pod is deleted, after load starts' },
  settleMs: { default: 500, nightly: 5000, doc: 'load kept running after the gateway pod is gone' },
  idleExitMs: { default: 1500, doc: 'how soon a gateway must exit once it has no connection left (after its minimum drain)' },
} satisfies OptionSpecs;
