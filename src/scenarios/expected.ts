// What a scenario must say about a profile, when zerodrop judges it: the flake campaign holds every
// verdict against this, so that "the same verdict every run" cannot hide a verdict that is the same
// and wrong (a false pass of a mutant, a false fail of a drain-correct system).

import type { OptionValues, Toleration, Verdict } from '../model/verdict.ts';
import type { Profile } from '../profiles/profile.ts';
import type { ScenarioDefinition } from './definition.ts';
import { MESH_TOLERATES } from '../profiles/meshes.ts';

export type JudgedVerdict = Extract<Verdict, 'pass' | 'fail'>;

/**
 * A control fails on every profile, and a real system fails a scenario that declares it does, with
 * why (`ScenarioDefinition.knownFailures`: what the system itself does, or a documented defect of
 * its release). Otherwise a drain-correct profile (the reference apps, a real
 * system in its drain-correct configuration) passes, and a broken one (a mutant, a naive twin) fails
 * unless the scenario declares it tolerated, with why (`ScenarioDefinition.tolerates`). An ablated
 * profile fails the scenarios that catch it; elsewhere nothing is expected. `options` are the values
 * the run used (ScenarioResult.options), over the scenario's defaults: a toleration that holds only
 * for some values expects nothing where it does not hold.
 */
export function expectedVerdict(
  scenario: Pick<ScenarioDefinition, 'id' | 'control' | 'tolerates' | 'knownFailures' | 'defaults'>,
  profile: Pick<Profile, 'name' | 'kind' | 'ablation' | 'caughtBy'>,
  options: OptionValues = {},
): JudgedVerdict | undefined {
  if (scenario.control) return 'fail';
  if (scenario.knownFailures?.[profile.name] !== undefined) return 'fail';
  // An ablation must fail the scenarios that catch its missing setting; elsewhere it may pass (a
  // setting is for one kind of traffic), so nothing is expected there.
  if (profile.kind === 'ablation') return profile.ablation?.caughtBy.includes(scenario.id) ? 'fail' : undefined;
  // Likewise a mutant broken in one thing only (its reload): caught where it says, free elsewhere.
  if (profile.caughtBy !== undefined) return profile.caughtBy.includes(scenario.id) ? 'fail' : undefined;
  // An installed GatewayClass (--gateway-class) is what the run finds out about: nothing is expected of it.
  if ('gatewayClass' in profile) return undefined;
  if (profile.kind === 'reference' || profile.kind === 'system') return 'pass';
  const declared = declaredToleration(scenario, profile.name);
  if (declared === undefined) return 'fail';
  return holds(declared, scenario, options) ? 'pass' : undefined;
}

/**
 * Why the scenario passes a broken profile with these option values (over its defaults), if it is
 * declared to and the declaration holds for them: the scenario's own word, or the mesh twin's
 * (meshes.ts).
 */
export function toleration(scenario: Pick<ScenarioDefinition, 'id' | 'tolerates' | 'defaults'>, profile: string, options: OptionValues = {}): string | undefined {
  const declared = declaredToleration(scenario, profile);
  return declared !== undefined && holds(declared, scenario, options) ? tolerationWhy(declared) : undefined;
}

/** Why the scenario says it passes a profile, whatever the options: what `zerodrop list` prints. */
export function tolerationWhy(declared: Toleration): string {
  return typeof declared === 'string' ? declared : declared.why;
}

/** A toleration declared with a predicate holds only for the option values it names (over the scenario's defaults). */
function holds(declared: Toleration, scenario: Pick<ScenarioDefinition, 'defaults'>, options: OptionValues): boolean {
  return typeof declared === 'string' || declared.holds({ ...scenario.defaults, ...options });
}

function declaredToleration(scenario: Pick<ScenarioDefinition, 'id' | 'tolerates'>, profile: string): Toleration | undefined {
  const mesh = MESH_TOLERATES[profile];
  return scenario.tolerates?.[profile] ?? mesh?.[scenario.id] ?? mesh?.['*'];
}
