// The one interface every provider implements (local processes, kind, k3s, an existing cluster).
// Scenarios and chaos steps only ever see this; a scenario never knows which provider runs it.
// Providers write what happens to the Recorder they are given: pod lifecycle events, endpoint
// changes, balancer programming, connections routed, pod output.

import type { Scenario } from '../model/scenario.ts';
import type { Topology } from '../model/workload.ts';

/** Drain bounds a deployed dataplane's pods state (grace period, preStop), and which pod said so. */
export interface StatedDrain {
  minDrainSeconds: number;
  drainTimeoutSeconds: number;
  source: string;
}

export interface PodInfo {
  name: string;
  workload: string;
  /** The pod's address (a loopback address for the local provider). */
  ip: string;
  /** Kubernetes-like lifecycle: Pending until started, Terminating once deleted, Gone once removed. */
  phase: 'Pending' | 'Running' | 'Terminating' | 'Gone';
  ready: boolean;
  /** Run-clock time the pod object was created. */
  createdAt: number;
  /** The node the pod is scheduled on (spec.nodeName), where the provider has nodes. */
  node?: string;
}

export interface ServiceAddress {
  host: string;
  port: number;
}

export interface ProviderCapabilities {
  /** Can drain a node (needs several nodes). */
  multiNode: boolean;
  udp: boolean;
  /** May cordon and drain nodes (`drainNode`): a multi-node cluster the harness itself created. */
  nodeDrain?: boolean;
  /**
   * Gives a container the stop signal its workload asks for even where its image has another
   * (`lifecycle.stopSignal`, feature gate ContainerStopSignals: src/providers/kube/stop-signal.ts).
   * Unknown counts as no.
   */
  containerStopSignals?: boolean;
  /** Installs a mesh profile's mesh when absent and enrols the run's namespace (src/profiles/meshes.ts). Unknown counts as no. */
  meshes?: boolean;
  /**
   * Its Service load balancer records every client connection with the pod it chose (the local
   * provider's balancer). Unknown counts as no: the HTTP loads then record their own connections,
   * as the client saw them (a cluster's kube-proxy shows the harness none).
   */
  serviceConnectionRecords?: boolean;
  /**
   * Its Service load balancer deals new connections out to the ready pods in turn (the local
   * provider's), so a few connections reach every pod. Unknown counts as no: kube-proxy's nftables
   * and iptables modes pick a pod at random, and scenarios take their cluster defaults
   * (OptionSpec.cluster), enough connections that none of the pods is missed in practice.
   */
  roundRobinServices?: boolean;
  /** Reaches into a running pod to reload its configuration in place (`reloadPod`). Unknown counts as no. */
  podReload?: boolean;
  /**
   * How a gateway's route can be moved to another Service under load (the `move-route` action):
   * `gateway-api`, by writing the route of a GatewayClass's Gateway (`moveRoute`); `reload`, by
   * rendering the gateway pods' configuration again and reloading them (`reloadPod`). Unknown: it cannot.
   */
  routeChanges?: 'gateway-api' | 'reload';
}

export interface DrainNodeOptions {
  /** Pause before trying again an eviction a PodDisruptionBudget refused (kubectl drain waits 5 s). */
  retryMs: number;
  timeoutMs: number;
  signal?: AbortSignal;
}

export interface DeleteOptions {
  /** Overrides the pod's terminationGracePeriodSeconds; 0 is a force delete. */
  gracePeriodSeconds?: number;
}

export interface Provider extends AsyncDisposable {
  readonly name: string;
  readonly capabilities: ProviderCapabilities;
  /** Seed of the provider's modelled Service balancers' programming lags (local only): the same seed replays them. */
  readonly seed?: number;

  /** Creates every workload and service; resolves once each workload has its replicas ready and programmed. */
  deploy(topology: Topology, opts: { signal?: AbortSignal; timeoutMs?: number }): Promise<void>;

