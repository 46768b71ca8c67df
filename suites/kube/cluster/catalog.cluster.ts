// The catalog on a cluster (kind or netns, as the globalSetup chose): the same scenarios, assertions
// and reports as `npm test`, only the provider differs. The expectations are the local suites' (suites/scenarios, suites/gateways): every
// scenario passes on the reference and drain-correct profiles, the control fails, and each mutant or
// naive twin fails by the assertions that catch it there. A pair the local suites make no claim
// about is not run here either: a test without an expectation would be a pass that means nothing.
// Combinations a cluster cannot run are skipped with the reason.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { dropResult } from '../../../src/report/collect.ts';
import { findProfile } from '../../../src/profiles/index.ts';
import { fixturesOf, ManifestError, renderTopology } from '../../../src/providers/kube/manifests.ts';
import { packageRoot } from '../../../src/paths.ts';
import { optionsFor, runMatrix } from '../../../src/runner/run-matrix.ts';
import { catalog } from '../../../src/scenarios/index.ts';
import { eligibility } from '../../../src/runner/eligibility.ts';
import type { OptionValues } from '../../../src/model/verdict.ts';
import { describeResult } from '../../helpers/run-case.ts';
import { clusterSession, providerName, selectedProfiles, skipReason, title } from './context.ts';

const nightly = process.env['ZERODROP_NIGHTLY'] === '1';
const profileNames = selectedProfiles(['reference', 'mutant-exit-on-sigterm', 'mutant-refuse-after-sigterm', 'mutant-hang-until-killed']);

/** Mutant x scenario pairs the local suites prove failing, with the assertions that must fail. */
const EXPECTED_FAILURES: { scenario: string; profile: string; failedBy: string[]; overrides?: OptionValues }[] = [
  { scenario: 'backend-delete-http', profile: 'mutant-exit-on-sigterm', failedBy: ['noFailedRequests'] },
  { scenario: 'backend-delete-http', profile: 'mutant-hang-until-killed', failedBy: ['notKilled', 'podExitWithin'] },
  { scenario: 'backend-idle-exit', profile: 'mutant-hang-until-killed', failedBy: ['notKilled'] },
  { scenario: 'backend-long-request', profile: 'mutant-exit-on-sigterm', failedBy: ['completesInFlight', 'noFailedRequests'], overrides: { requestMs: 3000 } },
  { scenario: 'backend-long-request', profile: 'mutant-hang-until-killed', failedBy: ['notKilled'], overrides: { requestMs: 2000, graceSeconds: 4 } },
  { scenario: 'backend-rollout-http', profile: 'mutant-exit-on-sigterm', failedBy: ['noFailedRequests'] },
  { scenario: 'backend-sigterm-keeps-accepting', profile: 'mutant-refuse-after-sigterm', failedBy: ['noFailedRequests'] },
  { scenario: 'gateway-http2-goaway', profile: 'mutant-gateway-no-goaway', failedBy: ['noFailedRequests'] },
  // The relay reads the legacy Endpoints API, where a terminating pod is no address at all: its
  // packets are lost while the pod still serves (suites/udp/backend-scale-to-zero-udp.test.ts).
  { scenario: 'backend-scale-to-zero-udp', profile: 'mutant-endpoints-api', failedBy: ['noLostPackets'] },
  // A node drain without a budget, one replica: the only pod is evicted at once, serves until its
  // grace period ends, and requests fail until its slow-starting replacement is ready on another
  // node. With the budget (the default) it passes. suites/scenarios/node-drain-http.test.ts proves
  // the same pair on the local provider's modelled nodes.
  { scenario: 'node-drain-http', profile: 'reference', failedBy: ['noFailedRequests'], overrides: { replicas: 1, minAvailable: 0 } },
  { scenario: 'node-drain-http', profile: 'mutant-exit-on-sigterm', failedBy: ['noFailedRequests'] },
  // Not proven by any local suite (a chart runs only on a cluster): expected from Envoy Gateway's
  // documentation, where a zero drain lets Envoy exit with its keep-alive connections open. The
  // nightly run (ZERODROP_PROFILES=envoy-gateway-naive) is the first to check it.
  { scenario: 'gateway-delete-http', profile: 'envoy-gateway-naive', failedBy: ['noFailedRequests'] },
  ...['nginx', 'haproxy', 'caddy'].flatMap((system) => [
    { scenario: 'gateway-delete-http', profile: `${system}-naive`, failedBy: ['noFailedRequests'] },
    { scenario: 'gateway-slow-lb', profile: `${system}-naive`, failedBy: ['noFailedRequests'] },
  ]),
];

