// The programmatic API: what `zerodrop run`, `zerodrop/vitest` and a team's own scripts all call.
// Options are the config file's fields (ZerodropConfig) plus callbacks; they are validated and
// resolved before anything starts, so bad input costs nothing (a UsageError naming the field).
//
// One path: options -> planRun (validated selection) -> openRun (prerequisites, state record,
// provider session) -> runPairs (the scenario x profile matrix) -> reports. The CLI adds flags and
// a progress view on top, nothing else.

import { join, resolve } from 'node:path';
import { parseRunArgs, type RunArgs } from '../config/args.ts';
import { configArgs, definedProfiles, validateConfig, type ZerodropConfig } from '../config/config.ts';
import { UsageError } from '../config/usage-error.ts';
import { missingPrerequisites, openSession, type ProviderSession } from '../providers/index.ts';
import { allReporters, fileReporter, type Reporter, type ReporterName } from '../report/reporters/index.ts';
import { loadReporter } from '../report/reporters/load.ts';
import type { RunResult } from '../report/results.ts';
import { writeComparison } from '../report/compare.ts';
import { controlPlanePin } from '../providers/netns/control-plane-binary.ts';
import { runMatrix } from '../runner/run-matrix.ts';
import { RunRecordFile } from '../state/run-record.ts';

/** What a run is told as it goes; every callback is optional. */
export interface RunCallbacks {
  /** Aborts the run: load stops, pods are torn down, and run() rejects (Ctrl-C in the CLI). */
  signal?: AbortSignal;
  /** Lines about the provider's cluster (creating, reusing, deleting) and the state record. */
  log?: (line: string) => void;
  /** The provider's prerequisites are met and it is being opened (a kind cluster may take minutes). */
  onOpening?: (plan: RunPlan) => void;
  /**
   * Hears the run as it goes (the run's begin, each pair's begin, phases and result, the run's end),
   * besides the reporters the plan names: the CLI's live view is one.
   */
  reporter?: Reporter;
  /** The reports were written: their paths by reporter. */
  onReports?: (written: Partial<Record<ReporterName, string>>) => void;
}

/** `run()`'s options: the fields of zerodrop.config.ts, and callbacks. */
export interface RunOptions extends ZerodropConfig, RunCallbacks, VersionCallbacks {}

/** What a run on several Kubernetes versions is told besides a run's callbacks. */
export interface VersionCallbacks {
  /** A version's run begins (its cluster is about to be opened); `index` counts from 0 of `total`. */
  onVersionBegin?: (kubeVersion: string, index: number, total: number) => void;
  /** A version's run ended with its result. */
  onVersionEnd?: (run: VersionRun) => void;
}

/** One version's run of a run on several Kubernetes versions. */
export interface VersionRun {
  /** The version as the run named it: on netns the pinned release it resolves to (1.36 is v1.36.3). */
  kubeVersion: string;
  /** Where its reports went: the run's report directory/<kubeVersion>; none without a report directory. */
  reportDir?: string;
  result: RunResult;
}

/** A run on several Kubernetes versions: each version's result, in the order given, and the comparison written. */
export interface VersionsResult {
  versions: VersionRun[];
  /** compare.html and compare.md in the run's report directory (reports/compare.ts); none without a report directory. */
  comparison?: { html: string; markdown: string };
}

/**
 * A validated selection: the scenario and profile objects, options, provider settings. Made before
 * anything starts; every mistake is a UsageError that names the field, the value and the fix.
 */
export type RunPlan = RunArgs;

/**
 * Validates `config` and resolves it into a plan. `argv` (the CLI's run flags) overrides the config
 * field by field; `source` names where the config came from in error messages.
 */
export function planRun(config: ZerodropConfig = {}, { argv = [], source = 'options' }: { argv?: readonly string[]; source?: string } = {}): RunPlan {
  const valid = validateConfig(config, source);
  return parseRunArgs([...configArgs(valid, argv), ...argv], definedProfiles(valid));
}

/** How runPairs keeps what it records. */
export interface PairOptions {
  /** Write each pair's requests to DIR/records/ as they arrive (the report directory, with the json reporter). */
  recordsDir?: string;
  /** The number the first pair's records files take (records/NN-...; default 1): its place in the run's results. */
  recordsIndex?: number;
  /** False: results without their Timeline (verdicts, assertions, counts), as a campaign keeps them. Default true. */
  keepTimeline?: boolean;
}

/** A run held open: the provider's cluster (or the local machine) and the state record, until disposed. */
export interface OpenRun extends AsyncDisposable {
  readonly plan: RunPlan;
  /** Runs the given pairs (default: every scenario x profile of the plan) and returns their results as one run. */
  runPairs(pairs?: readonly { scenario: string; profile: string }[], callbacks?: RunCallbacks, options?: PairOptions): Promise<RunResult>;
}

/**
 * The plan's provider can run here, or a UsageError naming what is missing: called before anything
 * is created (openRun does; a campaign for each of its providers before it opens the first).
 */
