// A profile says how to run one system under test as a pod. Scenarios ask a profile for the role
// they exercise (`backend`, or `gateway`: the pods in front of the backends) and build the rest of
// the topology around it. A profile that cannot play a role, or whose binary is missing, makes the
// scenario `skipped` with the reason, never `fail`.

import type { ChartedDataplane, DefinedPod, Probe, PreStop, Reload } from '../model/workload.ts';
import type { DrainEnd } from '../model/scenario.ts';
import type { AblationOf, DrainSetting } from './ablation.ts';

/** `ablation`: a drain-correct profile with one of its drain settings taken out (ablation.ts). */
export type ProfileKind = 'reference' | 'mutant' | 'system' | 'naive' | 'ablation';

/** What a backend serves. */
export type BackendProtocol = 'http' | 'tcp-stream' | 'websocket' | 'sse' | 'grpc';

/** What a scenario tells a profile about the backend it needs. */
export interface BackendRequest {
  /** Container port the backend must listen on (HTTP). */
  port: number;
  /**
   * What the backend serves: HTTP (the default), long-lived TCP echo streams in the line protocol
   * of fixtures/reference-stream-echo.mjs, WebSocket echo and Server-Sent Events as
   * fixtures/reference-stream-app.mjs serves them, or the gRPC service of fixtures/drain.proto
   * (cleartext HTTP/2). A profile that cannot serve it throws ProfileCannotPlay.
   */
  protocol?: BackendProtocol;
}

/**
 * How a system names the pod that served a response: a response header carrying the pod's name, or
 * `'connection'` when it names none (requests are then attributed to pods through the load
 * balancer's record of each connection).
 */
export type Attribution = { header: string } | 'connection';

/** Header by which reference apps and gateway configs say which pod served a request. */
export const POD_HEADER = 'x-zerodrop-pod';
/**
 * Header by which gateway configs say which gateway pod forwarded a request. When present, the
 * request's `pod` is that gateway pod (the client-facing pod whose drain is under test) and the
 * backend's x-zerodrop-pod goes to `backendPod`.
 */
export const GATEWAY_HEADER = 'x-zerodrop-gateway';

/** The parts of a Workload a profile decides; the scenario decides replicas, grace and preStop. */
export interface BackendPlan {
  command: string[];
  env: Record<string, string>;
  readinessProbe: Probe;
  /** Set when the system's drain needs a preStop of its own; otherwise the scenario's is used. */
  preStop?: PreStop;
  /** How its responses name the pod (defineProfile's `attribution`). */
  attribution?: Attribution;
  /** On clusters: the image to run it in; the program's stock image when absent. */
  image?: string;
  /** The pod as defined, for cluster renderers (Workload.defined). */
  defined?: DefinedPod;
}

/** What a scenario tells a profile about the gateway it needs. */
export interface GatewayRequest {
  /** What the gateway carries from clients to backends (`grpc`: h2c with prior knowledge on both sides, trailers passed on). */
  protocol: 'http' | 'h2c' | 'grpc' | 'udp' | 'turn';
  /** Container port the gateway listens on for clients. */
  port: number;
  /**
   * The backend Service it forwards to. The pod finds its address the Kubernetes way, in the
   * variables `<NAME>_SERVICE_HOST` and `<NAME>_SERVICE_PORT` (upper case, '-' as '_').
   */
  backendService: string;
  backendPort: number;
  /**
   * How long the client-facing Service's load balancer takes to stop sending new connections to a
   * terminating pod: a drain-correct preStop waits at least this long before the graceful stop.
   */
  programmingDelayMs?: number;
  /**
   * How much later than `programmingDelayMs` the balancer's last node may deprogram the pod, varying
   * per node and per change (kube-proxy's sync period; a cloud load balancer's deregistration): a
   * drain-correct preStop waits at least delay + spread, with a margin.
   */
  programmingSpreadMs?: number;
  /**
   * The scenario's terminationGracePeriodSeconds for the gateway: a system without a drain of its
   * own (coturn) is made drain-correct by a preStop sleep that uses most of it.
   */
  graceSeconds?: number;
  /**
   * The most client connections (HTTP) or allocations (TURN) the scenario opens at once, all of
   * which one pod may have to hold: a profile sizes its own resources from it (nginx's
   * worker_connections, coturn's relay port range), or throws ProfileCannotCarry.
   */
  peak?: number;
}

/** The parts of a gateway Workload a profile decides. */
export interface GatewayPlan extends BackendPlan {
  /** Overrides the scenario's grace period when the system's drain needs its own (e.g. Envoy Gateway's 900 s). */
  terminationGracePeriodSeconds?: number;
  /** The image's STOPSIGNAL, when it is not SIGTERM (nginx's graceful stop is SIGQUIT). */
  stopSignal?: NodeJS.Signals;
  /** How a running pod takes a new configuration (defineProfile's `reload`); absent: the reload scenarios skip it. */
  reload?: Reload;
  /**
   * The drain the system promises, after Envoy Gateway's shutdown manager: it exits no earlier than
   * `minDrainSeconds` after the delete and no later than `drainTimeoutSeconds`.
   */
  drain?: { minDrainSeconds: number; drainTimeoutSeconds: number; exits?: DrainEnd };
  /**
   * The gateway is a Helm chart's dataplane, not a process started from `command`: cluster providers
   * install the chart and route to the backend (src/providers/kube/helm-gateway.ts).
   */
  installedBy?: ChartedDataplane;
}

export interface Requirement {
  binary: string;
  /** The command that installs it, shown when the profile is skipped. */
  install: string;
}

export interface Profile {
  name: string;
  kind: ProfileKind;
  /** One line: what running this profile demonstrates. */
  description: string;
  requires: Requirement[];
  backend?: (request: BackendRequest) => BackendPlan;
  /** Throws ProfileCannotPlay for a protocol it does not carry. */
  gateway?: (request: GatewayRequest) => GatewayPlan;
  /** The settings a drain-correct profile carries for its drain, each proven necessary by its ablation. */
  drainSettings?: DrainSetting[];
  /** Set on an ablated profile: which setting of which profile it lacks. */
  ablation?: AblationOf;
  /** A mutant broken in one thing only: the scenarios that catch it (elsewhere nothing is expected of it). */
  caughtBy?: string[];
}

/**
 * Thrown when a profile cannot play the role or protocol a scenario needs (by its gateway or backend,
 * or a scenario's build), or by a provider's `deploy` when the deployed system turns out unable to
 * carry it (a GatewayClass without the route kind): the pair is skipped with this message
 * (src/runner/eligibility.ts), nothing judged.
 */
export class ProfileCannotPlay extends Error {}

/**
 * Thrown when a scenario's options ask more than the profile can carry (a limit of the harness's own
 * configuration of the system, not a drain failure): the run is refused before anything starts,
 * naming the limit, never judged.
 */
export class ProfileCannotCarry extends Error {}
