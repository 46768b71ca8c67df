// The registry of profiles, in the order `zerodrop list` shows them.

import { coturnProfiles } from './coturn.ts';
import type { Profile } from './profile.ts';
import { gatewayProfiles } from './gateways.ts';
import { helmProfiles } from './helm-charts.ts';
import { meshProfiles } from './meshes.ts';
import { mutantGatewayNoGoaway } from './reference-gateway.ts';
import { mutantProfiles, referenceProfile } from './reference.ts';

export const profiles: readonly Profile[] = [referenceProfile, ...mutantProfiles, mutantGatewayNoGoaway, ...gatewayProfiles, ...coturnProfiles, ...helmProfiles, ...meshProfiles];

export function findProfile(name: string): Profile | undefined {
  return profiles.find((p) => p.name === name);
}

export type { Profile } from './profile.ts';
