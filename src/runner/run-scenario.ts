// Carries out one Scenario on one provider, in the one direction the design allows:
// deploy -> load starts -> chaos steps run -> end condition -> load stops -> Timeline -> assertions.
// Nothing here decides a verdict from live state: it only records, then hands the Timeline to
// src/assert/. The caller owns the provider and tears it down (`await using`).

import { setTimeout as delay } from 'node:timers/promises';
import { redact } from '../observe/redact.ts';

import { evaluate, harnessResponsive, loadHeld, slowConnects } from '../assert/index.ts';
import { runChaosAction } from '../chaos/actions.ts';
import { startLoad, type AnyLoadHandle, type AnyLoadSummary } from '../load/start-load.ts';
import { plannedLoadMs, type LoadDriver } from '../load/drivers.ts';
import type { ChaosStep, EndCondition, PodRef, Scenario } from '../model/scenario.ts';
import { combineVerdicts, type AssertionResult, type Verdict } from '../model/verdict.ts';
import { joinRequestsToConnections } from '../observe/join.ts';
import { startLoopMonitor } from '../observe/loop-monitor.ts';
import { startActiveConnectionSampler } from '../observe/active-connections.ts';
import type { Recorder } from '../observe/recorder.ts';
import type { ScenarioProgress } from '../model/progress.ts';
import type { Provider, StatedDrain } from '../providers/provider.ts';
import { skippedAfterDeploy } from './eligibility.ts';
import type { LeftoverTracker } from '../state/run-record.ts';
import { attributionOf, isHttpLoad } from './attribution.ts';
import { describeTrigger, whenTriggered } from './load-trigger.ts';

export type { ScenarioProgress } from '../model/progress.ts';

export interface RunScenarioOptions {
  provider: Provider;
  recorder: Recorder;
  signal: AbortSignal;
  onProgress?: (p: ScenarioProgress) => void;
  deployTimeoutMs?: number;
  /** Which client carries out the loads (src/load/drivers.ts); the built-in generators by default. */
  driver?: LoadDriver;
  /** The run's state record: an external driver's process group is listed there while it runs. */
  tracker?: LeftoverTracker;
  /**
   * Builds the scenario again with the drain bounds the deployed gateway's pods state, for a
   * gateway whose bounds are known only once it exists (a GatewayClass's dataplane, whose profile
   * states none): the loads and expectations that depend on the bounds are made from them.
   */
  rebuild?: (drain: StatedDrain) => Scenario;
}

export interface ScenarioOutcome {
  /** `skipped` only when the deployed system cannot carry the scenario (the exception of eligibility.ts). */
  verdict: Verdict;
  assertions: AssertionResult[];
  /** Why the run could not be measured, when it could not. */
  reason?: string;
  /** One summary per load: requests, streams or packets, each with its own counters. */
  loads: AnyLoadSummary[];
}

