// The registry of profiles, in the order `zerodrop list` shows them.

import type { Profile } from './profile.ts';
import { mutantProfiles, referenceProfile } from './reference.ts';

export const profiles: readonly Profile[] = [referenceProfile, ...mutantProfiles];

export function findProfile(name: string): Profile | undefined {
  return profiles.find((p) => p.name === name);
}

export type { Profile } from './profile.ts';
