// Configuration reloads under load, each gateway through its own `reload` (defineProfile): what each
// one really does, measured. HAProxy's master-worker reload hands its listeners to the new worker
// and passes both scenarios. nginx and Caddy pass with a new connection per request (Caddy but for
// its own listener-swap race, below), and fail the
// keep-alive scenario by keepAliveClosedPolitely: their reload closes idle keep-alive connections
// unannounced (a known failure of the scenario, not of their configuration; a request that meets
// one of those closes fails too, which is a race and not asserted either way). A restart
// in place of a reload fails by noFailedRequests, its failures placed on the retiring process. An
// -sf reload without listener handover, the textbook naive one, is hitless on this kernel
// (SO_REUSEPORT): it is measured here, not called naive. Each skipped where its binary is missing.

import { describe, expect, it } from 'vitest';
import { haproxyReexec } from '../../src/profiles/gateways.ts';
import { onPath } from '../../src/profiles/requirements.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { describeResult, expectPass, runCase } from '../helpers/run-case.ts';

const RELOADS = ['gateway-reload-http', 'gateway-reload-http-no-keepalive'] as const;

/** Every long request completed and the reload took, naming the processes it replaced (when it replaces any). */
function expectReloaded(r: ScenarioResult, replacesProcesses: boolean): void {
  const inFlight = r.assertions.filter((a) => a.name === 'completesInFlight');
  expect(inFlight.length, describeResult(r)).toBe(2);
  for (const a of inFlight) expect(a.verdict, describeResult(r)).toBe('pass');
  const reload = r.assertions.find((a) => a.name === 'reloadSucceeded');
  expect(reload?.verdict, describeResult(r)).toBe('pass');
  expect(reload?.message).toMatch(replacesProcesses ? /reloaded at t=\d+\.\d{3} s in \d+\.\d{3} s: \d+ left after .*\d+ up after/ : /no process replaced/);
}

/** Failed by keepAliveClosedPolitely; the long requests completed and the reload took. */
function expectIdleClosesOnly(r: ScenarioResult): void {
  expect(r.verdict, describeResult(r)).toBe('fail');
  const polite = r.assertions.find((a) => a.name === 'keepAliveClosedPolitely');
  expect(polite?.verdict, describeResult(r)).toBe('fail');
  expect(polite?.message).toMatch(/after reload of gateway-1/);
  expectReloaded(r, r.profile === 'nginx');
}

describe.skipIf(!onPath('haproxy'))('HAProxy reloads', () => {
  it.each(RELOADS)('haproxy (master-worker, SIGUSR2) passes %s', async (scenario) => {
    const r = await runCase(scenario, 'haproxy');
    expectPass(r);
    expectReloaded(r, true);
  });

  it('haproxy-restart (stop, then start) fails gateway-reload-http-no-keepalive: connections refused while no process listens', async () => {
    const r = await runCase('gateway-reload-http-no-keepalive', 'haproxy-restart');
    expect(r.verdict, describeResult(r)).toBe('fail');
    const failed = r.assertions.find((a) => a.name === 'noFailedRequests');
    expect(failed?.verdict, describeResult(r)).toBe('fail');
    expect(failed?.message).toMatch(/refused/);
    // Placed on the process and the phase of the reload, not on a pod's shutdown.
    expect(failed?.message).toMatch(/phase "\d+\.\d{3} s after reload of gateway-1 \(old \d+ \(haproxy [^)]*\) (retiring|gone); no new process up yet\)"/);
  });

  // Measured on Linux 6.18 (tcp_migrate_req 0): no failure in 502, 1,139 and 2,183 requests (the
  // last at 430 new connections/s). The new process binds beside the old before the old closes its
  // socket, and the old one accepts fast enough that its queue is empty when it closes.
  it('an -sf reload without listener handover is hitless here (SO_REUSEPORT): measured, not called naive', async () => {
    const sf = haproxyReexec('sf', { name: 'haproxy-reload-sf', description: 'HAProxy reloaded by -sf, no listener handed over' });
    const r = await runCase('gateway-reload-http-no-keepalive', sf);
    expectPass(r);
    expectReloaded(r, true);
  });
});

describe.skipIf(!onPath('nginx'))('nginx reloads (SIGHUP)', () => {
  it('passes gateway-reload-http-no-keepalive', async () => {
    const r = await runCase('gateway-reload-http-no-keepalive', 'nginx');
    expectPass(r);
    expectReloaded(r, true);
  });

  it('fails gateway-reload-http by keepAliveClosedPolitely: the retired workers close idle keep-alive connections unannounced', async () => {
    expectIdleClosesOnly(await runCase('gateway-reload-http', 'nginx'));
  });
});

/**
 * Caddy binds a new listening socket at every reload and then closes the old one, and Linux resets the
 * connections already queued on the socket it closes: a handshake completed in that moment fails
 * (https://github.com/caddyserver/caddy/issues/5255; docs/campaign.md). Caddy's race, not the
 * harness's, and rare (1 run in 60 at load average 1 to 4; once in a CI run): such a run fails by a
 * few requests cut during the reload, and by nothing else.
 */
function expectPassOrListenerSwapRace(r: ScenarioResult): void {
  if (r.verdict !== 'fail') return expectPass(r);
  expect(r.assertions.filter((a) => a.verdict === 'fail').map((a) => a.name), describeResult(r)).toEqual(['noFailedRequests']);
  const failed = r.assertions.find((a) => a.name === 'noFailedRequests')?.message;
  expect(failed, describeResult(r)).toMatch(/^[1-3] of [\d,]+ requests failed \(\d+ (reset|eof)(, \d+ (reset|eof))?\); first at t=[\d.]+ s\b.* after reload of gateway-1/);
}

describe.skipIf(!onPath('caddy'))('Caddy reloads (POST /load on its admin socket)', () => {
  it('passes gateway-reload-http-no-keepalive (but for its own listener-swap race)', async () => {
    const r = await runCase('gateway-reload-http-no-keepalive', 'caddy');
    expectPassOrListenerSwapRace(r);
    expectReloaded(r, false);
  });

  it('fails gateway-reload-http by keepAliveClosedPolitely: the old servers close idle keep-alive connections unannounced', async () => {
    expectIdleClosesOnly(await runCase('gateway-reload-http', 'caddy'));
  });
});
