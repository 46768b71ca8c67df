import { describe, expect, it } from 'vitest';
import { Recorder } from '../observe/recorder.ts';
import { TriggerWatch, whenTriggered } from './load-trigger.ts';
import type { LoadTrigger, Scenario } from '../model/scenario.ts';
import type { Provider } from '../providers/provider.ts';
import { runScenario } from './run-scenario.ts';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const trigger = (nth: number): LoadTrigger => ({ newPodReady: { workload: 'gateway', afterStep: 'rollout', nth } });

/** A rolling update of two pods, as the Timeline shows it: old pods ready before the step, new ones after. */
function rollout(recorder: Recorder): void {
  recorder.event('pod-created', { pod: 'old-1', workload: 'gateway' });
  recorder.event('pod-ready', { pod: 'old-1', workload: 'gateway' });
  recorder.event('pod-created', { pod: 'other', workload: 'backend' });
  recorder.event('chaos', { workload: 'gateway', detail: { step: 'rollout' } });
  recorder.event('pod-created', { pod: 'new-1', workload: 'gateway' });
  recorder.event('pod-ready', { pod: 'old-1', workload: 'gateway' });
  recorder.event('pod-created', { pod: 'other-2', workload: 'backend' });
  recorder.event('pod-ready', { pod: 'other-2', workload: 'backend' });
  recorder.event('pod-ready', { pod: 'new-1', workload: 'gateway' });
  recorder.event('pod-unready', { pod: 'new-1', workload: 'gateway' });
  recorder.event('pod-ready', { pod: 'new-1', workload: 'gateway' });
  recorder.event('pod-created', { pod: 'new-2', workload: 'gateway' });
  recorder.event('pod-ready', { pod: 'new-2', workload: 'gateway' });
}

describe('load triggers', () => {
  it('newPodReady counts only pods of the workload created after the step, each once', () => {
    const recorder = new Recorder();
    rollout(recorder);
    const firedAt = (nth: number) => {
      const watch = new TriggerWatch(trigger(nth));
      return recorder.timeline.events.findIndex((e) => watch.feed(e));
    };
    const kinds = recorder.timeline.events.map((e) => `${e.kind} ${e.pod ?? ''}`);
    expect(kinds[firedAt(1)]).toBe('pod-ready new-1');
    expect(firedAt(1)).toBe(8);
    expect(kinds[firedAt(2)]).toBe('pod-ready new-2');
    expect(firedAt(3)).toBe(-1);
    expect(new TriggerWatch({ newPodReady: { workload: 'gateway', afterStep: 'other-step', nth: 1 } }).feed(recorder.timeline.events[8]!)).toBe(false);
  });

  it('resolves for a trigger already met, waits for one still to come, and gives up when the run is over', async () => {
    const recorder = new Recorder();
    rollout(recorder);
    await expect(whenTriggered(trigger(2), recorder, new AbortController().signal)).resolves.toBeUndefined();
    const later = whenTriggered(trigger(3), recorder, new AbortController().signal);
    recorder.event('pod-created', { pod: 'new-3', workload: 'gateway' });
    recorder.event('pod-ready', { pod: 'new-3', workload: 'gateway' });
    await expect(later).resolves.toBeUndefined();
    const over = new AbortController();
    const never = whenTriggered(trigger(4), recorder, over.signal);
    over.abort(new Error('run over'));
    await expect(never).rejects.toThrow('run over');
  });
});

describe('a load with startOn, in a run', () => {
  /** A provider with nothing deployed: the Service it names is a server of the test's. */
  function fakeProvider(port: number): Provider {
    const unused = () => Promise.reject(new Error('not used here'));
    return {
      name: 'fake',
      capabilities: { multiNode: false, udp: false },
      deploy: async () => {},
      serviceAddress: () => ({ host: '127.0.0.1', port }),
      pods: () => [],
      deletePod: unused,
      scale: unused,
      rolloutRestart: unused,
      waitForRollout: unused,
      waitForPodGone: unused,
      teardown: async () => {},
      [Symbol.asyncDispose]: async () => {},
    };
  }
  const scenario = (afterStep: string): Scenario => ({
    id: 'triggered',
    profile: 'reference',
    topology: { workloads: [], services: [] },
    loads: [{ id: 'long-1-1', startMs: 0, startOn: { newPodReady: { workload: 'gateway', afterStep, nth: 1 } }, spec: { kind: 'single', service: 'gateway', path: '/', timeoutMs: 2000 } }],
    steps: [],
    end: { afterMs: 300 },
    maxDurationMs: 5000,
    expectations: [{ assert: 'noFailedRequests' }],
  });

  it('starts at its trigger; a run whose trigger never came is inconclusive, not a pass', async () => {
    await using server = await listen();
    const recorder = new Recorder();
    // The rollout the trigger waits for, as a provider would record it, 100 ms into the run.
    setTimeout(() => rollout(recorder), 100);
    const ran = await runScenario(scenario('rollout'), { provider: fakeProvider(server.port), recorder, signal: AbortSignal.timeout(10_000) });
    expect(ran.verdict).toBe('pass');
    expect(recorder.timeline.requests.map((r) => r.load)).toEqual(['long-1-1']);
    const start = recorder.timeline.events.find((e) => e.kind === 'load-start')!;
    expect(start.t).toBeGreaterThanOrEqual(recorder.timeline.events.find((e) => e.kind === 'pod-ready' && e.pod === 'new-1')!.t);

    const idle = new Recorder();
    setTimeout(() => rollout(idle), 100);
    const missed = await runScenario(scenario('no-such-step'), { provider: fakeProvider(server.port), recorder: idle, signal: AbortSignal.timeout(10_000) });
    expect(missed.verdict).toBe('inconclusive');
    expect(missed.reason).toBe('load never started: long-1-1 (waiting for pod 1 of gateway created after step no-such-step turning ready)');
    expect(idle.timeline.requests.length).toBe(0);
  });
});

async function listen(): Promise<{ port: number } & AsyncDisposable> {
  const server = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    [Symbol.asyncDispose]: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
