// nginx pooling its upstream connections: drain-correct on the gateway's own drain (gateway-slow-lb,
// which also holds the "passes with its margin" half of prestop-margin.test.ts), and on the drain of
// the backends behind it, which only its upstream keep-alive retirement makes safe: without it, the
// backends' drains close pooled connections nginx still sends on (docs/drain-settings.md).

import { describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import { describeResult, expectFailedBy, runCase } from '../helpers/run-case.ts';
import { expectDrainCorrect } from './gateway-cases.ts';

describe.skipIf(!onPath('nginx'))('nginx-pooled as a gateway', () => {
  it('passes gateway-slow-lb', async () => {
    expectDrainCorrect(await runCase('gateway-slow-lb', 'nginx-pooled'));
  });

  it('passes gateway-backend-rollout-http: no pooled connection is left for a backend to close', async () => {
    const r = await runCase('gateway-backend-rollout-http', 'nginx-pooled');
    expect(r.verdict, describeResult(r)).toBe('pass');
  });

  it('without its upstream keep-alive retirement fails gateway-backend-rollout-http: the backends close pooled connections it still uses', async () => {
    const r = await runCase('gateway-backend-rollout-http', 'nginx-pooled-without-upstream-keepalive-retirement');
    expectFailedBy(r, 'noIdleUpstreamAtDrain');
    expect(r.assertions.find((a) => a.name === 'noIdleUpstreamAtDrain')?.message).toMatch(/closed \d+ connections? its client had left idle between requests after its deprogramming/);
  });
});
