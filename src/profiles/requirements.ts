// A profile whose binary is missing is skipped with the command that installs it, never failed.

import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import type { Profile, Requirement } from './profile.ts';

export function onPath(binary: string, path = process.env['PATH'] ?? ''): boolean {
  return path.split(delimiter).some((dir) => {
    if (!dir) return false;
    try {
      accessSync(join(dir, binary), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** Why the profile cannot run here, or undefined when everything it needs is installed (or `fulfilled` otherwise). */
export function missingRequirement(profile: Profile, fulfilled: (requirement: Requirement) => boolean = () => false): string | undefined {
  const missing = profile.requires.filter((r) => !fulfilled(r) && !onPath(r.binary));
  if (missing.length === 0) return undefined;
  return missing.map((r) => `${r.binary} not found on PATH (install: ${r.install})`).join('; ');
}
