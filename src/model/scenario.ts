// A Scenario is the declarative, fully resolved description of one run: what to deploy, what load to
// drive, which chaos steps to take and when, when the run is over, and what must hold. Scenario
// definitions in src/scenarios/ build one from a profile and options; the runner carries it out;
// the assertions in src/assert/ evaluate its expectations over the Timeline. Plain data only.

import type { LoadSpec } from './load.ts';
import type { EventKind } from './timeline.ts';
import type { Topology } from './workload.ts';

/**
 * Names a pod by what the scenario did to it, since pod names are only known at run time:
 * the pod a chaos step acted on, or every pod of a workload that was deleted during the run.
 */
/**
 * How a system ends its drain: `when-idle` (default: it exits once its last connection is gone, as
 * Envoy Gateway's shutdown manager does) or `at-timeout` (it waits out its own shutdown timeout
 * whatever the traffic, as Apache Traffic Server does): the idle-exit bound applies to the first only.
 */
export type DrainEnd = 'when-idle' | 'at-timeout';

export type PodRef = { step: string } | { workload: string };

/** When a chaos step runs. Times are ms since load started (t = 0 of the scenario's action). */
export type When =
  | { atMs: number }
  | { afterStep: string; delayMs: number }
  | { onEvent: EventKind; workload?: string; delayMs: number };

export type ChaosAction =
  | { kind: 'delete-pod'; workload: string; pick: 'oldest' | 'newest'; gracePeriodSeconds?: number }
  | { kind: 'scale'; workload: string; replicas: number }
  | { kind: 'rollout-restart'; workload: string }
  /** `kubectl rollout restart` of the controller that runs the workload (a chart's, ChartedDataplane.controller), not of the workload. */
  | { kind: 'restart-controller'; workload: string }
  /**
   * The profile's configuration reload of running pods of the workload (its `reload`): `pick` one,
   * or `all` of them, each at once. `env` overrides pod variables the templates are rendered with
   * again before the reload (a route moved to another backend Service); a value may name the pod's
   * own variables as `${NAME}` (`${BACKEND_B_SERVICE_HOST}`).
   */
  | { kind: 'reload-pod'; workload: string; pick: 'oldest' | 'newest' | 'all'; env?: Record<string, string> }
  /**
   * The workload's route moves from Service `from` to Service `to` (both the run's), as a user or a
   * GitOps tool changes it. On a cluster with a GatewayClass: the HTTPRoute's backendRefs patched in
   * place, or, with `recreate`, the route deleted and then created again with the new backendRefs (a
   * pipeline that replaces objects rather than patching them; between the two the gateway has no
   * route). Locally: the gateway's configuration rendered again with the new Service and every pod
   * reloaded at once, as a controller applying the changed route would (capabilities.routeChanges).
   */
  | { kind: 'move-route'; workload: string; from: string; to: { service: string; port: number }; recreate?: boolean }
  /**
   * `kubectl drain` of the node hosting the workload's oldest running pod: cordon it, then evict its
   * pods through the Eviction API, an eviction a PodDisruptionBudget refuses (429) tried again after a
   * pause. Needs a provider that may cordon and drain nodes (capabilities.nodeDrain).
   */
  | { kind: 'drain-node'; workload: string; retryMs: number; timeoutMs: number };

export interface ChaosStep {
  id: string;
  when: When;
  action: ChaosAction;
}

export interface LoadPhase {
  id: string;
  spec: LoadSpec;
  /** ms after the scenario's t = 0 that this load starts; it runs until the scenario ends. With `startOn`: the earliest it can start. */
  startMs: number;
  /** Starts at a moment of the run rather than at a time: see LoadTrigger. */
  startOn?: LoadTrigger;
}

/**
 * `newPodReady`: the `nth` (from 1) pod of `workload` created after step `afterStep` ran became
 * ready. In a rolling update with maxUnavailable 0 that is the moment the controller stops the next
 * old pod, so a load started then is in flight on it at its delete, however long the new pod took to
 * turn ready (a fraction of a second on the model, seconds on a cluster).
 */
export type LoadTrigger = { newPodReady: { workload: string; afterStep: string; nth: number } };

/** The scenario is over when this holds, plus `settleMs` of load to see what happens after. */
export type EndCondition =
  | { podGone: PodRef; settleMs: number }
  | { rolloutComplete: string; settleMs: number }
  /** Every pod of the workload is gone (after a scale to 0). */
  | { workloadGone: string; settleMs: number }
  /** The drain of step `nodeDrained` evicted every pod it had to, and each of those pods is gone. */
  | { nodeDrained: string; settleMs: number }
  | { afterMs: number };