export async function runScenario(built: Scenario, opts: RunScenarioOptions): Promise<ScenarioOutcome> {
  const { provider, recorder, signal } = opts;
  let scenario = built;
  const progress = (phase: ScenarioProgress['phase'], message?: string) =>
    opts.onProgress?.({ scenario: scenario.id, profile: scenario.profile, phase, ...(message ? { message } : {}) });

  progress('deploying');
  try {
    await provider.deploy(scenario.topology, { signal, timeoutMs: opts.deployTimeoutMs ?? 30_000 });
  } catch (error) {
    signal.throwIfAborted();
    const skipped = skippedAfterDeploy(provider, scenario, error);
    if (skipped !== undefined) return { verdict: 'skipped', assertions: [], reason: skipped, loads: [] };
    return { verdict: 'inconclusive', assertions: [], reason: `deploy failed: ${message(error)}`, loads: [] };
  }
  const cannot = skippedAfterDeploy(provider, scenario);
  if (cannot !== undefined) return { verdict: 'skipped', assertions: [], reason: cannot, loads: [] };
  if (opts.rebuild) {
    const drain = scenario.topology.workloads.map((w) => provider.statedDrain?.(w.name)).find((d) => d !== undefined);
    if (drain) {
      scenario = { ...opts.rebuild(drain), topology: scenario.topology };
      recorder.event('note', { message: `drain bounds from the deployed pods: minimum ${drain.minDrainSeconds} s, timeout ${drain.drainTimeoutSeconds} s (${drain.source})`, detail: { drain } });
    }
  }

  // The scenario's own abort: the deadline, a failed step, or the caller's signal.
  const run = new AbortController();
  const onOuterAbort = () => run.abort(signal.reason);
  signal.addEventListener('abort', onOuterAbort, { once: true });
  const deadline = setTimeout(() => run.abort(new DeadlineExceeded(scenario.maxDurationMs)), scenario.maxDurationMs);

  const monitor = startLoopMonitor(recorder, { intervalMs: 100 });
  const activeConnections = startActiveConnectionSampler(recorder, { intervalMs: 100 });
  const loads: AnyLoadHandle[] = [];
  const loadTimers: NodeJS.Timeout[] = [];
  /** Loads waiting for their trigger (startOn), with the trigger in words. */
  const waiting = new Map<string, string>();
  /** Aborted when the run is over: a load still waiting then never starts. */
  const untriggered = new AbortController();
  const t0 = recorder.now();
  let reason: string | undefined;
  let stoppedByDeadline = false;

  progress('running');
  const noted = new Set<string>();
  try {
    for (const phase of scenario.loads) {
      const attribution = isHttpLoad(phase.spec) ? attributionOf(scenario.topology, phase.spec.service) : undefined;
      if (attribution && !noted.has(attribution.note)) {
        noted.add(attribution.note);
        recorder.event('note', { message: attribution.note, detail: { attribution: attribution.names } });
      }
      const start = () => {
        recorder.event('load-start', { message: `load ${phase.id} started`, detail: { load: phase.id } });
        try {
          loads.push(
            startLoad(phase.id, phase.spec, provider, recorder, run.signal, {
              ...(opts.driver ? { driver: opts.driver } : {}),
              ...(opts.tracker ? { tracker: opts.tracker } : {}),
              plannedMs: plannedLoadMs(scenario, phase.startMs),
              ...(attribution ? { names: attribution.names } : {}),
            }),
          );
        } catch (error) {
          // A load that cannot start (a driver that does not fit it) stops the run: inconclusive.
          // From a timer a throw would escape the run, so it aborts instead.
          run.abort(error);
        }
      };
      if (phase.startOn) {
        const trigger = phase.startOn;
        waiting.set(phase.id, describeTrigger(trigger));
        whenTriggered(trigger, recorder, AbortSignal.any([run.signal, untriggered.signal])).then(
          () => {
            waiting.delete(phase.id);
            start();
          },
          () => {},
        );
      } else if (phase.startMs <= 0) start();
      else loadTimers.push(setTimeout(start, phase.startMs));
    }
    const steps = runSteps(scenario.steps, provider, recorder, t0, run.signal, (m) => progress('running', m));
    await Promise.all([steps, waitForEnd(scenario.end, provider, recorder, run.signal, scenario.maxDurationMs)]);
    if (settleMs(scenario.end) > 0) {
      progress('settling');
      await sleep(settleMs(scenario.end), run.signal);
    }
  } catch (error) {
    signal.throwIfAborted();
    stoppedByDeadline = error instanceof DeadlineExceeded;
    reason = stoppedByDeadline ? message(error) : `run stopped: ${message(error)}`;
  } finally {
    clearTimeout(deadline);
    for (const timer of loadTimers) clearTimeout(timer);
    signal.removeEventListener('abort', onOuterAbort);
  }

  // A load whose moment never came was not driven: a pass lacks what it would have shown.
  const undriven =
    waiting.size > 0 ? `load${waiting.size > 1 ? 's' : ''} never started: ${[...waiting].map(([id, trigger]) => `${id} (waiting for ${trigger})`).join(', ')}` : undefined;
  untriggered.abort();
  const summaries = await Promise.all(loads.map((l) => l.stop()));
  for (const s of summaries) recorder.event('load-stop', { message: `load ${s.load} stopped`, detail: { load: s.load } });
  monitor.stop();
  activeConnections.stop();
  signal.throwIfAborted();

  progress('evaluating');
  await provider.completeRecords?.();
  joinRequestsToConnections(recorder.timeline);
  const assertions = [
    ...evaluate(scenario.expectations, recorder.timeline),
    loadHeld(summaries, { slowConnects: slowConnects(recorder.timeline.requests) }),
    harnessResponsive(recorder.timeline),
  ];
  let verdict = combineVerdicts(assertions);
  // A run that did not reach its end is never a pass, whatever was measured before it stopped. One
  // the harness stopped (a load it could not drive, a chaos action that failed) is not a fail either:
  // its stop cut what was in flight, so its failures may be its own. A run past its time bound keeps
  // its fail: the system did not finish (a pod that never exits).
  if (reason !== undefined && (verdict === 'pass' || !stoppedByDeadline)) verdict = 'inconclusive';
  else if (undriven !== undefined && verdict !== 'fail') {
    verdict = 'inconclusive';
    reason = undriven;
  }
  return { verdict, assertions, ...(reason !== undefined ? { reason } : {}), loads: summaries };
}

class DeadlineExceeded extends Error {
  constructor(ms: number) {
    super(`scenario did not finish within its bound of ${(ms / 1000).toFixed(1)} s`);
  }
}

function settleMs(end: EndCondition): number {
  return 'settleMs' in end ? end.settleMs : 0;
}

