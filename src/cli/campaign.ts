// `zerodrop campaign --runs N`: runs the local catalog N times against every profile and counts,
// per scenario x profile, how often each verdict came out. A harness is only worth its verdicts: any
// scenario x profile whose verdict changes from one run to the next is flagged as a disagreement, and
// any run that judges a pair against its expectation (a mutant passing, a drain-correct system
// failing: src/scenarios/expected.ts) as unexpected. Controls are included (they must fail every
// run); profiles whose binary is missing are skipped. In a project with zerodrop.config.ts, the
// config's profiles (its own included) and scenarios are the default selection, and --ablations
// takes the drain settings of its own profiles too.

import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { Verdict } from '../model/verdict.ts';
import { ablatedProfiles, profiles as allProfiles } from '../profiles/index.ts';
import { isDefinedProfile } from '../profiles/define.ts';
import { configFlag, definedProfiles, loadConfig, type ZerodropConfig } from '../config/config.ts';
import { openRun, planRun } from '../api/run.ts';
import type { ScenarioResult } from '../report/results.ts';
import { catalog } from '../scenarios/index.ts';
import { UsageError } from '../config/usage-error.ts';
import { parseFlags } from '../config/flags.ts';
import { CAMPAIGN_FLAGS } from './command-flags.ts';
import { profilesNamed, scenariosNamed } from '../config/args.ts';
import type { Profile } from '../profiles/profile.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { reportDirProblem } from '../config/checks.ts';
import { expectedVerdict, type JudgedVerdict } from '../scenarios/expected.ts';

export interface CampaignRow {
  scenario: string;
  profile: string;
  counts: Record<Verdict, number>;
  /** True when not every run gave the same verdict. */
  disagreement: boolean;
  /** The verdict the pair must have when it is judged (src/scenarios/expected.ts). */
  expected?: JudgedVerdict;
  /** Runs that judged the pair (pass or fail) the other way than expected: a false pass or a false fail. */
  unexpected: number;
  /** Each run whose verdict differed from the first run's, with why, so a disagreement can be diagnosed. */
  outliers: { run: number; verdict: Verdict; why: string }[];
  /** The first run's verdict, the one outliers differ from, and why it came out so. */
  first?: Verdict;
  firstWhy?: string;
  /** Every run that judged the pair (pass, fail or inconclusive), with why when it was not a pass: the failures' counts run by run. */
  runs: { run: number; verdict: Verdict; why?: string; seed?: number }[];
}

export interface CampaignPair {
  scenario: string;
  profile: string;
  expected?: JudgedVerdict;
}

/**
 * Counts one run's verdict. Returns what is worth telling at once: the run's verdict when it differs
 * from the pair's first (a disagreement) or from what the pair must have (unexpected).
 */
export function tally(
  rows: Map<string, CampaignRow>,
  pair: CampaignPair,
  verdict: Verdict,
  { run = 0, why = '', seed }: { run?: number; why?: string; seed?: number } = {},
): { run: number; verdict: Verdict; why: string; unexpected: boolean } | undefined {
  const key = `${pair.scenario}\u0000${pair.profile}`;
  let row = rows.get(key);
  if (!row) {
    row = { ...pair, counts: { pass: 0, fail: 0, inconclusive: 0, skipped: 0 }, disagreement: false, unexpected: 0, outliers: [], first: verdict, firstWhy: why, runs: [] };
    rows.set(key, row);
  }
  row.counts[verdict]++;
  // The seed replays the run's load balancer programming (zerodrop run --seed).
  if (verdict !== 'skipped') row.runs.push({ run, verdict, ...(why !== '' && verdict !== 'pass' ? { why } : {}), ...(seed !== undefined ? { seed } : {}) });
  row.disagreement = Object.values(row.counts).filter((n) => n > 0).length > 1;
  const unexpected = pair.expected !== undefined && (verdict === 'pass' || verdict === 'fail') && verdict !== pair.expected;
  if (unexpected) row.unexpected++;
  const outlier = verdict !== row.first;
  if (outlier) row.outliers.push({ run, verdict, why });
  return outlier || unexpected ? { run, verdict, why, unexpected } : undefined;
}

/**
 * Why a result came out as it did: every assertion with its verdict, or the run's reason. All of
 * them, not the first: an inconclusive run may have lost its load and its harness loop together,
 * and which of the two it was is what diagnosing a disagreement needs.
 */
export function whyOf(result: Pick<ScenarioResult, 'verdict' | 'assertions' | 'reason'>): string {
  const decided = result.assertions.filter((a) => a.verdict === result.verdict && a.verdict !== 'pass');
  if (decided.length === 0) return result.reason ?? '';
  return decided.map((a) => `${a.name}: ${a.message}`).join('; ');
}

