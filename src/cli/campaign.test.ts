import { describe, expect, it } from 'vitest';
import { formatCampaign, parseCampaignArgs, tally, type CampaignRow } from './campaign.ts';
import { catalog } from '../scenarios/index.ts';
import { profiles } from '../profiles/index.ts';

describe('campaign tally', () => {
  it('flags a scenario x profile whose verdict changed between runs, and only that one', () => {
    const rows = new Map<string, CampaignRow>();
    for (let i = 0; i < 3; i++) tally(rows, 'backend-delete-http', 'reference', 'pass');
    expect(tally(rows, 'backend-idle-exit', 'reference', 'pass', 1)).toBeUndefined();
    expect(tally(rows, 'backend-idle-exit', 'reference', 'inconclusive', 2, 'harnessResponsive: lagged')).toEqual({
      run: 2,
      verdict: 'inconclusive',
      why: 'harnessResponsive: lagged',
    });
    const table = [...rows.values()];
    expect(table.map((r) => [r.scenario, r.disagreement])).toEqual([
      ['backend-delete-http', false],
      ['backend-idle-exit', true],
    ]);
    const text = formatCampaign(table, 3);
    expect(text).toMatch(/backend-idle-exit \[reference\]\s+1\s+0\s+1\s+0\s+DISAGREEMENT/);
    expect(text).toMatch(/1 with disagreement/);
  });
});

describe('campaign selection', () => {
  it('runs the whole catalog against every profile, or the pairs --scenario and --profile name', () => {
    const all = parseCampaignArgs([]);
    expect(all.scenarios).toEqual(catalog);
    expect(all.profiles).toEqual(profiles);
    const one = parseCampaignArgs(['--runs', '5', '--scenario', 'backend-rollout-http', '--profile', 'mutant-refuse-after-sigterm', '--profile', 'reference']);
    expect(one.runs).toBe(5);
    expect(one.scenarios.map((s) => s.id)).toEqual(['backend-rollout-http']);
    expect(one.profiles.map((p) => p.name)).toEqual(['mutant-refuse-after-sigterm', 'reference']);
  });
});
