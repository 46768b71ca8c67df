// Reporters turn a finished run (RunResult) into one file each, Playwright-style: the CLI writes all
// of them by default, `zerodrop report DIR` re-renders the derived ones from results.json.

import { RESULTS_FILE, type RunResult } from '../results.ts';

export const REPORTER_NAMES = ['json', 'html', 'junit', 'conformance'] as const;
export type ReporterName = (typeof REPORTER_NAMES)[number];

/** Each reporter's file and one line about it, apart from its renderer so that `--help` loads no renderer. */
export const REPORTER_FILES: Readonly<Record<ReporterName, { file: string; description: string }>> = {
  json: { file: RESULTS_FILE, description: 'results.json: verdicts, assertions, counts and the full Timeline' },
  html: { file: 'index.html', description: 'index.html: self-contained report with the matrix, timelines, failures and drain timings' },
  junit: { file: 'junit.xml', description: 'junit.xml: one testcase per scenario x profile, failures carry the assertion messages' },
  conformance: { file: 'conformance.yaml', description: 'conformance.yaml: Gateway API ConformanceReport-shaped drain conformance, one document per system' },
};

export interface Reporter {
  name: ReporterName;
  /** File name inside the report directory. */
  file: string;
  /** One line for `--help` and the README. */
  description: string;
  render(run: RunResult): string;
}
