// Runs every selected scenario against every selected profile, one at a time, each on a fresh
// provider that is torn down (`await using`) however the scenario ends: pass, fail, error or Ctrl-C.

import { randomBytes } from 'node:crypto';
import { ProfileCannotPlay, type Profile } from '../profiles/profile.ts';
import { missingRequirement } from '../profiles/requirements.ts';
import { localSession, type ProviderName, type ProviderSession } from '../providers/index.ts';
import { Recorder } from '../observe/recorder.ts';
import { countsOf, type RunResult, type ScenarioResult } from '../report/results.ts';
import type { Timeline } from '../model/timeline.ts';
import type { OptionValues, ScenarioDefinition } from '../scenarios/definition.ts';
import { repoRoot } from './paths.ts';
import { runScenario, type ScenarioProgress } from './run-scenario.ts';

export interface MatrixRequest {
  provider: ProviderName;
  /** The cluster the scenarios run on (see providers/index.ts); the local provider when omitted. */
  session?: ProviderSession;
  scenarios: readonly ScenarioDefinition[];
  profiles: readonly Profile[];
  /** Option overrides (`--set key=value`); each applies to the scenarios that have that option. */
  overrides: OptionValues;
  nightly: boolean;
  signal: AbortSignal;
  onProgress?: (p: ScenarioProgress) => void;
  onResult?: (r: ScenarioResult) => void;
  /** Called as each scenario x profile starts recording; `timeline` fills while it runs (live progress counts). */
  onStart?: (s: { scenario: string; profile: string; timeline: Timeline }) => void;
  /** Keep each scenario's full Timeline in the result (for reports). */
  keepTimeline?: boolean;
}

export function optionsFor(def: ScenarioDefinition, overrides: OptionValues, nightly: boolean): OptionValues {
  const options: OptionValues = { ...def.defaults };
  const layers = nightly ? [def.nightly, overrides] : [overrides];
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) if (key in def.defaults && value !== undefined) options[key] = value;
  }
  return options;
}

export async function runMatrix(request: MatrixRequest): Promise<RunResult> {
  const startedAt = new Date();
  const started = performance.now();
  const scenarios: ScenarioResult[] = [];
  for (const def of request.scenarios) {
    for (const profile of request.profiles) {
      request.signal.throwIfAborted();
      const result = await runOne(def, profile, request);
      scenarios.push(result);
      request.onResult?.(result);
    }
  }
  return {
    tool: { name: 'zerodrop', version: TOOL_VERSION, node: process.version },
    provider: request.provider,
    mode: request.nightly ? 'nightly' : 'default',
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - started),
    scenarios,
  };
}

async function runOne(def: ScenarioDefinition, profile: Profile, request: MatrixRequest): Promise<ScenarioResult> {
  const skipped = (reason: string): ScenarioResult => ({
    id: def.id,
    profile: profile.name,
    verdict: 'skipped',
    durationMs: 0,
    reason,
    assertions: [],
    counts: { requests: 0, ok: 0, failed: 0, byOutcome: {}, connections: 0 },
  });
  const missing = missingRequirement(profile);
  if (missing) return skipped(missing);
  let scenario;
  try {
    scenario = def.build(profile, optionsFor(def, request.overrides, request.nightly));
  } catch (error) {
    if (error instanceof ProfileCannotPlay) return skipped(error.message);
    throw error;
  }

  const recorder = new Recorder();
  request.onStart?.({ scenario: def.id, profile: profile.name, timeline: recorder.timeline });
  const started = performance.now();
  await using provider = (request.session ?? localSession()).create({ recorder, runId: randomBytes(4).toString('hex'), cwd: repoRoot });
  const outcome = await runScenario(scenario, {
    provider,
    recorder,
    signal: request.signal,
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
  });
  return {
    id: def.id,
    profile: profile.name,
    verdict: outcome.verdict,
    durationMs: Math.round(performance.now() - started),
    ...(outcome.reason ? { reason: outcome.reason } : {}),
    assertions: outcome.assertions,
    counts: countsOf(recorder.timeline),
    ...(request.keepTimeline === false ? {} : { timeline: recorder.timeline }),
  };
}

export const TOOL_VERSION = '0.1.0';
