// Reporters turn a finished run (RunResult) into one file each, Playwright-style: the CLI writes all
// of them by default, `zerodrop report DIR` re-renders the derived ones from results.json.

import type { RunResult } from '../results.ts';

export const REPORTER_NAMES = ['json', 'html', 'junit', 'conformance'] as const;
export type ReporterName = (typeof REPORTER_NAMES)[number];

export interface Reporter {
  name: ReporterName;
  /** File name inside the report directory. */
  file: string;
  /** One line for `--help` and the README. */
  description: string;
  render(run: RunResult): string;
}
