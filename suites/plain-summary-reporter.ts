// Prints the plain closing line `N passed, N failed, N skipped` that CI log readers understand,
// after vitest's own summary.

import type { Reporter, TestModule } from 'vitest/node';

export default class PlainSummaryReporter implements Reporter {
  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    let passed = 0;
    let failed = 0;
    let skipped = 0;
    for (const module of testModules) {
      for (const test of module.children.allTests()) {
        const state = test.result().state;
        if (state === 'passed') passed++;
        else if (state === 'failed') failed++;
        else skipped++;
      }
    }
    console.log(`\n${passed} passed, ${failed} failed, ${skipped} skipped`);
  }
}
