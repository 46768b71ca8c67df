// A profile says how to run one system under test as a pod. Scenarios ask a profile for the role
// they exercise (a backend today; a gateway with the real-gateway profiles) and build the rest of
// the topology around it. A profile that cannot play a role, or whose binary is missing, makes the
// scenario `skipped` with the reason, never `fail`.

import type { Probe, PreStop } from '../model/workload.ts';

export type ProfileKind = 'reference' | 'mutant' | 'system' | 'naive';

/** What a scenario tells a profile about the backend it needs. */
export interface BackendRequest {
  /** Container port the backend must listen on (HTTP). */
  port: number;
}

/** The parts of a Workload a profile decides; the scenario decides replicas, grace and preStop. */
export interface BackendPlan {
  command: string[];
  env: Record<string, string>;
  readinessProbe: Probe;
  /** Set when the system's drain needs a preStop of its own; otherwise the scenario's is used. */
  preStop?: PreStop;
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
}
