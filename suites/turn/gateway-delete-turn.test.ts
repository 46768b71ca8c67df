// gateway-delete-turn through coturn (seed 000). coturn 4.6 has no drain of its own: SIGTERM ends
// turnserver within milliseconds and its allocations die with it. `coturn` holds SIGTERM back with
// a preStop sleep and passes; `coturn-naive` (as packaged) loses the allocations it held and the
// Allocate requests routed to it before the Service deprogrammed it.

import { describe, expect, it } from 'vitest';
import { findProfile } from '../../src/profiles/index.ts';
import { missingRequirement } from '../../src/profiles/requirements.ts';
import { describeResult, expectFailedBy, expectPass, runCase } from '../helpers/run-case.ts';

const missing = missingRequirement(findProfile('coturn')!);

describe('gateway-delete-turn', () => {
  it.skipIf(missing !== undefined)('passes with coturn held back by a preStop sleep: allocations relay until their flows end', async () => {
    const r = await runCase('gateway-delete-turn', 'coturn');
    expectPass(r);
    const keep = r.assertions.find((a) => a.name === 'allocationsKeepRelaying');
    expect(keep?.message, describeResult(r)).toMatch(/held by a deleted gateway pod through its drain/);
  });

  it.skipIf(missing !== undefined)('fails with coturn as packaged: SIGTERM ends it and its allocations at the delete', async () => {
    const r = await runCase('gateway-delete-turn', 'coturn-naive');
    expectFailedBy(r, 'allocationsKeepRelaying', 'newAllocationsSucceed');
    expect(r.assertions.find((a) => a.name === 'allocationsKeepRelaying')?.message, describeResult(r)).toMatch(/held by gateway-\d+, phase "/);
  });

  it.runIf(missing !== undefined)('is skipped with the install hint when turnserver is missing', async () => {
    const r = await runCase('gateway-delete-turn', 'coturn');
    expect(r.verdict).toBe('skipped');
    expect(r.reason).toContain('apt-get install coturn');
  });
});
