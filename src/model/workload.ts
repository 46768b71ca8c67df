// A Workload is a Deployment as far as drain is concerned: how its pods start, become ready and are
// shut down. Field names follow the Kubernetes API (core/v1 Container, apps/v1 Deployment) so that the
// kube renderer maps them one to one and a reader who knows Kubernetes recognises them.

export type Protocol = 'TCP' | 'UDP';

export interface ContainerPort {
  name: string;
  containerPort: number;
  protocol: Protocol;
}

/** A readiness probe handler, the two kinds the harness needs (core/v1 Probe). */
export type ProbeHandler =
  | { tcpSocket: { port: number } }
  | { httpGet: { port: number; path: string } };

export interface Probe {
  handler: ProbeHandler;
  /**
   * Kubernetes takes whole seconds (minimum 1). The local provider also accepts fractions so that a
   * scenario costs seconds, not tens of seconds; the kube renderer rounds up to whole seconds.
   */
  periodSeconds: number;
  timeoutSeconds: number;
  successThreshold: number;
  failureThreshold: number;
  initialDelaySeconds: number;
}

/**
 * preStop hook (core/v1 LifecycleHandler). `sleep` is the kubelet's built-in sleep action (beta in
 * 1.30); `exec` runs a command inside the container.
 */
export type PreStop = { sleep: { seconds: number } } | { exec: { command: string[] } };

export interface RollingUpdate {
  maxSurge: number;
  maxUnavailable: number;
}

export interface Workload {
  name: string;
  replicas: number;
  /** argv of the container's main process (PID 1 in a container). */
  command: string[];
  env: Record<string, string>;
  ports: ContainerPort[];
  readinessProbe?: Probe;
  preStop?: PreStop;
  terminationGracePeriodSeconds: number;
  strategy: RollingUpdate;
  /** The signal that starts shutdown (the image's STOPSIGNAL); Kubernetes defaults to SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** Free-form labels carried to reports and manifests. */
  labels?: Record<string, string>;
}

export interface ServicePort {
  name: string;
  port: number;
  targetPort: number;
  protocol: Protocol;
}

export interface Service {
  name: string;
  /** Name of the Workload whose pods back this Service. */
  selector: string;
  ports: ServicePort[];
  /**
   * Time between an endpoint change and the load balancer applying it: kube-proxy's sync period,
   * or a cloud load balancer's deregistration delay (seconds on an AWS NLB).
   */
  programmingDelayMs: number;
  /**
   * UDP flow tracking (conntrack) of the Service's load balancer: an entry whose flow saw no reply
   * expires after `unrepliedMs` of silence, one that saw replies after `streamMs`. Defaults are the
   * Linux defaults nf_conntrack_udp_timeout (30 s) and nf_conntrack_udp_timeout_stream (120 s).
   */
  udpTimeouts?: { unrepliedMs: number; streamMs: number };
}

export interface Topology {
  workloads: Workload[];
  services: Service[];
}

/** Defaults that mirror the Kubernetes API's own defaults where it has them. */
export function defaultProbe(handler: ProbeHandler, overrides: Partial<Omit<Probe, 'handler'>> = {}): Probe {
  return {
    handler,
    periodSeconds: 0.25,
    timeoutSeconds: 1,
    successThreshold: 1,
    failureThreshold: 1,
    initialDelaySeconds: 0,
    ...overrides,
  };
}

export function probePort(probe: Probe): number {
  return 'tcpSocket' in probe.handler ? probe.handler.tcpSocket.port : probe.handler.httpGet.port;
}
