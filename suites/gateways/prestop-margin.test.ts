// A preStop sized to the load balancer's programming delay, with no margin for the nodes that
// deprogram later, fails every run, not only the runs whose last node happens to be late: each
// drain-correct gateway installed here, on gateway-slow-lb (the 5 s balancer), passes with its
// declared margin and fails without it, by preStopOutlastsDeprogramming naming both margins.
//
// The "passes with its margin" half is the same run (runCase('gateway-slow-lb', <profile>), the
// scenario's own options) that the gateway suites make and hold to more: `passes gateway-slow-lb`
// in reference-gateway.test.ts, `<system> (drain-correct) passes gateway-slow-lb` in
// system-suite.ts (nginx, haproxy, caddy) and nginx-pooled.test.ts, skipped on the same condition
// (the system not installed). So it is not run a second time here: only the ablated twin runs.

import { describe, expect, it } from 'vitest';
import { ablatedProfiles } from '../../src/profiles/index.ts';
import { missingRequirement } from '../../src/profiles/requirements.ts';
import { describeResult, runCase } from '../helpers/run-case.ts';
import { HTTP_GATEWAY_SCENARIOS } from './gateway-cases.ts';

const zeroMargin = ablatedProfiles.filter((p) => p.ablation?.setting === 'prestop-margin' && missingRequirement(p) === undefined);

describe.skipIf(zeroMargin.length === 0)('the preStop covers the spread of the nodes\' deprogramming', () => {
  it('each drain-correct profile with a zero-margin twin has its gateway-slow-lb pass run by a gateway suite', () => {
    expect(HTTP_GATEWAY_SCENARIOS).toContain('gateway-slow-lb');
    // reference-gateway.test.ts runs the reference gateway, system-suite.ts nginx, haproxy and caddy,
    // nginx-pooled.test.ts nginx-pooled.
    for (const p of zeroMargin) expect(['reference', 'nginx', 'nginx-pooled', 'haproxy', 'caddy']).toContain(p.ablation!.profile);
  });

  it.each(zeroMargin.map((p) => [p.name, p.ablation!.profile] as const))('%s fails gateway-slow-lb (%s passes it with its margin: the gateway suites)', async (ablated) => {
    const fail = await runCase('gateway-slow-lb', ablated);
    expect(fail.verdict, describeResult(fail)).toBe('fail');
    const margin = fail.assertions.find((a) => a.name === 'preStopOutlastsDeprogramming');
    expect(margin?.verdict, describeResult(fail)).toBe('fail');
    expect(margin?.message).toMatch(/a margin of 0\.0\d\d s over the 5\.000 s programming delay, less than the 1\.000 s/);
  });
});