/**
 * The table of the pairs that were judged at least once, then a summary against the expectations.
 * Pairs skipped in every run (a gateway profile on a backend scenario, a missing binary) are counted,
 * with their reasons, not listed.
 */
export function formatCampaign(rows: readonly CampaignRow[], runs: number): string {
  const judged = rows.filter((r) => r.counts.skipped < runs);
  const skipped = rows.filter((r) => !judged.includes(r));
  const label = (r: CampaignRow) => `${r.scenario} [${r.profile}]`;
  const width = Math.max(...judged.map((r) => label(r).length), 18);
  const lines = [`${'scenario [profile]'.padEnd(width)}  pass  fail  inconc  skip  expect`];
  for (const r of judged) {
    const c = r.counts;
    const cells = [c.pass, c.fail, c.inconclusive, c.skipped].map((n, i) => String(n).padStart(i === 2 ? 6 : 4));
    const flags = [r.disagreement ? 'DISAGREEMENT' : '', r.unexpected > 0 ? `UNEXPECTED (${r.unexpected})` : ''].filter(Boolean).join('  ');
    lines.push(`${label(r).padEnd(width)}  ${cells.join('  ')}  ${(r.expected ?? '-').padEnd(6)}${flags ? `  ${flags}` : ''}`.trimEnd());
  }
  lines.push('');
  for (const want of ['pass', 'fail'] as const) {
    const expecting = judged.filter((r) => r.expected === want);
    const every = expecting.filter((r) => r.counts[want] === runs).length;
    lines.push(`expected to ${want}: ${expecting.length} pairs, ${every} ${want === 'pass' ? 'passed' : 'failed'} in every run`);
  }
  if (skipped.length > 0) {
    const reasons = [...new Set(skipped.map((r) => r.firstWhy).filter((w): w is string => !!w))];
    const shown = reasons.slice(0, 3).map((w) => `"${w}"`).join('; ');
    lines.push(`skipped in every run: ${skipped.length} pairs${shown ? ` (${shown}${reasons.length > 3 ? `; ${reasons.length - 3} more reasons` : ''})` : ''}`);
  }
  const flagged = rows.filter((r) => r.disagreement).length;
  const unexpected = rows.filter((r) => r.unexpected > 0).length;
  lines.push(`\n${runs} run(s), ${rows.length} scenario x profile pairs, ${flagged} with disagreement, ${unexpected} with an unexpected verdict`);
  return lines.join('\n');
}

export interface CampaignArgs {
  runs: number;
  reportDir: string;
  /** The whole catalog (controls included) unless --scenario narrows it. */
  scenarios: readonly ScenarioDefinition[];
  /** Every profile unless --profile narrows it. */
  profiles: readonly Profile[];
  /**
   * --ablations: the ablated twins of the selected profiles (src/profiles/ablation.ts), each run on
   * the selected scenarios that must catch it, and expected to fail there every run.
   */
  ablations: readonly Profile[];
}

/** The campaign's flags over the config's selection (`config`: zerodrop.config.ts), checked before anything runs. */
export function parseCampaignArgs(argv: string[], config: ZerodropConfig = {}): CampaignArgs {
  const { values } = parseFlags('campaign', argv, CAMPAIGN_FLAGS);
  const runs = /^\d+$/.test(values.runs) ? Number(values.runs) : NaN;
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) throw new UsageError(`--runs ${values.runs}: must be a whole number from 1 to 1000`);
  const problem = reportDirProblem(values['report-dir']);
  if (problem !== undefined) throw new UsageError(`--report-dir ${JSON.stringify(values['report-dir'])}: ${problem}`);
  const defined = definedProfiles(config);
  const configScenarios = config.scenarios;
  const scenarios = values.scenario ? scenariosNamed(values.scenario) : configScenarios ? scenariosNamed(configScenarios) : catalog;
  const configProfiles = config.profiles?.map((p) => (typeof p === 'string' ? p : p.name));
  const profiles = values.profile ? profilesNamed(values.profile, defined) : configProfiles ? profilesNamed(configProfiles, defined) : allProfiles;
  const candidates = [...ablatedProfiles, ...defined.filter((p) => p.ablation !== undefined)];
  const ablations = values.ablations
    ? candidates.filter((a) => profiles.some((p) => p.name === a.ablation?.profile) && scenarios.some((s) => a.ablation?.caughtBy.includes(s.id)))
    : [];
  if (values.ablations && ablations.length === 0) {
    const withSettings = [...allProfiles, ...defined].filter((p) => p.drainSettings).map((p) => p.name);
    throw new UsageError(`--ablations: none of the selected profiles has a drain setting caught by a selected scenario; profiles with drain settings: ${withSettings.join(', ')}`);
  }
  // Narrowing is how a flagged pair is run again on its own: --scenario X --profile Y --runs 20.
  return { runs, reportDir: values['report-dir'], scenarios, profiles, ablations };
}

