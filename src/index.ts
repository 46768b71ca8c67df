// The package entry: what a zerodrop.config.ts and programs driving zerodrop import.

export { defineConfig, type ZerodropConfig } from './cli/config.ts';
export { REPORTER_NAMES, reporters, writeReports, type Reporter, type ReporterName } from './report/reporters/index.ts';
export { readResults, writeResults, type Counts, type Implementation, type RunResult, type ScenarioResult } from './report/results.ts';
export type { Timeline } from './model/timeline.ts';
export type { AssertionResult, Verdict } from './model/verdict.ts';
