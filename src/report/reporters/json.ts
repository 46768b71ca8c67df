import { resultsJson } from '../results.ts';
import { REPORTER_FILES, type Reporter } from './reporter.ts';

export const jsonReporter: Reporter = {
  name: 'json',
  ...REPORTER_FILES.json,
  render: resultsJson,
};
