// Cross-validation (docs/benchmarks.md): the same scenario and profile, loaded once by the built-in generator
// and once by an independent client, must come to the same verdict: no failed request on a
// drain-correct gateway, failed requests on a naive one. hey is the client of the Envoy Gateway
// seed (004: `hey -c 100 -q 10`); gateway-delete-http has its shape (clients x 10 requests/s).

import { describe, expect, it } from 'vitest';
import type { LoadDriver } from '../../src/load/drivers.ts';
import { findProfile } from '../../src/profiles/index.ts';
import { missingRequirement } from '../../src/profiles/requirements.ts';
import type { ScenarioResult } from '../../src/report/results.ts';
import { runMatrix } from '../../src/runner/run-matrix.ts';
import { findScenario } from '../../src/scenarios/index.ts';
import { describeResult } from '../helpers/run-case.ts';

async function run(scenarioId: string, profileName: string, driver: LoadDriver): Promise<ScenarioResult> {
  const scenario = findScenario(scenarioId);
  const profile = findProfile(profileName);
  if (!scenario || !profile) throw new Error(`unknown ${scenario ? 'profile' : 'scenario'}`);
  const result = await runMatrix({
    provider: 'local',
    scenarios: [scenario],
    profiles: [profile],
    // The clients' shapes only: the long requests of the gateway scenarios are single requests the
    // built-in client sends under either driver, and the overlong ones are cut by design.
    overrides: { longRequests: 0, overlongRequests: 0 },
    nightly: false,
    driver,
    signal: AbortSignal.timeout(110_000),
  });
  const [r] = result.scenarios;
  if (!r) throw new Error('no result');
  return r;
}

function failedRequests(r: ScenarioResult): number {
  return (r.timeline?.requests ?? []).filter((q) => q.outcome !== 'ok').length;
}

function summary(r: ScenarioResult): string {
  const requests = r.timeline?.requests ?? [];
  return `${describeResult(r)}\n  ${requests.length} requests, ${failedRequests(r)} failed: ${[...new Set(requests.filter((q) => q.outcome !== 'ok').map((q) => q.error ?? q.outcome))].slice(0, 3).join(' | ')}`;
}

const nginxMissing = missingRequirement(findProfile('nginx')!);

// The naive case runs without keep-alive: hey (Go net/http) resends an idempotent GET once when a
// reused keep-alive connection closes before any response byte, which hides exactly the failures
// nginx-naive causes on keep-alive connections at SIGTERM (measured: 5 EOF failures of 160 for the
// built-in generator, 1 of 650 for hey). With a fresh connection per request there is no resend,
// and both clients see the connections refused after SIGTERM.
describe.each([
  { scenario: 'gateway-delete-http', profile: 'reference', correct: true },
  { scenario: 'gateway-delete-http', profile: 'nginx', correct: true },
  { scenario: 'gateway-delete-http-no-keepalive', profile: 'nginx-naive', correct: false },
])('$scenario on $profile: built-in and hey agree', ({ scenario, profile, correct }) => {
  it.skipIf(profile.startsWith('nginx') && nginxMissing !== undefined)(correct ? 'no failed request with either client' : 'failed requests with both clients', async () => {
    const builtin = await run(scenario, profile, 'builtin');
    const hey = await run(scenario, profile, 'hey');
    const both = `built-in:\n${summary(builtin)}\nhey:\n${summary(hey)}`;
    // hey really ran: its command is on the Timeline and its requests carry none of the built-in generator's socket detail.
    expect(hey.timeline?.events.some((e) => e.kind === 'note' && e.detail?.['driver'] === 'hey'), both).toBe(true);
    // The loads hey cannot carry (a single request, a lagging node's bursts) are the built-in client's, and say so.
    const beside = new Set(hey.timeline?.events.filter((e) => e.kind === 'note' && e.detail?.['driver'] === 'builtin').map((e) => e.detail?.['load']));
    expect([...(hey.timeline?.requests ?? [])].filter((q) => !beside.has(q.load)).some((q) => q.localPort !== undefined), both).toBe(false);
    expect(hey.timeline?.requests.length ?? 0, both).toBeGreaterThan(50);
    const verdictOf = (r: ScenarioResult) => r.assertions.find((a) => a.name === 'noFailedRequests')?.verdict;
    if (correct) {
      expect([failedRequests(builtin), failedRequests(hey)], both).toEqual([0, 0]);
      expect([verdictOf(builtin), verdictOf(hey)], both).toEqual(['pass', 'pass']);
      // A loaded machine may make either run inconclusive (harness lag), never a failure.
      expect([builtin.verdict, hey.verdict], both).not.toContain('fail');
    } else {
      expect(failedRequests(builtin), both).toBeGreaterThan(0);
      expect(failedRequests(hey), both).toBeGreaterThan(0);
      expect([verdictOf(builtin), verdictOf(hey)], both).toEqual(['fail', 'fail']);
    }
  });
});

describe('a driver that does not fit the load', () => {
  it('makes the run inconclusive with the reason: never a silent run of the built-in generator', async () => {
    const r = await run('backend-delete-http', 'reference', 'hey');
    expect(r.verdict, describeResult(r)).toBe('inconclusive');
    expect(r.reason).toMatch(/hey needs a paced load/);
    // The load hey cannot drive sent nothing: no silent fallback to the built-in generator. What the
    // other loads had in flight when the run stopped is cut by the stop, so it judges nothing (the
    // run is inconclusive above, not failed).
    expect(r.timeline?.requests.filter((q) => q.load === 'http') ?? []).toHaveLength(0);
  });
});
