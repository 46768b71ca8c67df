// A route moved under load (gateway-route-swap-http): HAProxy's seamless reload moves it with no
// failure; a route change applied detach-first (a reload with no route, then the new one) fails by
// routeMoved, its 404s placed on the reload's processes, and by noFailedRequests (a gateway's own 404
// is a dropped request); a restart in place of a reload fails by
// noFailedRequests. nginx and Caddy move the route too (routeMoved passes) and fail by the idle
// keep-alive closes of their reload, as in gateway-reload-http. Skipped where the binary is missing.

import { describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectPass, runCase } from '../helpers/run-case.ts';

const SWAP = 'gateway-route-swap-http';

function expectMoved(r: ScenarioResult): void {
  const moved = r.assertions.find((a) => a.name === 'routeMoved');
  expect(moved?.verdict, describeResult(r)).toBe('pass');
  expect(moved?.message).toMatch(/the route moved from backend to backend-b at t=\d+\.\d{3} s: all \d+ requests before it answered by backend, all \d+ from 1\.000 s after it by backend-b/);
}

describe.skipIf(!onPath('haproxy'))('a route moved under load, HAProxy', () => {
  it('haproxy (master-worker reload of every gateway pod) passes: no failure, the route moved', async () => {
    const r = await runCase(SWAP, 'haproxy');
    expectPass(r);
    expectMoved(r);
  });

  it('haproxy-detach-first fails by routeMoved: the gateway answers 404 while the route is detached', async () => {
    const r = await runCase(SWAP, 'haproxy-detach-first');
    expect(r.verdict, describeResult(r)).toBe('fail');
    const moved = r.assertions.find((a) => a.name === 'routeMoved');
    expect(moved?.verdict, describeResult(r)).toBe('fail');
    expect(moved?.message).toMatch(/\d+ of \d+ requests were answered by the gateway with no backend behind it \(\d+ status 404\).* after reload of gateway-\d/);
    // A gateway scenario's loads count only a 2xx as answered: the same 404s are failed requests.
    expect(r.assertions.find((a) => a.name === 'noFailedRequests')?.message, describeResult(r)).toMatch(/^\d+ of \d+ requests failed \(\d+ status 404\)/);
  });

  it('haproxy-restart fails by noFailedRequests: new connections refused while no process listens', async () => {
    const r = await runCase(SWAP, 'haproxy-restart');
    expect(r.verdict, describeResult(r)).toBe('fail');
    expect(r.assertions.find((a) => a.name === 'noFailedRequests')?.message, describeResult(r)).toMatch(/refused.*after reload of gateway-\d \(old \d+/);
  });
});

describe.each([['nginx'], ['caddy']] as const)('a route moved under load, %s', (system) => {
  it.skipIf(!onPath(system))(`${system} moves the route, and fails by keepAliveClosedPolitely (its reload closes idle keep-alive connections)`, async () => {
    const r = await runCase(SWAP, system);
    expect(r.verdict, describeResult(r)).toBe('fail');
    expectMoved(r);
    expect(r.assertions.find((a) => a.name === 'keepAliveClosedPolitely')?.verdict, describeResult(r)).toBe('fail');
  });
});
