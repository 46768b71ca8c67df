// One suite per real gateway: the drain-correct profile passes every HTTP gateway scenario, its
// `-naive` twin fails gateway-slow-lb (and, where its stop cuts in-flight requests at once,
// gateway-delete-http) with the phase and the gateway pod named. Skipped where the system is not
// installed (the profile itself would report `skipped` with the install hint).

import { describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import { describeResult, runCase } from '../helpers/run-case.ts';
import { expectDrainCorrect, expectNaiveFailure, HTTP_GATEWAY_SCENARIOS } from './gateway-cases.ts';

export function systemSuite(system: 'nginx' | 'haproxy' | 'caddy', naiveFailsDelete: boolean): void {
  describe.skipIf(!onPath(system))(`${system} as a gateway`, () => {
    it.each(HTTP_GATEWAY_SCENARIOS)(`${system} (drain-correct) passes %s`, async (scenario) => {
      expectDrainCorrect(await runCase(scenario, system));
    });

    it(`${system}-naive fails gateway-slow-lb: the load balancer's new connections are refused after SIGTERM`, async () => {
      const r = await runCase('gateway-slow-lb', `${system}-naive`);
      expectNaiveFailure(r);
      expect(r.assertions.find((a) => a.name === 'drainTiming')?.verdict, describeResult(r)).toBe('fail');
    });

    // Caddy's graceful stop lets in-flight requests finish: its naive twin fails gateway-delete-http
    // only through keep-alive races, so that direction is not a test.
    if (naiveFailsDelete) {
      it(`${system}-naive fails gateway-delete-http: in-flight requests are cut`, async () => {
        expectNaiveFailure(await runCase('gateway-delete-http', `${system}-naive`));
      });
    }
  });
}
