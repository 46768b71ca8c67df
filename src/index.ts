// The package entry: what a zerodrop.config.ts and programs driving zerodrop import
// (`import { run, defineConfig } from 'zerodrop'`). The CLI is a thin layer over the same calls.

export {
  run,
  planRun,
  openRun,
  runPlan,
  runVersionsPlan,
  type RunOptions,
  type RunCallbacks,
  type RunPlan,
  type OpenRun,
  type VersionCallbacks,
  type VersionRun,
  type VersionsResult,
} from './api/run.ts';
export { defineConfig, type ZerodropConfig } from './config/config.ts';
export { UsageError } from './config/usage-error.ts';
export { catalog, findScenario } from './scenarios/index.ts';
export type { ScenarioDefinition } from './scenarios/definition.ts';
export { profiles, findProfile } from './profiles/index.ts';
export type { Profile } from './profiles/profile.ts';
export { defineHelmProfile, DATAPLANE_LABEL, perRunName, type HelmProfileDefinition, type HelmProfileFields } from './profiles/define-helm.ts';
export type { ChartContext, ChartObject } from './profiles/helm-charts.ts';
export {
  defineProfile,
  PLACEHOLDERS,
  PROTOCOLS,
  type DefinedProfile,
  type ProfileDefinition,
  type ProfileFields,
  type PodContext,
  type PerPod,
  type DrainPromise,
  type ProfileProtocol,
  type ProfileRole,
  type ReadinessDefinition,
} from './profiles/define.ts';
export type { DrainSettingDefinition } from './profiles/drain-setting.ts';
export { ProfileCannotCarry, type Attribution } from './profiles/profile.ts';
export { REPORTER_NAMES, reporters, writeReports, type FileReporter, type Reporter, type ReporterName } from './report/reporters/index.ts';
export type { PairBegin, ReportContext, RunBegin } from './report/reporters/reporter.ts';
export { readResults, writeResults, type Counts, type Implementation, type RecordsPointer, type RunResult, type ScenarioResult } from './report/results.ts';
export type { ScenarioProgress } from './runner/run-scenario.ts';
export type { Timeline, RequestRecord, ConnectionRecord } from './model/timeline.ts';
export { RequestTable, type RequestRow } from './model/request-table.ts';
export { readRecordsFile, readConnectionsFile } from './report/records-file.ts';
export type { AssertionResult, OptionValues, Toleration, Verdict } from './model/verdict.ts';
export { TOOL_VERSION } from './paths.ts';
