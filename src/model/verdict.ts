// Verdicts, from worst to best for aggregation: one failed assertion fails the scenario; a scenario
// whose measurement was not trustworthy (load not held, harness lagging) is inconclusive, never pass.

export type Verdict = 'pass' | 'fail' | 'inconclusive' | 'skipped';

/** A run's value of each scenario option (`--set`, config `set`, the scenario's defaults), by option name. */
export type OptionValues = Record<string, number>;

/**
 * Why a scenario passes a broken profile (a mutant, a naive twin): always (a string), or only while
 * the run's option values make it so (`holds`), e.g. while a preStop outlasts the balancer's
 * deprogramming. A run whose options (`--set`, config `set`) break that condition expects nothing of
 * the profile: it may pass or fail.
 */
export type Toleration = string | { why: string; holds: (options: Readonly<OptionValues>) => boolean };

export interface AssertionResult {
  name: string;
  verdict: Exclude<Verdict, 'skipped'>;
  /** What it saw, in one sentence a reader can act on. */
  message: string;
  /** Structured facts behind the message (first failures, measured times) for reports. */
  details?: Record<string, unknown>;
}

/** fail beats inconclusive beats pass: a failure observed under bad load is still a failure. */
export function combineVerdicts(results: readonly AssertionResult[]): Exclude<Verdict, 'skipped'> {
  if (results.some((r) => r.verdict === 'fail')) return 'fail';
  if (results.some((r) => r.verdict === 'inconclusive')) return 'inconclusive';
  return 'pass';
}
