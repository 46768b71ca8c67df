// Whether a scenario x profile pair runs on this session, decided in one place before anything is
// deployed, the way Gateway API's conformance suite skips a test whose features the implementation
// does not claim: a pair that cannot run is `skipped` with one reason, never failed or inconclusive.
//
// The one exception is what only the deployed system can tell (a GatewayClass that does not list
// the scenario's route kind, a dataplane whose controller owns its replicas): the provider throws
// ProfileCannotPlay from `deploy` or answers `cannotRun` after it, and runScenario reports that
// reason as `skipped` the same way (`skippedAfterDeploy`).

import { ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import { missingRequirement } from '../profiles/requirements.ts';
import { meshUnsupported } from '../profiles/meshes.ts';
import { missingDriver, type LoadDriver } from '../load/drivers.ts';
import type { ProviderSession } from '../providers/index.ts';
import type { Provider, ProviderCapabilities } from '../providers/provider.ts';
import { unsupported } from '../providers/support.ts';
import type { Scenario } from '../model/scenario.ts';
import type { OptionValues } from '../model/verdict.ts';
import type { Feature, ScenarioDefinition } from '../scenarios/definition.ts';

export type Eligibility = { runs: true; scenario: Scenario } | { runs: false; reason: string };

export interface EligibilityRequest {
  session: Pick<ProviderSession, 'name' | 'capabilities' | 'unsupported' | 'fulfils'>;
  driver?: LoadDriver;
  /** The pair's options (defaults, nightly values and overrides already applied). */
  options: OptionValues;
}

type Carrier = { name: string; capabilities: ProviderCapabilities };

/**
 * The features a provider must claim for a scenario that lists them: a scenario names what it
 * exercises, the provider's capabilities say what it carries, and a feature missing is the skip.
 */
const FEATURE_NEEDS: Partial<Record<Feature, (provider: Carrier) => string | undefined>> = {
  'node-drain': (p) => (p.capabilities.nodeDrain ? undefined : `provider ${p.name} may not cordon and drain nodes here (single node, or a cluster zerodrop did not create)`),
  reload: (p) => (p.capabilities.podReload ? undefined : `provider ${p.name} cannot reload a pod's configuration in place (the reload scenarios run on the local provider)`),
  'route-change': (p) =>
    p.capabilities.routeChanges
      ? undefined
      : `provider ${p.name} cannot move a gateway's route under load: on a cluster the route is a GatewayClass's HTTPRoute (run with --gateway-class), on the local provider a reload of the gateway's configuration`,
  udp: (p) => (p.capabilities.udp ? undefined : `provider ${p.name} does not carry UDP to its Services (its published ports are TCP only)`),
};

/** The first of the scenario's features the provider does not claim, as the skip reason. */
export function missingFeature(features: readonly Feature[], provider: Carrier): string | undefined {
  for (const feature of features) {
    const missing = FEATURE_NEEDS[feature]?.(provider);
    if (missing !== undefined) return missing;
  }
  return undefined;
}

/**
 * Runs, with the built scenario, or skipped with the first reason, checked cheapest first: the
 * profile's binaries and the load driver, the profile's role and protocols (its build), the
 * scenario's features against the provider's, then what the provider and the session refuse.
 */
export function eligibility(def: ScenarioDefinition, profile: Profile, request: EligibilityRequest): Eligibility {
  const { session } = request;
  const skipped = (reason: string): Eligibility => ({ runs: false, reason });
  const missing = missingRequirement(profile, (r) => session.fulfils?.(r, profile) ?? false) ?? (request.driver ? missingDriver(request.driver) : undefined);
  if (missing) return skipped(missing);
  let scenario: Scenario;
  try {
    scenario = def.build(profile, request.options);
  } catch (error) {
    if (error instanceof ProfileCannotPlay) return skipped(error.message);
    throw error;
  }
  const refused = missingFeature(def.features, session) ?? unsupported(scenario, session) ?? meshUnsupported(profile, session) ?? session.unsupported?.(def, profile);
  return refused === undefined ? { runs: true, scenario } : skipped(refused);
}

/** The exception above: why the deployed system cannot carry the scenario (deploy threw, or the provider says so after it). */
export function skippedAfterDeploy(provider: Pick<Provider, 'cannotRun'>, scenario: Scenario, deployError?: unknown): string | undefined {
  if (deployError instanceof ProfileCannotPlay) return deployError.message;
  return deployError === undefined ? provider.cannotRun?.(scenario) : undefined;
}