/** The runs of one campaign round: the selection, then each ablation on the scenarios that catch it. */
export function campaignRounds(args: Pick<CampaignArgs, 'scenarios' | 'profiles' | 'ablations'>): { scenarios: readonly ScenarioDefinition[]; profiles: readonly Profile[] }[] {
  return [
    { scenarios: args.scenarios, profiles: args.profiles },
    ...args.ablations.map((a) => ({ scenarios: args.scenarios.filter((s) => a.ablation?.caughtBy.includes(s.id)), profiles: [a] })),
  ];
}

function pairOf(scenarioId: string, profileName: string, scenarios: readonly ScenarioDefinition[], profiles: readonly Profile[]): CampaignPair {
  const scenario = scenarios.find((s) => s.id === scenarioId);
  const profile = profiles.find((p) => p.name === profileName);
  return { scenario: scenarioId, profile: profileName, ...(scenario && profile ? { expected: expectedVerdict(scenario, profile) } : {}) };
}

async function writeCampaign(reportDir: string, campaign: { runs: number; of: number; durationMs: number; rows: CampaignRow[] }): Promise<void> {
  const dir = resolve(reportDir);
  await mkdir(dir, { recursive: true });
  await writeFile(resolve(dir, 'campaign.json'), `${JSON.stringify(campaign, null, 2)}\n`);
}

/** `zerodrop campaign`: the campaign over the config file's selection and the flags. */
export async function campaign(argv: string[]): Promise<number> {
  const { config } = await loadConfig(configFlag(argv));
  const args = parseCampaignArgs(argv, config);
  const { scenarios, profiles } = args;

  const controller = new AbortController();
  const stop = () => controller.abort(new Error('interrupted'));
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);

  // The same path as `zerodrop run` (the programmatic API): the run's state record lets `zerodrop
  // clean` find what a crashed campaign left.
  // Profiles of the config file go as themselves (their names mean nothing to the catalog).
  const selection = [...profiles, ...args.ablations].map((p) => (isDefinedProfile(p as unknown) ? p : p.name));
  const plan = planRun({ provider: 'local', scenarios: scenarios.map((s) => s.id), profiles: selection, ...(config.set ? { set: config.set } : {}) }, { source: 'campaign' });
  try {
    return await rounds(args, plan, controller.signal);
  } catch (error) {
    if (controller.signal.aborted) return 130;
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

// Apart from campaign(): tsc leaves `.ts` specifiers unrewritten in a function it downlevels for `using`.
async function rounds(args: CampaignArgs, plan: ReturnType<typeof planRun>, signal: AbortSignal): Promise<number> {
  const { runs, reportDir, scenarios } = args;
  const profiles = [...args.profiles, ...args.ablations];
  await using open = await openRun(plan, { signal });
  const rows = new Map<string, CampaignRow>();
  const started = performance.now();
  for (let i = 1; i <= runs; i++) {
    const runStarted = performance.now();
    const results: ScenarioResult[] = [];
    for (const round of campaignRounds(args)) {
      const pairs = round.scenarios.flatMap((s) => round.profiles.map((p) => ({ scenario: s.id, profile: p.name })));
      const run = await open.runPairs(pairs, { signal }, { keepTimeline: false });
      results.push(...run.scenarios);
    }
    for (const s of results) {
      const told = tally(rows, pairOf(s.id, s.profile, scenarios, profiles), s.verdict, { run: i, why: whyOf(s), ...(s.seed !== undefined ? { seed: s.seed } : {}) });
      if (told) {
        const against = told.unexpected ? `expected ${rows.get(`${s.id}\u0000${s.profile}`)?.expected}` : `first run ${rows.get(`${s.id}\u0000${s.profile}`)?.first}`;
        console.log(`  run ${i}: ${s.id} [${s.profile}] ${told.verdict}, ${against}: ${told.why}`);
      }
    }
    const all = [...rows.values()];
    const flagged = all.filter((r) => r.disagreement).length;
    const unexpected = all.filter((r) => r.unexpected > 0).length;
    console.log(`run ${i}/${runs} done in ${((performance.now() - runStarted) / 1000).toFixed(0)} s; ${flagged} disagreement(s), ${unexpected} unexpected so far`);
    // Written after every run, so an interrupted or crashed campaign still leaves what it measured.
    await writeCampaign(reportDir, { runs: i, of: runs, durationMs: Math.round(performance.now() - started), rows: [...rows.values()] });
  }
  const table = [...rows.values()];
  console.log(`\n${formatCampaign(table, runs)}`);
  return table.some((r) => r.disagreement || r.unexpected > 0) ? 1 : 0;
}

