// The topology every backend scenario shares: one Deployment of backends supplied by the profile,
// behind one Service, reached by the harness through the Service's load balancer.

import type { Topology, Workload } from '../model/workload.ts';
import { ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import { checkHarnessFiles } from '../profiles/limits.ts';

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
  protocol?: 'http' | 'tcp-stream';
}

export function backendTopology(profile: Profile, o: BackendTopologyOptions): Topology {
  if (!profile.backend) throw new ProfileCannotPlay(`profile ${profile.name} provides no backend`);
  const plan = profile.backend({ port: BACKEND_PORT, ...(o.protocol ? { protocol: o.protocol } : {}) });
  const portName = o.protocol === 'tcp-stream' ? 'stream' : 'http';
  const preStop = plan.preStop ?? (o.preStopSeconds > 0 ? { sleep: { seconds: o.preStopSeconds } } : undefined);
  const workload: Workload = {
    name: BACKEND,
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
        name: BACKEND,
        selector: BACKEND,
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

export function pick<T extends object, K extends keyof T>(from: T, keys: readonly K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, from[k]])) as Pick<T, K>;
}
