// `zerodrop/vitest`: a team's `npm test` runs the drain scenarios as vitest tests.
//
//   // drain.test.ts
//   import { drainSuite } from 'zerodrop/vitest';
//   import config from '../zerodrop.config.ts';
//   drainSuite(config);
//
// One test per scenario x profile, named `zerodrop > <profile> > <scenario>` so that
// `vitest -t "nginx > gateway-delete-http"` selects one, on every vitest major (name-filter.ts); a
// filter that names the suite but selects none of its tests fails the file. A failed or inconclusive pair fails its test
// with the assertions' own messages (the pod and the phase of each failure); a skipped pair is a
// skipped test with its reason. The reports (HTML, results.json, JUnit, conformance YAML) are written
// into `reportDir` (default `reports`) when the suite ends; reporter modules the config names hear
// the suite as they hear a run. The provider's cluster is opened once for
// the suite (beforeAll) and torn down after it (afterAll): `provider: 'kind'` is the only change
// between the local provider and a kind cluster.

import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { openRun, planReporters, planRun, type OpenRun } from '../api/run.ts';
import type { ZerodropConfig } from '../config/config.ts';
import { allReporters, type ReporterName } from '../report/reporters/index.ts';
import type { RunResult, ScenarioResult } from '../report/results.ts';
import { checkNameFilter, testNamePattern } from './name-filter.ts';

export interface DrainSuiteOptions {
  /** The outer describe() name (default `zerodrop`). */
  title?: string;
  /** Each pair's test timeout in ms (default 5 minutes locally, 30 on a cluster, 60 with `nightly`). */
  testTimeoutMs?: number;
  /** How long opening and tearing down the provider may take (default 20 minutes: a kind cluster is created in beforeAll). */
  setupTimeoutMs?: number;
}

const MINUTE = 60_000;

/** Registers the config's scenario x profile pairs as vitest tests. Bad config throws here, naming the field. */
export function drainSuite(config: ZerodropConfig = {}, options: DrainSuiteOptions = {}): void {
  const plan = planRun(config, { source: 'drainSuite config' });
  const reportDir = resolve(plan.reportDir ?? 'reports');
  const testTimeout = options.testTimeoutMs ?? (plan.nightly ? 60 : plan.provider === 'local' ? 5 : 30) * MINUTE;
  const setupTimeout = options.setupTimeoutMs ?? 20 * MINUTE;
  let open: OpenRun | undefined;
  let reporter: ReturnType<typeof allReporters> | undefined;
  const written: Partial<Record<ReporterName, string>> = {};
  const results: ScenarioResult[] = [];
  // With results.json among the reports, each pair's requests go to its records file as they arrive,
  // numbered by attempt (a retried test gets a file of its own), as `zerodrop run` does.
  const recordsDir = plan.reporters.includes('json') ? reportDir : undefined;
  let attempts = 0;
  let shape: Omit<RunResult, 'scenarios' | 'startedAt' | 'durationMs'> | undefined;
  const startedAt = new Date();
  const started = performance.now();

  const title = options.title ?? 'zerodrop';
  checkNameFilter(testNamePattern(), title, plan.profiles.flatMap((p) => plan.scenarios.map((s) => ({ profile: p.name, scenario: s.id }))));

  describe(title, () => {
    beforeAll(async () => {
      reporter = allReporters(await planReporters(plan, reportDir, written));
      open = await openRun(plan, { log: (line) => console.log(line) });
      await reporter.onBegin({ provider: plan.provider, pairs: plan.profiles.flatMap((p) => plan.scenarios.map((s) => ({ scenario: s.id, profile: p.name }))) });
    }, setupTimeout);

    afterAll(async () => {
      try {
        if (shape && results.length > 0) {
          const run: RunResult = {
            ...shape,
            ...(config.implementation ? { implementation: config.implementation } : {}),
            startedAt: startedAt.toISOString(),
            durationMs: Math.round(performance.now() - started),
            scenarios: results,
          };
          await reporter?.onEnd(run, { reportDir });
          if (written.html) console.log(`zerodrop report: ${written.html}`);
        }
      } finally {
        await open?.[Symbol.asyncDispose]();
      }
    }, setupTimeout);

    for (const profile of plan.profiles) {
      for (const scenario of plan.scenarios) {
        // `<profile> > <scenario>` as one name: see name-filter.ts.
        it(`${profile.name} > ${scenario.id}`, async (ctx) => {
          if (!open) throw new Error(`the ${plan.provider} provider did not open; see the error of beforeAll`);
          attempts++;
          const records = recordsDir !== undefined ? { recordsDir, recordsIndex: attempts } : {};
          const run = await open.runPairs([{ scenario: scenario.id, profile: profile.name }], { signal: ctx.signal, ...(reporter ? { reporter } : {}) }, records);
          const { scenarios, ...rest } = run;
          shape ??= { tool: rest.tool, provider: rest.provider, ...(rest.mode ? { mode: rest.mode } : {}) };
          const result = scenarios[0];
          if (!result) throw new Error(`${scenario.id} [${profile.name}]: no result`);
          results.push(result);
          if (result.verdict === 'skipped') ctx.skip(result.reason);
          if (result.verdict !== 'pass') throw new DrainVerdictError(result);
        }, testTimeout);
      }
    }
  });
}

/** A pair that did not pass: the message is the assertions' own, as the CLI prints them. */
export class DrainVerdictError extends Error {
  readonly result: ScenarioResult;
  constructor(result: ScenarioResult) {
    super(verdictMessage(result));
    this.name = result.verdict === 'fail' ? 'DrainFailure' : 'DrainInconclusive';
    this.result = result;
  }
}

export function verdictMessage(r: ScenarioResult): string {
  const lines = [`${r.id} [${r.profile}] ${r.verdict}${r.reason ? `: ${r.reason}` : ''}`];
  for (const a of r.assertions) if (a.verdict !== 'pass') lines.push(`  ${a.verdict} ${a.name}: ${a.message}`);
  return lines.join('\n');
}
