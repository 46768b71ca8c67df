// The programmatic API: what `zerodrop run`, `zerodrop/vitest` and a team's own scripts all call.
// Options are the config file's fields (ZerodropConfig) plus callbacks; they are validated and
// resolved before anything starts, so bad input costs nothing (a UsageError naming the field).
//
// One path: options -> planRun (validated selection) -> openRun (prerequisites, state record,
// provider session) -> runPairs (the scenario x profile matrix) -> reports. The CLI adds flags and
// a progress view on top, nothing else.

import { resolve } from 'node:path';
import { parseRunArgs, type RunArgs } from '../config/args.ts';
import { configArgs, definedProfiles, validateConfig, type ZerodropConfig } from '../config/config.ts';
import { UsageError } from '../config/usage-error.ts';
import { missingPrerequisites, openSession, type ProviderSession } from '../providers/index.ts';
import { allReporters, fileReporter, type Reporter, type ReporterName } from '../report/reporters/index.ts';
import { loadReporter } from '../report/reporters/load.ts';
import type { RunResult } from '../report/results.ts';
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
export interface RunOptions extends ZerodropConfig, RunCallbacks {}

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
 * Checks the provider's prerequisites (a UsageError naming what is missing, before anything is
 * created), opens the run's state record (for `zerodrop clean` after a crash) and the provider session.
 */
export async function openRun(plan: RunPlan, callbacks: RunCallbacks = {}): Promise<OpenRun> {
  const log = callbacks.log ?? (() => {});
  // A tool version that works but is not the one pinned (a newer kind) is a warning, not a refusal.
  const missing = await missingPrerequisites(plan.providerSettings, (line) => log(`warning: ${line}`));
  if (missing.length > 0) throw new UsageError(`--provider ${plan.provider} cannot run here:\n  ${missing.join('\n  ')}`);
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
 */
export async function run(options: RunOptions = {}): Promise<RunResult> {
  const { signal, log, onOpening, reporter, onReports, ...config } = options;
  return runPlan(planRun(config), { signal, log, onOpening, reporter, onReports }, config.implementation);
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