/** Why this scenario x profile cannot run on a cluster, or undefined when it can. */
function unplayable(id: string, profileName: string): string | undefined {
  const def = catalog.find((d) => d.id === id);
  const profile = findProfile(profileName);
  if (!def || !profile) return `unknown scenario or profile ${id} x ${profileName}`;
  // What the run itself would skip (a chart-owned dataplane scaled, a drain on a cluster zerodrop did not create).
  const capabilities = { multiNode: true, udp: true, nodeDrain: inject('clusterCreated'), containerStopSignals: inject('clusterStopSignals'), meshes: true };
  const decided = eligibility(def, profile, { session: { name: providerName, capabilities }, options: optionsFor(def, {}, nightly) });
  if (!decided.runs) return decided.reason;
  try {
    const topology = decided.scenario.topology;
    const fixtures = Object.fromEntries(fixturesOf(topology).map((p) => [p, readFileSync(join(packageRoot, p), 'utf8')]));
    renderTopology(topology, { namespace: 'probe', runId: 'probe', fixtures });
    return undefined;
  } catch (err) {
    if (err instanceof ManifestError) return err.message;
    throw err;
  }
}

async function runOnCluster(scenarioId: string, profileName: string, overrides: OptionValues = {}) {
  const def = catalog.find((d) => d.id === scenarioId);
  const profile = findProfile(profileName);
  if (!def || !profile) throw new Error(`unknown ${scenarioId} x ${profileName}`);
  await using session = clusterSession();
  const run = await runMatrix({
    provider: providerName,
    session,
    scenarios: [def],
    profiles: [profile],
    overrides,
    nightly,
    signal: AbortSignal.timeout(25 * 60_000),
  });
  const [result] = run.scenarios;
  if (!result) throw new Error('no result');
  // Into the run's zerodrop report (suites/global-setup.ts writes it when the run ends).
  await dropResult(inject('zerodropCollectDir'), result, providerName);
  return result;
}

describe.skipIf(skipReason !== '')(title('catalog'), () => {
  const correct = profileNames.filter((name) => {
    const kind = findProfile(name)?.kind;
    return kind === 'reference' || kind === 'system';
  });
  for (const def of catalog) {
    if (def.control) continue;
    for (const name of correct) {
      const why = skipReason ? undefined : unplayable(def.id, name);
      it.skipIf(why !== undefined)(`${def.id} passes on ${name}${why ? ` (skipped: ${why})` : ''}`, async () => {
        const result = await runOnCluster(def.id, name);
        expect(result.verdict, describeResult(result)).toBe('pass');
      });
    }
  }

  for (const def of catalog.filter((d) => d.control)) {
    it(`${def.id} (control) fails on reference`, async () => {
      const result = await runOnCluster(def.id, 'reference');
      expect(result.verdict, describeResult(result)).toBe('fail');
    });
  }

  for (const c of EXPECTED_FAILURES.filter((e) => profileNames.includes(e.profile))) {
    const why = skipReason ? undefined : unplayable(c.scenario, c.profile);
    it.skipIf(why !== undefined)(`${c.scenario} fails on ${c.profile} by ${c.failedBy.join(', ')}${why ? ` (skipped: ${why})` : ''}`, async () => {
      const result = await runOnCluster(c.scenario, c.profile, c.overrides);
      expect(result.verdict, describeResult(result)).toBe('fail');
      const failed = result.assertions.filter((a) => a.verdict === 'fail').map((a) => a.name);
      for (const name of c.failedBy) expect(failed, describeResult(result)).toContain(name);
    });
  }
});