export async function checkPrerequisites(plan: RunPlan, log: (line: string) => void = () => {}): Promise<void> {
  // A tool version that works but is not the one pinned (a newer kind) is a warning, not a refusal.
  const missing = await missingPrerequisites(plan.providerSettings, (line) => log(`warning: ${line}`));
  if (missing.length > 0) throw new UsageError(`--provider ${plan.provider} cannot run here:\n  ${missing.join('\n  ')}`);
}

/**
 * Checks the provider's prerequisites (a UsageError naming what is missing, before anything is
 * created), opens the run's state record (for `zerodrop clean` after a crash) and the provider session.
 */
export async function openRun(plan: RunPlan, callbacks: RunCallbacks = {}): Promise<OpenRun> {
  if (plan.kubeVersions.length > 1) {
    throw new UsageError(`--kube-version ${plan.kubeVersions.join(',')}: a run held open has one cluster, so one version; run() and \`zerodrop run\` run several in turn`);
  }
  const log = callbacks.log ?? (() => {});
  await checkPrerequisites(plan, log);
  callbacks.onOpening?.(plan);
  const record = openRunRecord(log);
  // A forced exit (a second Ctrl-C) skips the teardown: locally the providers' exit hooks kill every
  // pod, so the record has nothing left to list. A cluster's namespaces stay listed for `zerodrop clean`.
  const closeRecord = () => record?.close();
  if (plan.provider === 'local') process.once('exit', closeRecord);
  let session: ProviderSession;
  try {
    session = await openSession(plan.providerSettings, log, record, callbacks.signal);
  } catch (error) {
    process.off('exit', closeRecord);
    record?.close();
    throw error;
  }
  return {
    plan,
    runPairs: (pairs, more = {}, { recordsDir, recordsIndex, keepTimeline } = {}) => {
      const { signal, reporter } = { ...callbacks, ...more };
      return runMatrix({
        provider: plan.provider,
        session,
        scenarios: plan.scenarios,
        profiles: plan.profiles,
        ...(pairs ? { pairs: pairs.map((pair) => pairOf(plan, pair)) } : {}),
        overrides: plan.overrides,
        nightly: plan.nightly,
        driver: plan.driver,
        ...(plan.seed !== undefined ? { seed: plan.seed } : {}),
        ...(record ? { tracker: record } : {}),
        concurrency: plan.workers,
        ...(recordsDir !== undefined ? { recordsDir } : {}),
        ...(recordsIndex !== undefined ? { recordsIndex } : {}),
        ...(keepTimeline !== undefined ? { keepTimeline } : {}),
        signal: signal ?? new AbortController().signal,
        ...(reporter ? { reporter } : {}),
      });
    },
    [Symbol.asyncDispose]: async () => {
      try {
        await session[Symbol.asyncDispose]();
      } finally {
        process.off('exit', closeRecord);
        record?.close();
      }
    },
  };
}

/**
 * Runs every selected scenario x profile pair and returns the result that results.json holds.
 * Writes the reports when `reportDir` is given. Resolves with failing verdicts too: a verdict is a
 * result, not an error; it rejects on bad options (UsageError), an abort, or a harness error.
 * With a list of Kubernetes versions (`kubeVersion: [...]`) the selection runs once on each, one
 * cluster at a time, and run() resolves with every version's result and the comparison (runVersionsPlan).
 */
export function run(options: RunOptions & { kubeVersion: string[] }): Promise<VersionsResult>;
export function run(options?: RunOptions): Promise<RunResult>;
export async function run(options: RunOptions = {}): Promise<RunResult | VersionsResult> {
  const { signal, log, onOpening, reporter, onReports, onVersionBegin, onVersionEnd, ...config } = options;
  const plan = planRun(config);
  const callbacks = { signal, log, onOpening, reporter, onReports };
  if (Array.isArray(config.kubeVersion)) return runVersionsPlan(plan, { ...callbacks, onVersionBegin, onVersionEnd }, config.implementation);
  return runPlan(plan, callbacks, config.implementation);
}

/**
 * Runs a plan on each of its Kubernetes versions in turn (plan.kubeVersions, one cluster at a time),
 * each version's reports in reportDir/<version>/, then writes compare.html and compare.md of them
 * into reportDir. Every version's prerequisites are checked before the first starts (a UsageError
 * naming the version). A harness error in one version does not stop the others: once they ran and
 * the comparison of those that finished is written, the first such error is thrown. An abort stops at once.
 */
