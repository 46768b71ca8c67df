import { renderHtml } from '../html/page.ts';
import type { Reporter } from './reporter.ts';

export const htmlReporter: Reporter = {
  name: 'html',
  file: 'index.html',
  description: 'index.html: self-contained report with the matrix, timelines, failures and drain timings',
  render: (run) => renderHtml(run),
};
