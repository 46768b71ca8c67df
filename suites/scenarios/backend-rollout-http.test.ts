import { describe, expect, it } from 'vitest';
import { eventsOf } from '../../src/model/timeline.ts';
import { expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

describe('backend-rollout-http', () => {
  it('passes against the reference backend and replaces every pod', async () => {
    const r = await runCase('backend-rollout-http', 'reference');
    expectPass(r);
    const tl = r.timeline!;
    expect(eventsOf(tl, 'delete-issued').map((e) => e.pod).sort()).toEqual(['backend-1', 'backend-2', 'backend-3']);
    expect(eventsOf(tl, 'rollout-complete')).toHaveLength(1);
  });

  it('fails against a backend that exits at SIGTERM', async () => {
    const r = await runCase('backend-rollout-http', 'mutant-exit-on-sigterm');
    expectFailedBy(r, 'noFailedRequests');
  });

  it('fails rolloutCompletesWithin when the bound is shorter than the rollout', async () => {
    const r = await runCase('backend-rollout-http', 'reference', { rolloutMaxMs: 100 });
    expectFailedBy(r, 'rolloutCompletesWithin');
  });
});
