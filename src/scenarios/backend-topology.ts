// The topology every backend scenario shares: one Deployment of backends supplied by the profile,
// behind one Service, reached by the harness through the Service's load balancer.

import type { Topology, Workload } from '../model/workload.ts';
import { ProfileCannotPlay, type BackendProtocol, type Profile } from '../profiles/profile.ts';
import { checkHarnessFiles } from '../profiles/limits.ts';
import { denseConnections, denseTraffic, denseTrafficDefaults, type DenseTrafficOptions } from './dense-traffic.ts';
import type { LoadPhase } from '../model/scenario.ts';

export const BACKEND = 'backend';
export const BACKEND_PORT = 8080;

export interface BackendTopologyOptions {
  replicas: number;
  /** 0 means no preStop hook. */
  preStopSeconds: number;
  graceSeconds: number;
  programmingDelayMs: number;
  maxSurge?: number;
  maxUnavailable?: number;
  /** What the backends serve (BackendRequest.protocol); HTTP when omitted. */
  protocol?: BackendProtocol;
  /** The Deployment's and the Service's name (`backend` when omitted): a second set beside the first. */
  name?: string;
}

export function backendTopology(profile: Profile, o: BackendTopologyOptions): Topology {
  if (!profile.backend) throw new ProfileCannotPlay(`profile ${profile.name} provides no backend`);
  const plan = profile.backend({ port: BACKEND_PORT, ...(o.protocol ? { protocol: o.protocol } : {}) });
  const portName = o.protocol === 'tcp-stream' ? 'stream' : o.protocol === 'grpc' ? 'grpc' : 'http';
  const preStop = plan.preStop ?? (o.preStopSeconds > 0 ? { sleep: { seconds: o.preStopSeconds } } : undefined);
  const name = o.name ?? BACKEND;
  const workload: Workload = {
    name,
    replicas: o.replicas,
    command: plan.command,
    env: plan.env,
    ports: [{ name: portName, containerPort: BACKEND_PORT, protocol: 'TCP' }],
    readinessProbe: plan.readinessProbe,
    ...(preStop ? { preStop } : {}),
    terminationGracePeriodSeconds: o.graceSeconds,
    strategy: { maxSurge: o.maxSurge ?? 1, maxUnavailable: o.maxUnavailable ?? 0 },
    labels: { 'zerodrop.dev/profile': profile.name },
    ...(plan.image ? { image: plan.image } : {}),
    ...(plan.attribution ? { attribution: { role: 'backend' as const, header: plan.attribution === 'connection' ? undefined : plan.attribution.header } } : {}),
    ...(plan.defined ? { defined: plan.defined } : {}),
  };
  return {
    workloads: [workload],
    services: [
      {
        name,
        selector: name,
        // Unprivileged: the Service uses the container port too, not 80.
        ports: [{ name: portName, port: BACKEND_PORT, targetPort: BACKEND_PORT, protocol: 'TCP' }],
        programmingDelayMs: o.programmingDelayMs,
      },
    ],
  };
}

/**
 * Keep-alive load where every connection nearly always has a request in flight: a pod that drops
 * in-flight work at SIGTERM or SIGKILL cannot get lucky and miss it.
 */
export function inFlightLoad(o: { connections: number; requestMs: number }) {
  checkHarnessFiles(o.connections, 'connections');
  return {
    kind: 'http' as const,
    service: BACKEND,
    path: `/delay?ms=${o.requestMs}`,
    keepAlive: true,
    mode: 'closed' as const,
    connections: o.connections,
    timeoutMs: o.requestMs + 5_000,
  };
}

/** The dense traffic of the backend scenarios: that of the gateway scenarios (dense-traffic.ts). */
export const backendTrafficDefaults: DenseTrafficOptions = { ...denseTrafficDefaults, ratePerClient: 10 };

/**
 * Dense traffic to the backends beside a scenario's own load (dense-traffic.ts): keep-alive connections with
 * a think time, fresh connections, and long requests in flight at the SIGTERM (after the preStop)
 * that end halfway to the grace period less 2 s, the reference backend's idle exit (1 s) and a
 * second of margin, so that a correct backend still exits on its own on a busy machine.
 */
export function backendTraffic(o: DenseTrafficOptions & { preStopSeconds: number; graceSeconds: number }, stopAtMs: number, ownConnections: number): LoadPhase[] {
  checkHarnessFiles(ownConnections + denseConnections(o), 'connections (connections, keepAliveConnections, freshClients, longRequests)');
  const minDrainMs = o.preStopSeconds * 1000;
  return denseTraffic(BACKEND, o, { minDrainMs, drainTimeoutMs: Math.max(minDrainMs, (o.graceSeconds - BACKEND_EXIT_MARGIN_SECONDS) * 1000) }, stopAtMs);
}
const BACKEND_EXIT_MARGIN_SECONDS = 2;

/** What the options shared by the backend scenarios mean, for `zerodrop list`. */
export const backendOptionDocs = {
  replicas: 'backend replicas',
  preStopSeconds: 'preStop sleep of the backend pods',
  graceSeconds: 'terminationGracePeriodSeconds',
  programmingDelayMs: 'delay before the Service load balancer applies an endpoint change',
  connections: 'concurrent keep-alive connections of the load',
  requestMs: 'server time of each request (/delay?ms=)',
  settleMs: 'load kept running after the last pod is gone',
} as const;

/** What the options of backendTraffic mean, for `zerodrop list`. */
export const backendTrafficOptionDocs = {
  keepAliveConnections: 'keep-alive connections beside the load, each thinking thinkMs between requests: a close between two requests races the next one',
  thinkMs: 'think time of a keep-alive connection between a response and its next request, on a timer',
  freshClients: 'clients opening a new connection per request (at ratePerClient)',
  ratePerClient: 'requests per second of each fresh client',
  longRequests: 'requests in flight at SIGTERM, lasting halfway from the preStop to the grace period less 2 s',
} as const;

export function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, from[k]])) as Pick<T, K>;
}
