import { describe, expect, it } from 'vitest';
import { findProfile, profiles } from '../profiles/index.ts';
import { expectedVerdict } from './expected.ts';
import { catalog, findScenario } from './index.ts';

function expected(scenarioId: string, profileName: string) {
  const scenario = findScenario(scenarioId);
  const profile = findProfile(profileName);
  if (!scenario || !profile) throw new Error(`no ${scenario ? 'profile' : 'scenario'} ${scenario ? profileName : scenarioId}`);
  return expectedVerdict(scenario, profile);
}

describe('expectedVerdict', () => {
  it('expects drain-correct profiles to pass, broken ones to fail, and the control to fail on all', () => {
    expect(expected('backend-delete-http', 'reference')).toBe('pass');
    expect(expected('gateway-delete-http', 'nginx')).toBe('pass');
    expect(expected('gateway-delete-http', 'nginx-naive')).toBe('fail');
    expect(expected('backend-delete-http', 'mutant-exit-on-sigterm')).toBe('fail');
    expect(expected('force-delete', 'reference')).toBe('fail');
  });

  it('expects a pass of a broken profile only where the scenario says why it cannot catch it', () => {
    expect(expected('backend-idle-exit', 'mutant-exit-on-sigterm')).toBe('pass');
    expect(expected('backend-idle-exit', 'mutant-hang-until-killed')).toBe('fail');
    expect(expected('backend-delete-http', 'mutant-refuse-after-sigterm')).toBe('pass');
    // The scenario built to catch it tolerates nothing.
    expect(expected('backend-sigterm-keeps-accepting', 'mutant-refuse-after-sigterm')).toBe('fail');
  });

  it('names only broken profiles in tolerates, each with a reason, and every broken profile is caught somewhere', () => {
    const broken = profiles.filter((p) => p.kind === 'mutant' || p.kind === 'naive');
    for (const s of catalog) {
      for (const [name, why] of Object.entries(s.tolerates ?? {})) {
        expect(broken.map((p) => p.name), `${s.id} tolerates ${name}`).toContain(name);
        expect(why.length, `${s.id}: why it tolerates ${name}`).toBeGreaterThan(20);
      }
    }
    // A mutant every scenario tolerated would be a broken system the catalog cannot see.
    for (const p of broken) {
      const catching = catalog.filter((s) => !s.control && expectedVerdict(s, p) === 'fail');
      expect(catching.length, `scenarios expected to catch ${p.name}`).toBeGreaterThan(0);
    }
  });
});
