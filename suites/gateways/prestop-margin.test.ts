// A preStop sized to the load balancer's programming delay, with no margin for the nodes that
// deprogram later, fails every run, not only the runs whose last node happens to be late: each
// drain-correct gateway installed here, on gateway-slow-lb (the 5 s balancer), passes with its
// declared margin and fails without it, by preStopOutlastsDeprogramming naming both margins.

import { describe, expect, it } from 'vitest';
import { ablatedProfiles } from '../../src/profiles/index.ts';
import { missingRequirement } from '../../src/profiles/requirements.ts';
import { describeResult, runCase } from '../helpers/run-case.ts';

const zeroMargin = ablatedProfiles.filter((p) => p.ablation?.setting === 'prestop-margin' && missingRequirement(p) === undefined);

describe.skipIf(zeroMargin.length === 0)('the preStop covers the spread of the nodes\' deprogramming', () => {
  it.each(zeroMargin.map((p) => [p.ablation!.profile, p.name] as const))('%s passes gateway-slow-lb with its margin, %s fails it', async (correct, ablated) => {
    const pass = await runCase('gateway-slow-lb', correct);
    expect(pass.verdict, describeResult(pass)).toBe('pass');
    const fail = await runCase('gateway-slow-lb', ablated);
    expect(fail.verdict, describeResult(fail)).toBe('fail');
    const margin = fail.assertions.find((a) => a.name === 'preStopOutlastsDeprogramming');
    expect(margin?.verdict, describeResult(fail)).toBe('fail');
    expect(margin?.message).toMatch(/a margin of 0\.0\d\d s over the 5\.000 s programming delay, less than the 1\.000 s/);
  });
});
