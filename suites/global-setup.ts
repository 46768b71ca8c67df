// Vitest integration: the suites report through vitest as usual, and every scenario result they
// produce (suites/helpers/run-case.ts hands it to collect.ts) also lands in one zerodrop report of
// the run, reports/vitest/ (index.html, results.json, junit.xml, conformance.yaml).

import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { mergeResults } from '../src/report/collect.ts';
import { writeReports } from '../src/report/reporters/index.ts';
import { packageRoot } from '../src/paths.ts';
import { onExit } from '../src/state/exit-hooks.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    zerodropCollectDir: string;
  }
}

/** Where the run's report goes; ZERODROP_VITEST_REPORT_DIR moves it (the integration test uses a temp dir). */
export const VITEST_REPORT_DIR = process.env['ZERODROP_VITEST_REPORT_DIR'] ?? join(packageRoot, 'reports', 'vitest');

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-vitest-'));
  project.provide('zerodropCollectDir', dir);
  // A Ctrl-C'd vitest exits without running this teardown.
  const dropExitHook = onExit(() => rmSync(dir, { recursive: true, force: true }));
  const startedAt = new Date();
  const started = performance.now();
  return async () => {
    try {
      const run = await mergeResults(dir, { startedAt, durationMs: Math.round(performance.now() - started) });
      if (run) {
        await writeReports(run, VITEST_REPORT_DIR);
        console.log(`zerodrop report of this run (${run.scenarios.length} scenario runs): ${join(VITEST_REPORT_DIR, 'index.html')}`);
      }
    } finally {
      dropExitHook();
      await rm(dir, { recursive: true, force: true });
    }
  };
}
