import { resultsJson } from '../results.ts';
import { REPORTER_FILES, type FileReporter } from './reporter.ts';

export const jsonReporter: FileReporter = {
  name: 'json',
  ...REPORTER_FILES.json,
  render: resultsJson,
};