async function runSteps(
  steps: ChaosStep[],
  provider: Provider,
  recorder: Recorder,
  t0: number,
  signal: AbortSignal,
  report: (message: string) => void,
): Promise<void> {
  const done = new Map<string, Promise<void>>();
  const runOne = async (step: ChaosStep): Promise<void> => {
    const when = step.when;
    if ('atMs' in when) {
      await sleep(Math.max(0, t0 + when.atMs - recorder.now()), signal);
    } else if ('afterStep' in when) {
      const before = done.get(when.afterStep);
      if (!before) throw new Error(`step ${step.id} waits for unknown step ${when.afterStep}`);
      await before;
      await sleep(when.delayMs, signal);
    } else {
      await recorder.waitFor(
        (e) => e.t >= t0 && e.kind === when.onEvent && (when.workload === undefined || e.workload === when.workload),
        { timeoutMs: 10 * 60_000, signal, what: `${when.onEvent} before step ${step.id}` },
      );
      await sleep(when.delayMs, signal);
    }
    report(`step ${step.id}: ${step.action.kind}`);
    await runChaosAction(provider, recorder, step.id, step.action);
  };
  // Steps are declared in dependency order, so a step's predecessor is already in the map.
  for (const step of steps) done.set(step.id, runOne(step));
  await Promise.all(done.values());
}

/**
 * The pods a chaos step shut down, once the step has run: the pod it deleted, or for a step on a
 * whole workload (scale down) every pod of it that was terminating right after the step.
 */
async function podsOfStep(ref: PodRef, provider: Provider, recorder: Recorder, signal: AbortSignal, timeoutMs: number): Promise<string[]> {
  if (!('step' in ref)) throw new Error('an end condition must name the pod by its step');
  const event = await recorder.waitFor((e) => e.kind === 'chaos' && e.detail?.['step'] === ref.step && (e.pod !== undefined || e.workload !== undefined), {
    timeoutMs,
    signal,
    what: `chaos step ${ref.step}`,
  });
  if (event.pod !== undefined) return [event.pod];
  // The chaos event is written just before the action: let the (synchronous) API call take effect.
  await sleep(0, signal);
  const workload = event.workload ?? '';
  const replicas = event.detail?.['replicas'];
  if (typeof replicas === 'number') {
    // On a cluster a scale down only sets spec.replicas: the ReplicaSet controller picks and deletes
    // the pods afterwards (tens of milliseconds later, measured on a netns cluster), and the pod
    // watch shows them Terminating later still. Wait until no more than `replicas` are left running,
    // or the pods the step shut down would be none and the run would end under their drain.
    const deadline = performance.now() + Math.min(timeoutMs, 30_000);
    while (provider.pods(workload).filter((p) => p.phase !== 'Terminating').length > replicas && performance.now() < deadline) await sleep(20, signal);
  }
  return provider.pods(workload).filter((p) => p.phase === 'Terminating').map((p) => p.name);
}

async function waitForEnd(end: EndCondition, provider: Provider, recorder: Recorder, signal: AbortSignal, timeoutMs: number) {
  if ('podGone' in end) {
    const pods = await podsOfStep(end.podGone, provider, recorder, signal, timeoutMs);
    for (const pod of pods) await provider.waitForPodGone(pod, { timeoutMs, signal });
  } else if ('rolloutComplete' in end) {
    await recorder.waitFor((e) => e.kind === 'rollout-start' && e.workload === end.rolloutComplete, {
      timeoutMs,
      signal,
      what: `rollout of ${end.rolloutComplete} to start`,
    });
    await provider.waitForRollout(end.rolloutComplete, { timeoutMs, signal });
  } else if ('nodeDrained' in end) {
    const drained = await recorder.waitFor((e) => e.kind === 'note' && e.detail?.['step'] === end.nodeDrained && Array.isArray(e.detail['evicted']), {
      timeoutMs,
      signal,
      what: `drain of step ${end.nodeDrained}`,
    });
    for (const pod of drained.detail?.['evicted'] as string[]) await provider.waitForPodGone(pod, { timeoutMs, signal });
  } else if ('workloadGone' in end) {
    // Pods of a workload scaled to 0 leave one by one; wait until none is left.
    for (let pods = provider.pods(end.workloadGone); pods.length > 0; pods = provider.pods(end.workloadGone)) {
      await Promise.all(pods.map((p) => provider.waitForPodGone(p.name, { timeoutMs, signal })));
    }
  } else {
    await sleep(end.afterMs, signal);
  }
}

/** An error's text for the result; it may quote a server's reply, so known secrets are redacted. */
function message(error: unknown): string {
  return redact(error instanceof Error ? error.message : String(error));
}

/** Waits `ms`, rejecting as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return delay(ms, undefined, { signal });
}
