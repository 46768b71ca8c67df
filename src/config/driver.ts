// `--driver builtin|hey|iperf3`: which client carries out the loads (src/load/drivers.ts). Checked
// before anything starts: an unknown driver, or one that cannot carry out a selected scenario's
// load, is bad usage (exit 2). A driver whose binary is missing is not: the runner skips with the
// install hint, as for a profile.

import { DRIVERS, isDriver, scenarioMisfits, type LoadDriver } from '../load/drivers.ts';
import { referenceProfile } from '../profiles/reference.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { UsageError } from './usage-error.ts';

/** Why `driver` cannot carry out the loads of `def` (built with its short defaults), one line each. */
export function definitionMisfits(driver: LoadDriver, def: ScenarioDefinition): string[] {
  if (driver === 'builtin') return [];
  let scenario;
  try {
    // Load specs come from the scenario's options, not from the profile; the reference plays every role.
    scenario = def.build(referenceProfile, { ...def.defaults });
  } catch (error) {
    return [`${def.id}: its loads could not be determined (${error instanceof Error ? error.message : String(error)})`];
  }
  return scenarioMisfits(driver, scenario);
}

/**
 * Validates `value` and returns the driver with the scenarios it runs: with scenarios named on the
 * command line every one must fit; with none named, the catalog's scenarios that fit.
 */
export function chooseDriver(value: string, selected: readonly ScenarioDefinition[], named: boolean): { driver: LoadDriver; scenarios: ScenarioDefinition[] } {
  if (!isDriver(value)) throw new UsageError(`--driver ${value}: unknown driver; use one of ${DRIVERS.join(', ')}`);
  if (value === 'builtin') return { driver: value, scenarios: [...selected] };
  if (named) {
    const misfits = selected.flatMap((def) => definitionMisfits(value, def));
    if (misfits.length > 0) throw new UsageError(`--driver ${value} cannot run the selected scenario(s):\n  ${misfits.join('\n  ')}`);
    return { driver: value, scenarios: [...selected] };
  }
  const fitting = selected.filter((def) => definitionMisfits(value, def).length === 0);
  if (fitting.length === 0) throw new UsageError(`--driver ${value}: no scenario of the catalog has a load it can carry out`);
  return { driver: value, scenarios: fitting };
}
