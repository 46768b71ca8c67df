// The topology every backend scenario shares: one Deployment of backends supplied by the profile,
// behind one Service, reached by the harness through the Service's load balancer.

import type { Topology, Workload } from '../model/workload.ts';
import { ProfileCannotPlay, type BackendProtocol, type Profile } from '../profiles/profile.ts';
import { checkHarnessFiles } from '../profiles/limits.ts';
import { denseConnections, denseTraffic, denseTrafficDefaults, laggingNode, type DenseTrafficOptions, type Stops } from './dense-traffic.ts';
import type { LoadPhase } from '../model/scenario.ts';
import type { OptionSpecs } from './definition.ts';
import type { Toleration } from '../model/verdict.ts';
import { preStopOutlasting, preStopOutlastsDeprogramming, PROGRAMMING_SPREAD_MS } from '../profiles/gateway-drain.ts';

export const BACKEND = 'backend';
export const BACKEND_PORT = 8080;
/**
 * Why a backend scenario with a preStop passes the mutant that stops listening at SIGTERM: while the
 * preStop outlasts the Service's last node deprogramming the pod (with the margin a timer needs), no
 * new connection reaches it after SIGTERM. Shortened below that (`--set preStopSeconds=0`), new
 * connections may meet the closed listener, so the scenario expects nothing of the mutant.
 */
export const REFUSE_AFTER_SIGTERM_TOLERATED = {
  'mutant-refuse-after-sigterm': {
    why: 'a preStop sleep outlasts deprogramming, so no new connection reaches the pod after SIGTERM (backend-sigterm-keeps-accepting catches it)',
    holds: preStopOutlastsDeprogramming,
  },
} satisfies Record<string, Toleration>;

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
        programmingSpreadMs: PROGRAMMING_SPREAD_MS,
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

/**
 * Dense traffic to the backends beside a scenario's own load (dense-traffic.ts): keep-alive connections with
 * a think time, fresh connections, and long requests in flight at the SIGTERM (after the preStop)
 * that end halfway to the grace period less 2 s, the reference backend's idle exit (1 s) and a
 * second of margin, so that a correct backend still exits on its own on a busy machine.
 */
export function backendTraffic(o: DenseTrafficOptions & { preStopSeconds: number; graceSeconds: number; programmingDelayMs: number }, stops: Stops, ownConnections: number): LoadPhase[] {
  checkHarnessFiles(ownConnections + denseConnections(o, stops), 'connections (connections, keepAliveConnections, freshClients, longRequests)');
  const minDrainMs = o.preStopSeconds * 1000;
  return [
    ...denseTraffic(BACKEND, o, { minDrainMs, drainTimeoutMs: Math.max(minDrainMs, (o.graceSeconds - BACKEND_EXIT_MARGIN_SECONDS) * 1000) }, stops),
    laggingNode(BACKEND, BACKEND, o.programmingDelayMs + PROGRAMMING_SPREAD_MS),
  ];
}
const BACKEND_EXIT_MARGIN_SECONDS = 2;
const DEFAULT_PROGRAMMING_DELAY_MS = 200;

/** The options of the backend scenarios that stop backends under load: their pods, their Service, the load, the chaos. */
export const backendOptions = {
  replicas: { default: 3, doc: 'backend replicas' },
  preStopSeconds: {
    // The backends drain correctly: their preStop outlasts the last node's deprogramming (2 s).
    default: preStopOutlasting({ programmingDelayMs: DEFAULT_PROGRAMMING_DELAY_MS, programmingSpreadMs: PROGRAMMING_SPREAD_MS }),
    nightly: 15,
    doc: 'preStop sleep of the backend pods (the default outlasts the programming delay and each node\'s sync)',
  },
  graceSeconds: { default: 6, nightly: 60, doc: 'terminationGracePeriodSeconds' },
  programmingDelayMs: { default: DEFAULT_PROGRAMMING_DELAY_MS, nightly: 5000, doc: 'delay before the Service load balancer applies an endpoint change (each node up to 1 s later)' },
  connections: { default: 12, nightly: 100, doc: 'concurrent keep-alive connections of the load' },
  requestMs: { default: 100, doc: 'server time of each request (/delay?ms=)' },
  deleteAtMs: { default: 1000, nightly: 10_000, doc: 'when the pod is deleted, after load starts' },
  restartAtMs: { default: 1000, nightly: 10_000, doc: 'when the rollout restart is issued, after load starts' },
  rolloutMaxMs: { default: 20_000, nightly: 300_000, doc: 'bound on the rollout, from restart to the last old pod gone' },
  settleMs: { default: 500, nightly: 5000, doc: 'load kept running after the last pod is gone' },
} satisfies OptionSpecs;

/** The options of backendTraffic: the dense traffic of the gateway scenarios (dense-traffic.ts). */
export const backendTrafficOptions = {
  keepAliveConnections: {
    default: denseTrafficDefaults.keepAliveConnections,
    doc: 'keep-alive connections beside the load, each thinking thinkMs between requests: a close between two requests races the next one',
  },
  thinkMs: { default: denseTrafficDefaults.thinkMs, doc: 'think time of a keep-alive connection between a response and its next request, on a timer' },
  freshClients: { default: denseTrafficDefaults.freshClients, doc: 'clients opening a new connection per request (at ratePerClient)' },
  longRequests: { default: denseTrafficDefaults.longRequests, doc: 'requests in flight at SIGTERM (in a rollout, as many for each old pod, sent as its replacement turns ready), lasting halfway from the preStop to the grace period less 2 s' },
  ratePerClient: { default: 10, doc: 'requests per second of each fresh client' },
} satisfies OptionSpecs;
