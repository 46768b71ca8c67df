import { RESULTS_FILE, resultsJson } from '../results.ts';
import type { Reporter } from './reporter.ts';

export const jsonReporter: Reporter = {
  name: 'json',
  file: RESULTS_FILE,
  description: 'results.json: verdicts, assertions, counts and the full Timeline (DESIGN.md contract)',
  render: resultsJson,
};
