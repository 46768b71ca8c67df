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
export type PodRef = { step: string } | { workload: string };

/** When a chaos step runs. Times are ms since load started (t = 0 of the scenario's action). */
export type When =
  | { atMs: number }
  | { afterStep: string; delayMs: number }
  | { onEvent: EventKind; workload?: string; delayMs: number };

export type ChaosAction =
  | { kind: 'delete-pod'; workload: string; pick: 'oldest' | 'newest'; gracePeriodSeconds?: number }
  | { kind: 'scale'; workload: string; replicas: number }
  | { kind: 'rollout-restart'; workload: string };

export interface ChaosStep {
  id: string;
  when: When;
  action: ChaosAction;
}

export interface LoadPhase {
  id: string;
  spec: LoadSpec;
  /** ms after the scenario's t = 0 that this load starts; it runs until the scenario ends. */
  startMs: number;
}

/** The scenario is over when this holds, plus `settleMs` of load to see what happens after. */
export type EndCondition =
  | { podGone: PodRef; settleMs: number }
  | { rolloutComplete: string; settleMs: number }
  | { afterMs: number };

export type Expectation =
  | { assert: 'noFailedRequests'; load?: string }
  | { assert: 'podExitWithin'; pod: PodRef; from: 'delete' | 'sigterm'; minMs: number; maxMs: number }
  | { assert: 'exitsPromptlyWhenIdle'; pod: PodRef; withinMs: number }
  | { assert: 'acceptsNewConnectionsAfterSigterm'; pod: PodRef; windowMs: number }
  | { assert: 'noNewConnectionsAfterDeprogram'; pod: PodRef }
  | { assert: 'completesInFlight'; load: string }
  | { assert: 'notKilled'; pod: PodRef }
  | { assert: 'rolloutCompletesWithin'; workload: string; maxMs: number };

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
