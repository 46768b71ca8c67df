// Runs every selected scenario against every selected profile, one at a time, each on a fresh
// provider that is torn down (`await using`) however the scenario ends: pass, fail, error or Ctrl-C.

import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import type { Profile } from '../profiles/profile.ts';
import type { LoadDriver } from '../load/drivers.ts';
import { localSession, type ProviderName, type ProviderSession } from '../providers/index.ts';
import { newSeed } from '../providers/local/programming-schedule.ts';
import { Recorder } from '../observe/recorder.ts';
import { countsOf, finishRecords, recordsName, type RunResult, type ScenarioResult } from '../report/results.ts';
import { RecordsStream } from '../report/records-file.ts';
import type { Reporter } from '../report/reporters/reporter.ts';
import type { Expectation } from '../model/scenario.ts';
import type { OptionValues } from '../model/verdict.ts';
import type { ScenarioDefinition } from '../scenarios/definition.ts';
import { packageRoot, TOOL_VERSION } from '../paths.ts';
import { runScenario, type ScenarioProgress } from './run-scenario.ts';
import { attributionNotes } from './attribution.ts';
import { eligibility } from './eligibility.ts';
import type { LeftoverTracker } from '../state/run-record.ts';
import type { StatedDrain } from '../providers/provider.ts';
import { isGatewayClassProfile, withDrain } from '../scenarios/gateway-class-profile.ts';

export interface MatrixRequest {
  provider: ProviderName;
  /** Seed of the local Service balancers' programming lags, for every pair; each pair draws its own when absent. */
  seed?: number;
  /** The cluster the scenarios run on (see providers/index.ts); the local provider when omitted. */
  session?: ProviderSession;
  scenarios: readonly ScenarioDefinition[];
  profiles: readonly Profile[];
  /** Only these pairs, in this order, instead of every scenario x profile. */
  pairs?: readonly { def: ScenarioDefinition; profile: Profile }[];
  /** Option overrides (`--set key=value`); each applies to the scenarios that have that option. */
  overrides: OptionValues;
  nightly: boolean;
  signal: AbortSignal;
  /** Hears each pair begin (as it starts recording), its phases and its result; the run's begin and end are the caller's. */
  reporter?: Pick<Reporter, 'onPairBegin' | 'onProgress' | 'onPairEnd'>;
  /** Keep each scenario's full Timeline in the result (for reports). */
  keepTimeline?: boolean;
  /**
   * The report directory: each pair's requests are written to its records file there as they arrive
   * (the `n`th pair's records/NN-...), and its result points at them. With keepTimeline only.
   */
  recordsDir?: string;
  /** The number of the first pair's records files (default 1): a run made of several calls numbers on. */
  recordsIndex?: number;
  /** Which client carries out the loads (`--driver`, src/load/drivers.ts); built-in when omitted. */
  driver?: LoadDriver;
  /** How many scenario x profile pairs run at once (`--workers`); 1, one after the other, by default. */
  concurrency?: number;
  /** The run's state record, where the external load drivers list their process groups (`zerodrop clean`). */
  tracker?: LeftoverTracker;
}

/**
 * A scenario's option values: its defaults, then (`randomBalancer`: a provider whose Service
 * balancer does not deal connections out in turn, a cluster) its cluster values, its nightly ones,
 * and the run's overrides, each over the one before.
 */
export function optionsFor(def: ScenarioDefinition, overrides: OptionValues, nightly: boolean, { randomBalancer = false }: { randomBalancer?: boolean } = {}): OptionValues {
  const options: OptionValues = { ...def.defaults };
  const layers = [...(randomBalancer && def.cluster ? [def.cluster] : []), ...(nightly ? [def.nightly] : []), overrides];
  for (const layer of layers) {
    for (const [key, value] of Object.entries(layer)) if (key in def.defaults && value !== undefined) options[key] = value;
  }
  return options;
}

