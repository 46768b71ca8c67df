// Where a running scenario x profile pair is: what a run tells its reporters as it goes.

export interface ScenarioProgress {
  scenario: string;
  profile: string;
  phase: 'deploying' | 'running' | 'settling' | 'evaluating';
  message?: string;
}
