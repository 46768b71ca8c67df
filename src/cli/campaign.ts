// `zerodrop campaign --runs N`: runs the catalog N times against every profile and counts, per
// scenario x profile (and provider), how often each verdict came out. A harness is only worth its
// verdicts: any scenario x profile whose verdict changes from one run to the next is flagged as a
// disagreement, and any run that judges a pair against its expectation (a mutant passing, a
// drain-correct system failing: src/scenarios/expected.ts) as unexpected. Controls are included
// (they must fail every run); profiles whose binary is missing are skipped. In a project with
// zerodrop.config.ts, the config's profiles (its own included) and scenarios are the default
// selection, and --ablations takes the drain settings of its own profiles too. With several
// providers (--provider local,netns) each round runs on each, and a pair one provider passed and
// another failed is flagged too: the local model is only worth its speed if it judges as a real
// cluster does.

import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Verdict } from '../model/verdict.ts';
import { ablatedProfiles, profiles as allProfiles } from '../profiles/index.ts';
import { isDefinedProfile } from '../profiles/define.ts';
import { configFlag, definedProfiles, loadConfig, type ZerodropConfig } from '../config/config.ts';
import { checkPrerequisites, openRun, planRun, type OpenRun, type RunPlan } from '../api/run.ts';
import type { RunResult, ScenarioResult } from '../report/results.ts';
import { writeReports } from '../report/reporters/index.ts';
import { catalog } from '../scenarios/index.ts';
import { UsageError } from '../config/usage-error.ts';
import { parseFlags } from '../config/flags.ts';
import { CAMPAIGN_FLAGS } from './command-flags.ts';
import { parseProviderArgs, PROVIDER_SETTING_FLAGS, profilesNamed, scenariosNamed, type ProviderFlagValues } from '../config/args.ts';
import type { ProviderName, ProviderSettings } from '../providers/index.ts';
import { redact } from '../observe/redact.ts';
import type { Profile } from '../profiles/profile.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { reportDirProblem } from '../config/checks.ts';
import { expectedVerdict, type JudgedVerdict } from '../scenarios/expected.ts';
import { clusterSystemArgs, clusterSystemSettings } from '../config/cluster-system-args.ts';
import { gatewayClassProfile, isGatewayClassProfile } from '../scenarios/gateway-class-profile.ts';

export interface CampaignRow {
  scenario: string;
  profile: string;
  /** Where it ran: the counts of a pair are kept per provider. */
  provider: string;
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
  runs: { run: number; verdict: Verdict; why?: string; seed?: number; report?: string }[];
}

export interface CampaignPair {
  scenario: string;
  profile: string;
  /** Where it ran (default local): each provider keeps counts of its own. */
  provider?: string;
  expected?: JudgedVerdict;
}

/** The key of a pair's row in tally's map: one row per provider. */
export function rowKey(pair: Pick<CampaignPair, 'scenario' | 'profile' | 'provider'>): string {
  return `${pair.scenario}\u0000${pair.profile}${pair.provider !== undefined ? `\u0000${pair.provider}` : ''}`;
}

/**
 * Counts one run's verdict. Returns what is worth telling at once: the run's verdict when it differs
 * from the pair's first (a disagreement) or from what the pair must have (unexpected).
 */
export function tally(
  rows: Map<string, CampaignRow>,
  pair: CampaignPair,
  verdict: Verdict,
  { run = 0, why = '', seed, report }: { run?: number; why?: string; seed?: number; report?: string } = {},
): { run: number; verdict: Verdict; why: string; unexpected: boolean } | undefined {
  const key = rowKey(pair);
  let row = rows.get(key);
  if (!row) {
    row = { ...pair, provider: pair.provider ?? 'local', counts: { pass: 0, fail: 0, inconclusive: 0, skipped: 0 }, disagreement: false, unexpected: 0, outliers: [], first: verdict, firstWhy: why, runs: [] };
    rows.set(key, row);
  }
  row.counts[verdict]++;
  // The seed replays the run's load balancer programming (zerodrop run --seed).
  if (verdict !== 'skipped') row.runs.push({ run, verdict, ...(why !== '' && verdict !== 'pass' ? { why } : {}), ...(seed !== undefined ? { seed } : {}), ...(report !== undefined ? { report } : {}) });
  row.disagreement = Object.values(row.counts).filter((n) => n > 0).length > 1;
  const unexpected = pair.expected !== undefined && (verdict === 'pass' || verdict === 'fail') && verdict !== pair.expected;
  if (unexpected) row.unexpected++;
  const outlier = verdict !== row.first;
  if (outlier) row.outliers.push({ run, verdict, why });
  return outlier || unexpected ? { run, verdict, why, unexpected } : undefined;
}

