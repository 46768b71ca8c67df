#!/usr/bin/env node
// `npm run campaign -- --runs N`: runs the local catalog N times against every profile and counts,
// per scenario x profile, how often each verdict came out. A harness is only worth its verdicts: any
// scenario x profile whose verdict changes from one run to the next is flagged as a disagreement.
// Controls are included (they must fail every run); profiles whose binary is missing are skipped.

import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Verdict } from '../model/verdict.ts';
import { profiles as allProfiles } from '../profiles/index.ts';
import { runMatrix } from '../runner/run-matrix.ts';
import type { ScenarioResult } from '../report/results.ts';
import { catalog } from '../scenarios/index.ts';
import { UsageError } from './usage-error.ts';
import { parseFlags } from './flags.ts';
import { profilesNamed, scenariosNamed } from './args.ts';
import type { Profile } from '../profiles/profile.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { reportDirProblem } from './checks.ts';

export interface CampaignRow {
  scenario: string;
  profile: string;
  counts: Record<Verdict, number>;
  /** True when not every run gave the same verdict. */
  disagreement: boolean;
  /** Each run whose verdict differed from the first run's, with why, so a disagreement can be diagnosed. */
  outliers: { run: number; verdict: Verdict; why: string }[];
  /** The first run's verdict, the one outliers differ from. */
  first?: Verdict;
}

/** Counts one run's verdict; returns the outlier entry when it differs from the pair's first verdict. */
export function tally(
  rows: Map<string, CampaignRow>,
  scenario: string,
  profile: string,
  verdict: Verdict,
  run = 0,
  why = '',
): CampaignRow['outliers'][number] | undefined {
  const key = `${scenario}\u0000${profile}`;
  let row = rows.get(key);
  if (!row) {
    row = { scenario, profile, counts: { pass: 0, fail: 0, inconclusive: 0, skipped: 0 }, disagreement: false, outliers: [], first: verdict };
    rows.set(key, row);
  }
  row.counts[verdict]++;
  row.disagreement = Object.values(row.counts).filter((n) => n > 0).length > 1;
  if (verdict === row.first) return undefined;
  const outlier = { run, verdict, why };
  row.outliers.push(outlier);
  return outlier;
}

/** The reason a result came out as it did: its first assertion with that verdict, or the run's reason. */
function whyOf(result: ScenarioResult): string {
  const assertion = result.assertions.find((a) => a.verdict === result.verdict && a.verdict !== 'pass');
  return assertion ? `${assertion.name}: ${assertion.message}` : (result.reason ?? '');
}

export function formatCampaign(rows: readonly CampaignRow[], runs: number): string {
  const width = Math.max(...rows.map((r) => `${r.scenario} [${r.profile}]`.length), 10);
  const lines = [`${'scenario [profile]'.padEnd(width)}  pass  fail  inconc  skip`];
  for (const r of rows) {
    const c = r.counts;
    const cells = [c.pass, c.fail, c.inconclusive, c.skipped].map((n, i) => String(n).padStart(i === 2 ? 6 : 4));
    lines.push(`${`${r.scenario} [${r.profile}]`.padEnd(width)}  ${cells.join('  ')}${r.disagreement ? '  DISAGREEMENT' : ''}`);
  }
  const flagged = rows.filter((r) => r.disagreement).length;
  lines.push(`\n${runs} run(s), ${rows.length} scenario x profile pairs, ${flagged} with disagreement`);
  return lines.join('\n');
}

export interface CampaignArgs {
  runs: number;
  reportDir: string;
  /** The whole catalog (controls included) unless --scenario narrows it. */
  scenarios: readonly ScenarioDefinition[];
  /** Every profile unless --profile narrows it. */
  profiles: readonly Profile[];
}

/** The campaign's flags, checked before anything runs. */
export function parseCampaignArgs(argv: string[]): CampaignArgs {
  const { values } = parseFlags('campaign', argv, {
    runs: { type: 'string', default: '20' },
    'report-dir': { type: 'string', default: 'reports' },
    scenario: { type: 'string', multiple: true },
    profile: { type: 'string', multiple: true },
  });
  const runs = /^\d+$/.test(values.runs) ? Number(values.runs) : NaN;
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) throw new UsageError(`--runs ${values.runs}: must be a whole number from 1 to 1000`);
  const problem = reportDirProblem(values['report-dir']);
  if (problem !== undefined) throw new UsageError(`--report-dir ${JSON.stringify(values['report-dir'])}: ${problem}`);
  return {
    runs,
    reportDir: values['report-dir'],
    // Narrowing is how a flagged pair is run again on its own: --scenario X --profile Y --runs 20.
    scenarios: values.scenario ? scenariosNamed(values.scenario) : catalog,
    profiles: values.profile ? profilesNamed(values.profile) : allProfiles,
  };
}

async function writeCampaign(reportDir: string, campaign: { runs: number; of: number; durationMs: number; rows: CampaignRow[] }): Promise<void> {
  const dir = resolve(reportDir);
  await mkdir(dir, { recursive: true });
  await writeFile(resolve(dir, 'campaign.json'), `${JSON.stringify(campaign, null, 2)}\n`);
}

async function main(argv: string[]): Promise<number> {
  const { runs, reportDir, scenarios, profiles } = parseCampaignArgs(argv);

  const controller = new AbortController();
  const stop = () => controller.abort(new Error('interrupted'));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  const rows = new Map<string, CampaignRow>();
  const started = performance.now();
  for (let i = 1; i <= runs; i++) {
    const run = await runMatrix({
      provider: 'local',
      scenarios,
      profiles,
      overrides: {},
      nightly: false,
      signal: controller.signal,
      keepTimeline: false,
    });
    for (const s of run.scenarios) {
      const outlier = tally(rows, s.id, s.profile, s.verdict, i, whyOf(s));
      if (outlier) console.log(`  run ${i}: ${s.id} [${s.profile}] ${outlier.verdict}, first run ${rows.get(`${s.id}\u0000${s.profile}`)?.first}: ${outlier.why}`);
    }
    const flagged = [...rows.values()].filter((r) => r.disagreement).length;
    console.log(`run ${i}/${runs} done in ${(run.durationMs / 1000).toFixed(0)} s; ${flagged} disagreement(s) so far`);
    // Written after every run, so an interrupted or crashed campaign still leaves what it measured.
    await writeCampaign(reportDir, { runs: i, of: runs, durationMs: Math.round(performance.now() - started), rows: [...rows.values()] });
  }
  const table = [...rows.values()];
  console.log(`\n${formatCampaign(table, runs)}`);
  return table.some((r) => r.disagreement) ? 1 : 0;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      if (error instanceof UsageError) {
        console.error(`campaign: ${error.message}`);
        process.exitCode = 2;
      } else if (error instanceof Error && error.message === 'interrupted') {
        process.exitCode = 130;
      } else {
        console.error('campaign: internal error:', error);
        process.exitCode = 3;
      }
    },
  );
}