  /** Where clients reach a Service from the harness. `port` is the ServicePort name; the first one when omitted. */
  serviceAddress(service: string, port?: string): ServiceAddress;

  /**
   * Where a pod inside the cluster reaches the Service (its ClusterIP and port): the peer a relay
   * (a TURN gateway) sends to. Providers whose pods share the harness's addresses omit it.
   */
  peerAddress?(service: string, port?: string): ServiceAddress;

  /**
   * Where the harness reaches one pod behind `service` directly, as a node's proxy does after it
   * picked the pod: the pod's address and the Service's target port. Undefined where the harness
   * cannot reach pods (kind's Docker network, an existing cluster) or does not know the port (a
   * chart's or a GatewayClass's dataplane). Omitted: never.
   */
  podAddress?(service: string, pod: string): ServiceAddress | undefined;

  /** Current pods of a workload that still exist in the API (Terminating pods included), oldest first. */
  pods(workload: string): PodInfo[];

  /** Issues the delete and returns once the API accepted it; the shutdown continues in the background. */
  deletePod(pod: string, opts?: DeleteOptions): Promise<void>;

  /** Sets the replica count; returns once the change is accepted. */
  scale(workload: string, replicas: number): Promise<void>;

  /**
   * `kubectl drain`: cordons the node and evicts the run's pods on it through the Eviction API,
   * honouring PodDisruptionBudgets; resolves with the evicted pods once every eviction was accepted.
   * Only providers whose capabilities say `nodeDrain`.
   */
  drainNode?(node: string, opts: DrainNodeOptions): Promise<string[]>;

  /**
   * Reloads the pod's configuration in place, as its workload's `reload` says, with `env` overriding
   * the variables its templates are rendered with again; resolves once the reload was issued (a
   * signal sent, a command started), and records reload-start and reload-end. Providers that
   * cannot reach into a pod omit it.
   */
  reloadPod?(pod: string, opts?: { env?: Record<string, string> }): Promise<void>;

  /**
   * Points the route of a GatewayClass's Gateway for `workload` at Service `to`: a patch of its
   * backendRefs, or with `recreate` a delete of the route (waited for until gone) and a create of the
   * new one; resolves once the API accepted the last write. Providers whose capabilities say
   * `routeChanges: 'gateway-api'`.
   */
  moveRoute?(workload: string, to: { service: string; port: number }, opts?: { recreate?: boolean }): Promise<void>;

  /** `kubectl rollout restart`: returns once the rollout has started. */
  rolloutRestart(workload: string): Promise<void>;

  /**
   * `kubectl rollout restart` of the controller that runs the workload (ChartedDataplane.controller);
   * returns once the rollout has started. Only providers that install such controllers have it.
   */
  restartController?(workload: string): Promise<void>;

  /** Resolves when the workload's rollout is complete: every replica new, ready, and old pods gone. */
  waitForRollout(workload: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<void>;

  /** Resolves when the pod no longer exists (its processes ended and the object was removed). */
  waitForPodGone(pod: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<void>;

  /**
   * Asked after deploy, before any load: why the scenario's steps cannot be carried out on what was
   * deployed (a dataplane whose controller owns its replicas), or undefined. The scenario is skipped.
   */
  cannotRun?(scenario: Scenario): string | undefined;

  /**
   * Asked after deploy: the drain bounds of a workload the provider did not start from the
   * scenario's spec (a GatewayClass's dataplane), read from its pods; undefined for the others.
   */
  statedDrain?(workload: string): StatedDrain | undefined;

  /**
   * Called once the loads have stopped, before the verdicts: adds to the run's records what the
   * provider learns only after the fact (a netns cluster: the pod kube-proxy sent each connection to,
   * for the connections no response named).
   */
  completeRecords?(): Promise<void>;

  /**
   * Stops everything at once: no preStop, no grace; kills every process, closes every listener,
   * removes temporary files. Safe to call twice and from a signal handler.
   */
  teardown(): Promise<void>;
}