export async function runVersionsPlan(
  plan: RunPlan,
  callbacks: RunCallbacks & VersionCallbacks = {},
  implementation?: ZerodropConfig['implementation'],
): Promise<VersionsResult> {
  const { onVersionBegin, onVersionEnd, ...rest } = callbacks;
  const runCallbacks = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined)) as RunCallbacks;
  const log = runCallbacks.log ?? (() => {});
  if (plan.kubeVersions.length === 0) throw new UsageError('--kube-version: a run on several Kubernetes versions needs at least one');
  const named = plan.kubeVersions.map((v) => (plan.provider === 'netns' ? (controlPlanePin(v)?.version ?? v) : v));
  for (const [i, kubeVersion] of plan.kubeVersions.entries()) {
    const missing = await missingPrerequisites({ ...plan.providerSettings, kubeVersion }, (line) => log(`warning: ${line}`));
    if (missing.length > 0) throw new UsageError(`--provider ${plan.provider} cannot run Kubernetes ${named[i]} here:\n  ${missing.join('\n  ')}`);
  }
  const reportDir = plan.reportDir !== undefined ? resolve(plan.reportDir) : undefined;
  const versions: VersionRun[] = [];
  let firstError: unknown;
  for (const [i, kubeVersion] of plan.kubeVersions.entries()) {
    // Interrupted between two versions: the next cluster is not started.
    runCallbacks.signal?.throwIfAborted();
    const name = named[i]!;
    const dir = reportDir !== undefined ? join(reportDir, name) : undefined;
    onVersionBegin?.(name, i, named.length);
    const one: RunPlan = { ...plan, providerSettings: { ...plan.providerSettings, kubeVersion }, kubeVersions: [kubeVersion], reportDir: dir };
    try {
      const result = await runPlan(one, runCallbacks, implementation);
      const done: VersionRun = { kubeVersion: name, ...(dir !== undefined ? { reportDir: dir } : {}), result };
      versions.push(done);
      onVersionEnd?.(done);
    } catch (error) {
      if (runCallbacks.signal?.aborted || error instanceof UsageError) throw error;
      log(`zerodrop: Kubernetes ${name}: the run stopped: ${(error as Error).message ?? String(error)}`);
      firstError ??= error;
    }
  }
  const comparison =
    reportDir !== undefined && versions.length > 0
      ? await writeComparison(
          versions.map((v) => ({ dir: v.reportDir!, run: v.result })),
          reportDir,
        )
      : undefined;
  if (firstError !== undefined) throw firstError;
  return { versions, ...(comparison ? { comparison } : {}) };
}

/** Runs a plan made by planRun (the CLI's path: its flags are part of the plan). */
export async function runPlan(plan: RunPlan, callbacks: RunCallbacks = {}, implementation?: ZerodropConfig['implementation']): Promise<RunResult> {
  const defined = Object.fromEntries(Object.entries(callbacks).filter(([, v]) => v !== undefined)) as RunCallbacks;
  const reportDir = plan.reportDir !== undefined ? resolve(plan.reportDir) : undefined;
  const written: Partial<Record<ReporterName, string>> = {};
  // Loaded before anything starts: a reporter module that is missing or exports no reporter is bad usage.
  const reporter = allReporters([...(await planReporters(plan, reportDir, written)), ...(defined.reporter ? [defined.reporter] : [])]);
  await using open = await openRun(plan, defined);
  // With results.json among the reports, each pair's requests go to its records file as they arrive.
  const recordsDir = reportDir !== undefined && plan.reporters.includes('json') ? reportDir : undefined;
  await reporter.onBegin({ provider: plan.provider, pairs: plan.scenarios.flatMap((s) => plan.profiles.map((p) => ({ scenario: s.id, profile: p.name }))) });
  const result = await open.runPairs(undefined, { ...defined, reporter }, recordsDir !== undefined ? { recordsDir } : {});
  if (implementation) result.implementation = implementation;
  await reporter.onEnd(result, reportDir !== undefined ? { reportDir } : {});
  if (reportDir !== undefined) defined.onReports?.(written);
  return result;
}

/**
 * The reporters a plan names: the built-in file reporters (when the run has a report directory; each
 * notes its file in `written`) and the reporter modules, loaded here, in the order given.
 */
export async function planReporters(plan: RunPlan, reportDir: string | undefined, written: Partial<Record<ReporterName, string>> = {}): Promise<Reporter[]> {
  const files = reportDir !== undefined ? plan.reporters.map((name) => fileReporter(name, written)) : [];
  const modules: Reporter[] = [];
  for (const path of plan.reporterModules) modules.push(await loadReporter(path, '--reporter'));
  return [...files, ...modules];
}

function pairOf(plan: RunPlan, { scenario, profile }: { scenario: string; profile: string }): { def: RunPlan['scenarios'][number]; profile: RunPlan['profiles'][number] } {
  const def = plan.scenarios.find((s) => s.id === scenario);
  const p = plan.profiles.find((x) => x.name === profile);
  if (!def || !p) throw new UsageError(`runPairs: ${scenario} [${profile}] is not in this run's selection`);
  return { def, profile: p };
}

/** The run's state record; none (with a note) if the state directory is not writable. */
function openRunRecord(log: (line: string) => void): RunRecordFile | undefined {
  try {
    return RunRecordFile.create();
  } catch (error) {
    log(`zerodrop: no state record (${(error as Error).message}); \`zerodrop clean\` will not find this run's leftovers after a crash`);
    return undefined;
  }
}
