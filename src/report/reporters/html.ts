import { renderHtml } from '../html/page.ts';
import { REPORTER_FILES, type Reporter } from './reporter.ts';

export const htmlReporter: Reporter = {
  name: 'html',
  ...REPORTER_FILES.html,
  render: (run) => renderHtml(run),
};
