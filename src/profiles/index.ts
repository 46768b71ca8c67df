// The registry of profiles, in the order `zerodrop list` shows them.

import { ablationsOf } from './ablation.ts';
import { coturnProfiles } from './coturn.ts';
import type { Profile } from './profile.ts';
import { gatewayProfiles } from './gateways.ts';
import { helmProfiles } from './helm-gateways.ts';
import { meshProfiles } from './meshes.ts';
import { mutantGatewayNoGoaway, mutantProfiles, referenceProfile } from './reference.ts';

export const profiles: readonly Profile[] = [referenceProfile, ...mutantProfiles, mutantGatewayNoGoaway, ...gatewayProfiles, ...coturnProfiles, ...helmProfiles, ...meshProfiles];

/**
 * Drain-correct profiles with one drain setting taken out each: named with --profile, or all at
 * once with the campaign's --ablations, never part of a default selection.
 */
export const ablatedProfiles: readonly Profile[] = ablationsOf(profiles);

export function findProfile(name: string): Profile | undefined {
  return profiles.find((p) => p.name === name) ?? ablatedProfiles.find((p) => p.name === name);
}

export type { Profile } from './profile.ts';
