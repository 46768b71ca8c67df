import { renderHtml } from '../html/page.ts';
import { REPORTER_FILES, type FileReporter } from './reporter.ts';

export const htmlReporter: FileReporter = {
  name: 'html',
  ...REPORTER_FILES.html,
  render: (run) => renderHtml(run),
};