/**
 * Whether a run's full report is kept: a verdict other than the pair's expected one (a false pass or
 * fail, or no verdict where one was due), or, for a pair with no expectation, other than its first
 * run's. Those are the runs a campaign exists to find, and their records (which request failed,
 * when, on which pod in which phase) are what diagnosing one needs; the rest keep their verdicts only.
 */
export function keepsReport(verdict: Verdict, expected: JudgedVerdict | undefined, first: Verdict | undefined): boolean {
  if (verdict === 'skipped') return false;
  const due = expected ?? first;
  return due !== undefined && verdict !== due;
}

/** Where a kept run's report goes, relative to the campaign's report directory. */
export function keptReportDir(run: number, provider: string, scenario: string, profile: string): string {
  return join('runs', String(run), provider, `${scenario}.${profile}`);
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

/** A scenario x profile with its row on each provider that ran it. */
export interface ProviderPair {
  scenario: string;
  profile: string;
  expected?: JudgedVerdict;
  /** By provider, in the order the providers ran. */
  rows: Map<string, CampaignRow>;
  /**
   * One provider passed the pair in some run that another failed in some run. Judged verdicts
   * only: an inconclusive or skipped run says nothing of the system under test.
   */
  providersDisagree: boolean;
}

/** The providers of the rows, in the order they first ran. */
export function providersOf(rows: readonly CampaignRow[]): string[] {
  return [...new Set(rows.map((r) => r.provider))];
}

/** The rows gathered by scenario x profile, in the order the pairs first ran. */
export function pairsAcrossProviders(rows: readonly CampaignRow[]): ProviderPair[] {
  const pairs = new Map<string, ProviderPair>();
  for (const row of rows) {
    const key = rowKey({ scenario: row.scenario, profile: row.profile });
    const pair = pairs.get(key) ?? { scenario: row.scenario, profile: row.profile, ...(row.expected ? { expected: row.expected } : {}), rows: new Map(), providersDisagree: false };
    pair.rows.set(row.provider, row);
    pairs.set(key, pair);
  }
  for (const pair of pairs.values()) {
    const all = [...pair.rows.values()];
    pair.providersDisagree = all.some((a) => a.counts.pass > 0 && all.some((b) => b !== a && b.counts.fail > 0));
  }
  return [...pairs.values()];
}

/** 1 when any pair's verdict changed between runs, came out against its expectation, or differed between providers; else 0. */
export function campaignExitCode(rows: readonly CampaignRow[]): 0 | 1 {
  if (rows.some((r) => r.disagreement || r.unexpected > 0)) return 1;
  return pairsAcrossProviders(rows).some((p) => p.providersDisagree) ? 1 : 0;
}

/** The reasons of the pairs skipped in every run, a few of them: why they could not run. */
function skippedLine(count: number, rows: readonly CampaignRow[]): string {
  const reasons = [...new Set(rows.map((r) => r.firstWhy).filter((w): w is string => !!w))];
  const shown = reasons.slice(0, 3).map((w) => `"${w}"`).join('; ');
  return `skipped in every run: ${count} pairs${shown ? ` (${shown}${reasons.length > 3 ? `; ${reasons.length - 3} more reasons` : ''})` : ''}`;
}

/**
 * The table of the pairs that were judged at least once, then a summary against the expectations.
 * Pairs skipped in every run (a gateway profile on a backend scenario, a missing binary) are counted,
 * with their reasons, not listed. Rows of several providers: formatAcrossProviders.
 */
export function formatCampaign(rows: readonly CampaignRow[], runs: number): string {
  const providers = providersOf(rows);
  if (providers.length > 1) return formatAcrossProviders(rows, runs);
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
  if (skipped.length > 0) lines.push(skippedLine(skipped.length, skipped));
  const flagged = rows.filter((r) => r.disagreement).length;
  const unexpected = rows.filter((r) => r.unexpected > 0).length;
  const on = providers[0] !== undefined && providers[0] !== 'local' ? ` on ${providers[0]}` : '';
  lines.push(`\n${runs} run(s)${on}, ${rows.length} scenario x profile pairs, ${flagged} with disagreement, ${unexpected} with an unexpected verdict`);
  return lines.join('\n');
}

/**
 * Each pair once, with each provider's counts side by side (pass/fail/inconclusive/skipped), flagged
 * where a provider's verdicts changed between runs (DISAGREEMENT), went against the expectation
 * (UNEXPECTED), or where one provider passed what another failed (PROVIDERS DISAGREE).
 */
function formatAcrossProviders(rows: readonly CampaignRow[], runs: number): string {
  const providers = providersOf(rows);
  const pairs = pairsAcrossProviders(rows);
  const judged = pairs.filter((p) => [...p.rows.values()].some((r) => r.counts.skipped < runs));
  const skipped = pairs.filter((p) => !judged.includes(p));
  const label = (p: ProviderPair) => `${p.scenario} [${p.profile}]`;
  const cell = (r: CampaignRow | undefined) => (r ? `${r.counts.pass}/${r.counts.fail}/${r.counts.inconclusive}/${r.counts.skipped}` : '-');
  const width = Math.max(...judged.map((p) => label(p).length), 18);
  const cellWidth = Math.max(...providers.map((p) => p.length), ...judged.flatMap((p) => providers.map((name) => cell(p.rows.get(name)).length)), 7);
  const lines = [`${'scenario [profile]'.padEnd(width)}  ${providers.map((p) => p.padEnd(cellWidth)).join('  ')}  expect`];
  const naming = (p: ProviderPair, of: (r: CampaignRow) => number | boolean) =>
    providers.flatMap((name) => {
      const r = p.rows.get(name);
      const n = r ? of(r) : 0;
      return n === true ? [name] : typeof n === 'number' && n > 0 ? [`${name} ${n}`] : [];
    });
  for (const p of judged) {
    const cells = providers.map((name) => cell(p.rows.get(name)).padEnd(cellWidth));
    const within = naming(p, (r) => r.disagreement);
    const unexpected = naming(p, (r) => r.unexpected);
    const flags = [
      p.providersDisagree ? 'PROVIDERS DISAGREE' : '',
      within.length > 0 ? `DISAGREEMENT (${within.join(', ')})` : '',
      unexpected.length > 0 ? `UNEXPECTED (${unexpected.join(', ')})` : '',
    ].filter(Boolean);
    lines.push(`${label(p).padEnd(width)}  ${cells.join('  ')}  ${(p.expected ?? '-').padEnd(6)}${flags.length > 0 ? `  ${flags.join('  ')}` : ''}`.trimEnd());
  }
  lines.push(`(each provider's runs: pass/fail/inconclusive/skipped)`, '');
  for (const want of ['pass', 'fail'] as const) {
    const expecting = judged.filter((p) => p.expected === want);
    const every = providers.map((name) => `${name} ${expecting.filter((p) => p.rows.get(name)?.counts[want] === runs).length}`);
    lines.push(`expected to ${want}: ${expecting.length} pairs; ${want === 'pass' ? 'passed' : 'failed'} in every run: ${every.join(', ')}`);
  }
  if (skipped.length > 0) lines.push(skippedLine(skipped.length, skipped.flatMap((p) => [...p.rows.values()])));
  const flagged = pairs.filter((p) => [...p.rows.values()].some((r) => r.disagreement)).length;
  const unexpected = pairs.filter((p) => [...p.rows.values()].some((r) => r.unexpected > 0)).length;
  const across = pairs.filter((p) => p.providersDisagree).length;
  lines.push(
    `\n${runs} run(s) on ${providers.length} providers (${providers.join(', ')}), ${pairs.length} scenario x profile pairs, ${flagged} with disagreement, ${unexpected} with an unexpected verdict, ${across} where the providers disagree`,
  );
  return lines.join('\n');
}

export interface CampaignArgs {
  runs: number;
  reportDir: string;
  /** The whole catalog (controls included) unless --scenario narrows it. */
  scenarios: readonly ScenarioDefinition[];
  /** Every profile unless --profile narrows it; with --gateway-class, the class's dataplane (only it, unless --profile names others). */
  profiles: readonly Profile[];
  /**
   * --ablations: the ablated twins of the selected profiles (src/profiles/ablation.ts), each run on
   * the selected scenarios that must catch it, and expected to fail there every run.
   */
  ablations: readonly Profile[];
  /** --provider, in the order given (default local): each opened once, every run on each in turn. */
  providers: readonly CampaignProvider[];
}

/** A provider of the campaign and where its cluster comes from (run's flags, run's checks). */
export interface CampaignProvider {
  provider: ProviderName;
  providerSettings: ProviderSettings;
}

/**
 * --provider (repeatable or comma-separated) and the flags of their clusters. Each provider takes
 * the flags it uses (--nodes goes to netns in `--provider local,netns --nodes 3`); a flag none of
 * them uses is refused, as run refuses it.
 */
function parseProviders(values: { provider?: string[] } & ProviderFlagValues): CampaignProvider[] {
  const names = (values.provider ?? ['local']).flatMap((v) => v.split(',')).map((v) => v.trim());
  const providers = names.map((name, i) => {
    if (name === '') throw new UsageError('--provider: must not be empty; e.g. --provider local,netns');
    if (names.indexOf(name) < i) throw new UsageError(`--provider ${name}: given twice; give each provider once`);
    const uses = PROVIDER_SETTING_FLAGS[name as ProviderName] ?? [];
    const own = Object.fromEntries(uses.filter((flag) => values[flag] !== undefined).map((flag) => [flag, values[flag]])) as ProviderFlagValues;
    const { provider, providerSettings, kubeVersions } = parseProviderArgs(name, own);
    // openRun holds one cluster a provider; several versions are several campaigns.
    if (kubeVersions.length > 1) throw new UsageError(`--kube-version ${kubeVersions.join(',')}: a campaign holds one cluster a provider, so one version; run a campaign for each`);
    return { provider, providerSettings };
  });
  for (const flag of Object.keys(values) as (keyof typeof values)[]) {
    if (flag === 'provider' || values[flag] === undefined) continue;
    if (!providers.some((p) => PROVIDER_SETTING_FLAGS[p.provider].includes(flag))) throw new UsageError(`--${flag}: not used by --provider ${names.join(',')}`);
  }
  return providers;
}

/** The campaign's flags over the config's selection (`config`: zerodrop.config.ts), checked before anything runs. */
export function parseCampaignArgs(argv: string[], config: ZerodropConfig = {}): CampaignArgs {
  // The config's cluster settings (gatewayClassName...) go first, as run takes them, so that a flag overrides its field.
  const fromConfig = clusterSystemArgs(config).flatMap(([flag, value]) => [`--${flag}`, value]);
  const { values } = parseFlags('campaign', [...fromConfig, ...argv], CAMPAIGN_FLAGS);
  const { provider, 'kube-version': kubeVersion, nodes, 'cluster-name': clusterName, kubeconfig, context } = values;
  const className = values['gateway-class'];
  // A class has no counterpart on the local provider: clusterSystemSettings refuses it there, naming the fix.
  const providers = parseProviders({ provider, 'kube-version': kubeVersion, nodes, 'cluster-name': clusterName, kubeconfig, context }).map((p) => ({
    ...p,
    providerSettings: { ...p.providerSettings, ...clusterSystemSettings(p.provider, values) },
  }));
  const runs = /^\d+$/.test(values.runs) ? Number(values.runs) : NaN;
  if (!Number.isInteger(runs) || runs < 1 || runs > 1000) throw new UsageError(`--runs ${values.runs}: must be a whole number from 1 to 1000`);
  const problem = reportDirProblem(values['report-dir']);
  if (problem !== undefined) throw new UsageError(`--report-dir ${JSON.stringify(values['report-dir'])}: ${problem}`);
  const defined = definedProfiles(config);
  const configScenarios = config.scenarios;
  const scenarios = values.scenario ? scenariosNamed(values.scenario) : configScenarios ? scenariosNamed(configScenarios) : catalog;
  const configProfiles = config.profiles?.map((p) => (typeof p === 'string' ? p : p.name));
  // Naming a class is campaigning its dataplane: the built-ins join it only when named.
  const named = values.profile ? profilesNamed(values.profile, defined) : configProfiles ? profilesNamed(configProfiles, defined) : className !== undefined ? [] : allProfiles;
  // The class plays the gateway role as a profile of its own, as in run, so that its rows are named for it.
  const profiles = className !== undefined ? [...named, gatewayClassProfile(className)] : named;
  const candidates = [...ablatedProfiles, ...defined.filter((p) => p.ablation !== undefined)];
  const ablations = values.ablations
    ? candidates.filter((a) => profiles.some((p) => p.name === a.ablation?.profile) && scenarios.some((s) => a.ablation?.caughtBy.includes(s.id)))
    : [];
  if (values.ablations && ablations.length === 0) {
    const withSettings = [...allProfiles, ...defined].filter((p) => p.drainSettings).map((p) => p.name);
    throw new UsageError(`--ablations: none of the selected profiles has a drain setting caught by a selected scenario; profiles with drain settings: ${withSettings.join(', ')}`);
  }
  // Narrowing is how a flagged pair is run again on its own: --scenario X --profile Y --runs 20.
  return { runs, reportDir: values['report-dir'], scenarios, profiles, ablations, providers };
}

/** The runs of one campaign round: the selection, then each ablation on the scenarios that catch it. */
export function campaignRounds(args: Pick<CampaignArgs, 'scenarios' | 'profiles' | 'ablations'>): { scenarios: readonly ScenarioDefinition[]; profiles: readonly Profile[] }[] {
  return [
    { scenarios: args.scenarios, profiles: args.profiles },
    ...args.ablations.map((a) => ({ scenarios: args.scenarios.filter((s) => a.ablation?.caughtBy.includes(s.id)), profiles: [a] })),
  ];
}

/** The pair and the verdict it must have with the option values its run used (`options`, over the scenario's defaults). */
export function pairOf(scenarioId: string, profileName: string, scenarios: readonly ScenarioDefinition[], profiles: readonly Profile[], options?: Record<string, number>): CampaignPair {
  const scenario = scenarios.find((s) => s.id === scenarioId);
  const profile = profiles.find((p) => p.name === profileName);
  const expected = scenario && profile ? expectedVerdict(scenario, profile, options) : undefined;
  return { scenario: scenarioId, profile: profileName, ...(expected ? { expected } : {}) };
}

async function writeCampaign(reportDir: string, campaign: { runs: number; of: number; durationMs: number; providers: string[]; rows: CampaignRow[] }): Promise<void> {
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
  // A class's profile is no catalog name: it joins each plan after planning, as parseRunArgs adds it.
  const selection = [...profiles, ...args.ablations].filter((p) => !isGatewayClassProfile(p)).map((p) => (isDefinedProfile(p as unknown) ? p : p.name));
  const classes = profiles.filter(isGatewayClassProfile);
  const plan = planRun({ provider: 'local', scenarios: scenarios.map((s) => s.id), ...(selection.length > 0 ? { profiles: selection } : {}), ...(config.set ? { set: config.set } : {}) }, { source: 'campaign' });
  // The selection is the same on every provider; only where it runs differs.
  const plans = args.providers.map(({ provider, providerSettings }) => ({
    ...plan,
    profiles: [...plan.profiles, ...classes],
    provider,
    providerSettings,
    kubeVersions: providerSettings.kubeVersion !== undefined ? [providerSettings.kubeVersion] : [],
  }));
  const log = (line: string) => console.log(redact(line));
  try {
    // Every provider's, before the first is opened: a campaign refused for netns creates nothing locally either.
    for (const p of plans) await checkPrerequisites(p, log);
    return await rounds(args, plans, controller.signal, log);
  } catch (error) {
    if (controller.signal.aborted) return 130;
    throw error;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
  }
}

/** Opens each plan's provider in turn and gives them to `use`; closes every one it opened, last first, however `use` ends. */
async function withProviders<T>(plans: readonly RunPlan[], signal: AbortSignal, log: (line: string) => void, use: (opened: OpenRun[]) => Promise<T>): Promise<T> {
  const opened: OpenRun[] = [];
  const closeAll = async (): Promise<unknown> => {
    let closeError: unknown;
    for (const open of opened.reverse()) {
      try {
        await open[Symbol.asyncDispose]();
      } catch (error) {
        closeError ??= error;
      }
    }
    return closeError;
  };
  let result: T;
  try {
    for (const plan of plans) {
      opened.push(await openRun(plan, { signal, log, ...(plan.provider !== 'local' ? { onOpening: () => log(`campaign: opening provider ${plan.provider}, held for every run`) } : {}) }));
    }
    result = await use(opened);
  } catch (error) {
    // The campaign's own error says more than a teardown that failed after it.
    await closeAll();
    throw error;
  }
  const closeError = await closeAll();
  if (closeError !== undefined) throw closeError;
  return result;
}

async function rounds(args: CampaignArgs, plans: readonly RunPlan[], signal: AbortSignal, log: (line: string) => void): Promise<number> {
  const { runs, reportDir, scenarios } = args;
  const profiles = [...args.profiles, ...args.ablations];
  const providers = plans.map((p) => p.provider);
  const several = providers.length > 1;
  return withProviders(plans, signal, log, async (opened) => {
    const rows = new Map<string, CampaignRow>();
    const started = performance.now();
    for (let i = 1; i <= runs; i++) {
      const runStarted = performance.now();
      for (const open of opened) {
        const provider = open.plan.provider;
        const results: ScenarioResult[] = [];
        const reports = new Map<ScenarioResult, string>();
        const pairByResult = new Map<ScenarioResult, CampaignPair>();
        const pairFor = (s: ScenarioResult): CampaignPair => {
          let pair = pairByResult.get(s);
          if (pair === undefined) pairByResult.set(s, (pair = { ...pairOf(s.id, s.profile, scenarios, profiles, s.options), provider }));
          return pair;
        };
        // Each pair's Timeline is dropped as it ends unless its run is worth a report: a campaign
        // holds no more than a few runs' records at a time, however long it is.
        const keep = (s: ScenarioResult) => {
          const pair = pairFor(s);
          if (!keepsReport(s.verdict, pair.expected, rows.get(rowKey(pair))?.first)) delete s.timeline;
        };
        for (const round of campaignRounds(args)) {
          const pairs = round.scenarios.flatMap((s) => round.profiles.map((p) => ({ scenario: s.id, profile: p.name })));
          const run = await open.runPairs(pairs, { signal, reporter: { onPairEnd: keep } }, { keepTimeline: true });
          for (const s of run.scenarios.filter((x) => x.timeline !== undefined)) {
            const dir = keptReportDir(i, provider, s.id, s.profile);
            // A report that cannot be written (a full disk) costs the report, not the campaign's hours.
            await writeReports({ ...run, scenarios: [s] } satisfies RunResult, resolve(reportDir, dir)).then(
              () => reports.set(s, dir),
              (error: unknown) => console.warn(`  run ${i}: ${s.id} [${s.profile}]: its report was not kept: ${(error as Error).message}`),
            );
            delete s.timeline;
          }
          results.push(...run.scenarios);
        }
        for (const s of results) {
          const pair = pairFor(s);
          const report = reports.get(s);
          const told = tally(rows, pair, s.verdict, { run: i, why: whyOf(s), ...(s.seed !== undefined ? { seed: s.seed } : {}), ...(report !== undefined ? { report } : {}) });
          if (told) {
            const row = rows.get(rowKey(pair));
            // A pass has no why of its own: the first run's says what this one differs from.
            const first = told.why === '' && row?.firstWhy ? ` (${row.firstWhy})` : '';
            const against = told.unexpected ? `expected ${row?.expected}` : `first run ${row?.first}${first}`;
            const where = report === undefined ? '' : ` [report: ${join(reportDir, report)}]`;
            console.log(`  run ${i}: ${s.id} [${s.profile}]${several ? ` on ${provider}` : ''} ${told.verdict}, ${against}${told.why === '' ? '' : `: ${told.why}`}${where}`);
          }
        }
      }
      const all = [...rows.values()];
      const flagged = all.filter((r) => r.disagreement).length;
      const unexpected = all.filter((r) => r.unexpected > 0).length;
      const across = several ? `, ${pairsAcrossProviders(all).filter((p) => p.providersDisagree).length} where the providers disagree` : '';
      console.log(`run ${i}/${runs} done in ${((performance.now() - runStarted) / 1000).toFixed(0)} s; ${flagged} disagreement(s), ${unexpected} unexpected${across} so far`);
      // Written after every run, so an interrupted or crashed campaign still leaves what it measured.
      await writeCampaign(reportDir, { runs: i, of: runs, durationMs: Math.round(performance.now() - started), providers, rows: all });
    }
    const table = [...rows.values()];
    console.log(`\n${formatCampaign(table, runs)}`);
    return campaignExitCode(table);
  });
}
