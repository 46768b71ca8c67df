// Prints the plain closing lines that CI log readers understand, after vitest's own summary: every
// failed test by file and full name (and every file that failed outside its tests, and every
// unhandled error), then `N passed, N failed, N skipped` last. A CI log's tail thus says what
// failed, not only how many: vitest's own list of failures comes before thousands of lines of output.

import type { Reporter, TestModule } from 'vitest/node';

/** The first line of an error's message, for a one-line mention. */
function firstLine(error: { message?: unknown } | undefined): string {
  const message = typeof error?.message === 'string' ? error.message : String(error ?? '');
  return message.split('\n')[0] ?? '';
}

export function closingLines(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown> = []): string[] {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const failures: string[] = [];
  for (const module of testModules) {
    let failedTests = 0;
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') passed++;
      else if (state === 'failed') {
        failed++;
        failedTests++;
        failures.push(`FAIL ${module.relativeModuleId} > ${test.fullName}`);
      } else skipped++;
    }
    // A file that failed to load or in a hook outside any test has no failed test to name.
    const errors = module.errors();
    if (module.state() === 'failed' && failedTests === 0) failures.push(`FAIL ${module.relativeModuleId} (${errors.length > 0 ? firstLine(errors[0]) : 'failed outside its tests'})`);
  }
  for (const error of unhandledErrors) failures.push(`FAIL unhandled error: ${firstLine(error as { message?: unknown })}`);
  return ['', ...(failures.length > 0 ? [`Failed (${failures.length}):`, ...failures.map((f) => `  ${f}`)] : []), `${passed} passed, ${failed} failed, ${skipped} skipped`];
}

export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>, unhandledErrors: ReadonlyArray<unknown> = []): void {
    console.log(closingLines(testModules, unhandledErrors).join('\n'));
  }
}