export async function runMatrix(request: MatrixRequest): Promise<RunResult> {
  const startedAt = new Date();
  const started = performance.now();
  // Scenario x profile pairs in catalog order; `concurrency` lanes take the next pair as they free up,
  // each on a provider of its own (its own loopback block, src/providers/local/addresses.ts).
  const pairs = request.pairs ?? request.scenarios.flatMap((def) => request.profiles.map((profile) => ({ def, profile })));
  const scenarios: ScenarioResult[] = [];
  let next = 0;
  let failed = false;
  const lane = async (): Promise<void> => {
    while (next < pairs.length && !failed) {
      request.signal.throwIfAborted();
      const i = next++;
      const { def, profile } = pairs[i]!;
      try {
        scenarios[i] = await runOne(def, profile, request, (request.recordsIndex ?? 1) + i);
      } catch (error) {
        failed = true;
        throw error;
      }
      request.reporter?.onPairEnd?.(scenarios[i]);
    }
  };
  const lanes = Math.max(1, Math.min(request.concurrency ?? 1, pairs.length));
  const settled = await Promise.allSettled(Array.from({ length: lanes }, lane));
  const rejected = settled.find((s) => s.status === 'rejected');
  if (rejected) throw rejected.reason;
  return {
    tool: { name: 'zerodrop', version: TOOL_VERSION, node: process.version },
    provider: request.provider,
    ...(request.session?.kubernetesVersion ? { kubernetesVersion: request.session.kubernetesVersion } : {}),
    mode: request.nightly ? 'nightly' : 'default',
    startedAt: startedAt.toISOString(),
    durationMs: Math.round(performance.now() - started),
    scenarios,
  };
}

async function runOne(def: ScenarioDefinition, profile: Profile, request: MatrixRequest, n: number): Promise<ScenarioResult> {
  const skipped = (reason: string): ScenarioResult => ({
    id: def.id,
    profile: profile.name,
    verdict: 'skipped',
    durationMs: 0,
    reason,
    assertions: [],
    counts: { requests: 0, ok: 0, failed: 0, byOutcome: {}, connections: 0 },
  });
  const session = request.session ?? localSession();
  const options = optionsFor(def, request.overrides, request.nightly, { randomBalancer: session.capabilities.roundRobinServices !== true });
  const decided = eligibility(def, profile, { session, options, ...(request.driver ? { driver: request.driver } : {}) });
  if (!decided.runs) return skipped(decided.reason);
  const { scenario } = decided;

  const recorder = new Recorder();
  request.reporter?.onPairBegin?.({ scenario: def.id, profile: profile.name, timeline: recorder.timeline });
  const started = performance.now();
  await using provider = session.create({
    recorder,
    runId: randomBytes(4).toString('hex'),
    cwd: packageRoot,
    profile: profile.name,
    seed: request.seed ?? newSeed(),
  });
  const attribution = attributionNotes(scenario);
  // Declared after the provider, so disposed before it: an unfinished file is removed on the way out.
  const keep = request.keepTimeline !== false;
  const recordsAt = keep && request.recordsDir !== undefined ? { dir: request.recordsDir, name: recordsName(n, def.id, profile.name) } : undefined;
  await using records = recordsAt ? RecordsStream.open(join(recordsAt.dir, `${recordsAt.name}.requests.gz`), recorder.timeline.requests) : undefined;
  // A class's dataplane states its drain bounds in its pods' spec, read after deploy (unless the profile states them).
  const rebuild = isGatewayClassProfile(profile) && !profile.drain ? (drain: StatedDrain) => def.build(withDrain(profile, drain), options) : undefined;
  const outcome = await runScenario(scenario, {
    provider,
    recorder,
    signal: request.signal,
    ...(rebuild ? { rebuild } : {}),
    ...(request.driver ? { driver: request.driver } : {}),
    ...(request.tracker ? { tracker: request.tracker } : {}),
    ...(request.reporter?.onProgress ? { onProgress: (p: ScenarioProgress) => request.reporter?.onProgress?.(p) } : {}),
  });
  const pointer = records && recordsAt ? await finishRecords(recordsAt.dir, recordsAt.name, records, recorder.timeline) : undefined;
  return {
    id: def.id,
    profile: profile.name,
    verdict: outcome.verdict,
    durationMs: Math.round(performance.now() - started),
    ...(outcome.reason ? { reason: outcome.reason } : {}),
    assertions: outcome.assertions,
    counts: countsOf(recorder.timeline, notJudgedLoads(scenario.expectations), scenario.expectations.some((e) => e.assert === 'streamsIntact' && e.toEnd === true)),
    ...(provider.seed !== undefined ? { seed: provider.seed } : {}),
    options,
    ...(attribution.length > 0 ? { attribution } : {}),
    ...(keep ? { timeline: recorder.timeline } : {}),
    ...(pointer ? { records: pointer } : {}),
  };
}

/** The loads whose failed requests no assertion judges (overlong requests, cut by design): not counted as dropped. */
function notJudgedLoads(expectations: readonly Expectation[]): string[] {
  return expectations.flatMap((e) => (e.assert === 'noFailedRequests' ? (e.exceptLoads ?? []) : []));
}