export type Expectation =
  /**
   * Packet loads (seed 000): no packet of `load` lost while the pod serving its flow was alive;
   * packets sent after that pod's process exited are counted separately.
   */
  | { assert: 'noLostPackets'; load?: string }
  /**
   * Every request of `load` (of every load when unset) succeeded; `exceptLoads` are not judged here
   * (requests built to outlast the drain, which another assertion holds to the drain's bounds).
   */
  | { assert: 'noFailedRequests'; load?: string; exceptLoads?: string[] }
  | { assert: 'podExitWithin'; pod: PodRef; from: 'delete' | 'sigterm'; minMs: number; maxMs: number }
  | { assert: 'exitsPromptlyWhenIdle'; pod: PodRef; withinMs: number }
  | { assert: 'acceptsNewConnectionsAfterSigterm'; pod: PodRef; windowMs: number }
  /**
   * No new connection reaches the pod once the Service's balancer deprogrammed it. Requests sent
   * straight to the pod (a lagging node's, LaggingNodeSpec) are not the balancer's and not judged.
   */
  | { assert: 'noNewConnectionsAfterDeprogram'; pod: PodRef }
  | { assert: 'completesInFlight'; load: string }
  /**
   * Every configuration reload of the run's pods took: its command exited 0 (its signal was sent),
   * and within `retireWithinMs` of it every process it retired was gone (a reload that leaves old
   * workers running holds their sockets and memory). The message tells each reload's processes.
   */
  | { assert: 'reloadSucceeded'; retireWithinMs: number }
  /**
   * A route moved from the backends of workload `from` to those of `to` by step `step`: requests
   * sent before the step were served by `from`, and requests sent `withinMs` or more after it by
   * `to` only (a request on a connection an old process still holds may be served by either).
   */
  | { assert: 'routeMoved'; step: string; from: string; to: string; withinMs: number }
  | { assert: 'notKilled'; pod: PodRef }
  | { assert: 'rolloutCompletesWithin'; workload: string; maxMs: number }
  /**
   * Envoy Gateway's shutdown manager, as a bound on the pod: it exits no earlier than `minDrainMs`
   * after its delete, no later than `drainTimeoutMs` after it, within `idleExitMs` of having no
   * connection left (once the minimum has passed), and never by SIGKILL.
   */
  | { assert: 'drainTiming'; pod: PodRef; minDrainMs: number; drainTimeoutMs: number; idleExitMs: number; exits?: DrainEnd }
  /**
   * HTTP/2 (seed 003): clients of the drained pod got GOAWAY and their later streams went to other
   * pods. With `announced`, each connection's first GOAWAY must name the largest stream id (RFC 9113
   * section 6.8's shutdown notice): one naming a lower id refuses every stream its client sent
   * before it arrived, which a load without retries counts as failed.
   */
  | { assert: 'http2Goaway'; pod: PodRef; load: string; announced?: boolean }
  /**
   * Long-lived TCP streams (seeds 000, 003): each stream of `load` stays intact until the backend
   * closes it gracefully (drain announced, every message echoed) or the load ends it; no reset, no
   * stall, no unannounced close. Needs at least one stream open on a pod `pod` names at its delete.
   */
  | {
      assert: 'streamsIntact';
      load: string;
      pod: PodRef;
      /**
       * Bounded streams whose backends are never disturbed (a gateway scenario): each must run to its
       * own end, so a drain close (WebSocket 1001, an SSE body ended) before it is a fault too, sent
       * by whatever stands in front of the backends.
       */
      toEnd?: boolean;
    }
  | {
      assert: 'grpcStreamsComplete';
      load: string;
      pod: PodRef;
      /**
       * Behind a gateway, over backends that are never disturbed: every stream must run to its last
       * message, so one ended early, even with OK, is a fault (only the gateway can have ended it).
       */
      toEnd?: boolean;
    }
  /**
   * TURN (seed 000): allocations of `load` held by the gateway pod `pod` names keep relaying, every
   * packet echoed, until their flow ends or the pod's grace period expires (delete + grace).
   */
  | { assert: 'allocationsKeepRelaying'; load: string; pod: PodRef }
  /** TURN: every allocation of `load` (made while a gateway pod drains) succeeded. */
  | { assert: 'newAllocationsSucceed'; load: string }
  /**
   * No HTTP/1.1 keep-alive connection of the run's loads was closed by the server between two
   * requests without Connection: close, unless it had been idle `idleTimeoutMs` or more.
   */
  | { assert: 'keepAliveClosedPolitely'; idleTimeoutMs: number }
  /**
   * No connection a client (a gateway) kept using after the pod was deprogrammed was still open, idle,
   * when the pod's drain closed it: a request sent on one at that moment is lost. A connection idle
   * longer than `usedWithinMs` at its close was last used before the deprogramming (a gateway that
   * balances over endpoints stops using it), and is let through. Read from the reference backend's
   * `idle-close` lines.
   */
  | { assert: 'noIdleUpstreamAtDrain'; pod: PodRef; usedWithinMs: number }
  /**
   * The pod's stop signal came at least `programmingDelayMs` + `spreadMs` after its delete: after the
   * last node of its Service's load balancer deprograms it, whatever that node's lag in this run.
   */
  | { assert: 'preStopOutlastsDeprogramming'; pod: PodRef; programmingDelayMs: number; spreadMs: number };

export type AssertionName = Expectation['assert'];

export interface Scenario {
  id: string;
  profile: string;
  topology: Topology;
  loads: LoadPhase[];
  steps: ChaosStep[];
  end: EndCondition;
  /** Hard stop: past this the run is torn down and the verdict is inconclusive. */
  maxDurationMs: number;
  expectations: Expectation[];
}
