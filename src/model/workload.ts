// A Workload is a Deployment as far as drain is concerned: how its pods start, become ready and are
// shut down. Field names follow the Kubernetes API (core/v1 Container, apps/v1 Deployment) so that the
// kube renderer maps them one to one and a reader who knows Kubernetes recognises them.

export type Protocol = 'TCP' | 'UDP';

export interface ContainerPort {
  name: string;
  containerPort: number;
  protocol: Protocol;
}

/** A readiness probe handler (core/v1 Probe): a TCP connect, an HTTP GET, or a command run in the container. */
export type ProbeHandler =
  | { tcpSocket: { port: number } }
  | { httpGet: { port: number; path: string } }
  | { exec: { command: string[] } };

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

/**
 * How a running pod's system takes a new configuration without a restart: a signal to its main
 * process (nginx's SIGHUP, HAProxy's master SIGUSR2) or a command run in the pod (`caddy reload`).
 * `render`, when set, is run first in the pod: it renders the configuration templates again, with
 * the reload's variables, into the pod's directory.
 */
export type Reload = ({ signal: NodeJS.Signals } | { exec: { command: string[] } }) & { render?: string[] };

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
  /** How the pods reload their configuration in place (the `reload-pod` chaos action). */
  reload?: Reload;
  terminationGracePeriodSeconds: number;
  strategy: RollingUpdate;
  /** The signal that starts shutdown (the image's STOPSIGNAL); Kubernetes defaults to SIGTERM. */
  stopSignal?: NodeJS.Signals;
  /** Free-form labels carried to reports and manifests. */
  labels?: Record<string, string>;
  /**
   * The pods are not started from `command`: they are the dataplane of a system installed with its
   * Helm chart (src/profiles/helm-charts.ts, by profile name), labelled zerodrop.dev/workload=<name>
   * by the chart's values. Only cluster providers run such a workload.
   */
  installedBy?: ChartedDataplane;
  /** On clusters: the container image; the stock image of the command's program when absent. */
  image?: string;
  /**
   * How the pods name themselves in responses, from their profile's `attribution`: the response
   * header carrying the pod's name, or none (`header` undefined: requests are attributed through the
   * balancer's connection records), and whether they are the gateway clients reach or a backend.
   * The headers x-zerodrop-gateway / x-zerodrop-pod when absent.
   */
  attribution?: { role: 'gateway' | 'backend'; header: string | undefined };
  /**
   * The pod as its profile defined it (defineProfile), when `command` is the local shell that renders
   * and execs it: cluster renderers run `argv` themselves and render `templates` in an init container.
   */
  defined?: DefinedPod;
  /**
   * What a gateway workload carries and where it forwards it, as a Gateway API route: the route
   * that a GatewayClass's Gateway gets when the class plays this workload (`gatewayClass`).
   */
  route?: GatewayRoute;
  /**
   * The pods are not started from `command`: they are the dataplane that an installed Gateway API
   * implementation generates for a Gateway of this GatewayClass (`--gateway-class`), found after
   * the Gateway is programmed (src/providers/kube/gateway-class.ts). Only cluster providers run it.
   */
  gatewayClass?: string;
}

/** A defined pod's own form: the system's argv (with `${NAME}` placeholders) and its configuration templates. */
export interface DefinedPod {
  argv: string[];
  /** File name in the pod directory -> template text. */
  templates: Record<string, string>;
}

/** Gateway API route kinds a scenario's gateway may need (their feature names in GatewayClass status.supportedFeatures). */
export type RouteKind = 'HTTPRoute' | 'GRPCRoute' | 'TCPRoute' | 'UDPRoute';

export interface GatewayRoute {
  kind: RouteKind;
  /** The Service and port the route's backendRef names. */
  backend: { service: string; port: number };
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
   * How much later than `programmingDelayMs` each node's proxy may apply a change: per node and per
   * change, uniformly within this spread (src/providers/local/programming-schedule.ts). kube-proxy
   * applies changes at its next sync, no sooner than `minSyncPeriod` (1 s by default) after the
   * last one, each node on its own loop
   * (https://kubernetes.io/docs/reference/command-line-tools-reference/kube-proxy/). Absent: 0, every
   * node applies every change exactly `programmingDelayMs` after it.
   */
  programmingSpreadMs?: number;
  /**
   * UDP flow tracking (conntrack) of the Service's load balancer: an entry whose flow saw no reply
   * expires after `unrepliedMs` of silence, one that saw replies after `streamMs`. Defaults are the
   * Linux defaults nf_conntrack_udp_timeout (30 s) and nf_conntrack_udp_timeout_stream (120 s).
   */
  udpTimeouts?: { unrepliedMs: number; streamMs: number };
}

/** A workload played by a Helm chart's dataplane: which chart, and where its routes send traffic. */
export interface ChartedDataplane {
  /** Name of the Helm profile (src/profiles/helm-charts.ts) whose chart provides the pods. */
  helmProfile: string;
  /** What the gateway carries: `http` (an HTTPRoute or Ingress) or `turn` (a UDPRoute). */
  protocol: 'http' | 'turn';
  /** The Service its route forwards to. */
  routesTo: { service: string; port: number };
  /**
   * Labels of the dataplane pods the chart creates, when they are not labelled
   * zerodrop.dev/workload=<workload> through the chart's values: the gateway Service selects them,
   * and the provider counts the pods they match as this workload's.
   */
  selector?: Record<string, string>;
  /**
   * The Deployment, in the release's namespace, that runs the system's controller (its control
   * plane): what `restart-controller` restarts.
   */
  controller?: { deployment: string };
}

/**
 * A policy/v1 PodDisruptionBudget over one workload's pods: exactly one of `minAvailable` and
 * `maxUnavailable`. The Eviction API (a node drain) refuses, with 429, an eviction that would break it
 * (https://kubernetes.io/docs/concepts/workloads/pods/disruptions/#pod-disruption-budgets).
 */
export interface DisruptionBudget {
  workload: string;
  minAvailable?: number;
  maxUnavailable?: number;
}

export interface Topology {
  workloads: Workload[];
  services: Service[];
  /**
   * The budgets guarding the workloads against voluntary disruptions. When absent, every workload
   * gets `maxUnavailable: 1` (one pod at a time, as its rolling update goes); an empty list means none.
   */
  disruptionBudgets?: DisruptionBudget[];
}

/**
 * The budgets in force: the topology's own list when it has one (possibly empty), else
 * `maxUnavailable: 1` per workload, so that a drain takes one pod at a time as the rolling update does.
 * A charted workload gets none by default: its chart may render its own (ingress-nginx's does when
 * it runs more than one replica), and the Eviction API refuses to evict a pod that two budgets select.
 */
export function disruptionBudgetsOf(topology: Topology): DisruptionBudget[] {
  return topology.disruptionBudgets ?? topology.workloads.filter((w) => !w.installedBy).map((w) => ({ workload: w.name, maxUnavailable: 1 }));
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

