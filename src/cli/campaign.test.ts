import { describe, expect, it } from 'vitest';
import { formatCampaign, tally, type CampaignRow } from './campaign.ts';

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
