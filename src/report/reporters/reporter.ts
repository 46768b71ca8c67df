// A reporter hears a run as it goes, Playwright-style: the run's plan, each scenario x profile pair
// beginning, its phases, its result, and the finished run. Every event is optional. The built-in
// file reporters (json, html, junit, conformance) write their file on onEnd; the CLI's live view
// draws from the others; a user's reporter is a module given by path (`--reporter ./mine.ts`).

import type { ScenarioProgress } from '../../model/progress.ts';
import type { Timeline } from '../../model/timeline.ts';
import { RESULTS_FILE, type RunResult, type ScenarioResult } from '../results.ts';

export const REPORTER_NAMES = ['json', 'html', 'junit', 'conformance'] as const;
export type ReporterName = (typeof REPORTER_NAMES)[number];

/** Each reporter's file and one line about it, apart from its renderer so that `--help` loads no renderer. */
export const REPORTER_FILES: Readonly<Record<ReporterName, { file: string; description: string }>> = {
  json: { file: RESULTS_FILE, description: 'results.json: verdicts, assertions, counts and the full Timeline' },
  html: { file: 'index.html', description: 'index.html: self-contained report with the matrix, timelines, failures and drain timings' },
  junit: { file: 'junit.xml', description: 'junit.xml: one testcase per scenario x profile, failures carry the assertion messages' },
  conformance: { file: 'conformance.yaml', description: 'conformance.yaml: Gateway API ConformanceReport-shaped drain conformance, one document per system' },
};

/** What a run is about to do: told once, before its first pair. */
export interface RunBegin {
  provider: string;
  /** Every scenario x profile pair, in the order they start (with --workers, several at once). */
  pairs: readonly { scenario: string; profile: string }[];
}

/** A pair starts recording; `timeline` fills while it runs (live counts). A pair skipped before deploy has no begin, only its end. */
export interface PairBegin {
  scenario: string;
  profile: string;
  timeline: Timeline;
}

/** Where the run's reports go: the report directory, when the run writes one. */
export interface ReportContext {
  reportDir?: string;
}

export interface Reporter {
  onBegin?(run: RunBegin): void | Promise<void>;
  onPairBegin?(pair: PairBegin): void;
  onProgress?(progress: ScenarioProgress): void;
  /** A pair has its verdict (`skipped`, with the reason, included). */
  onPairEnd?(result: ScenarioResult): void;
  /** The run is over; a rejected promise fails the run. */
  onEnd?(run: RunResult, context: ReportContext): void | Promise<void>;
}

export const REPORTER_EVENTS = ['onBegin', 'onPairBegin', 'onProgress', 'onPairEnd', 'onEnd'] as const;

/** A built-in reporter that renders the finished run into one file of the report directory. */
export interface FileReporter {
  name: ReporterName;
  /** File name inside the report directory. */
  file: string;
  /** One line for `--help` and the README. */
  description: string;
  render(run: RunResult): string;
}

/** A `--reporter` value or `reporters` entry that names a module rather than a built-in reporter. */
export function isReporterPath(value: string): boolean {
  return value.includes('/') || value.includes('\\') || /\.[cm]?[jt]s$/.test(value);
}
