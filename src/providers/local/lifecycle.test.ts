// Pod lifecycle of the local provider with real processes: the deletion sequence, SIGKILL at the
// end of the grace period, force delete, readiness gating, scaling and rolling updates.

import { afterEach, describe, expect, it } from 'vitest';

import { eventsOf, firstEvent, type TimelineEvent } from '../../model/timeline.ts';
import { Recorder } from '../../observe/recorder.ts';
import type { LeftoverTracker } from '../../state/run-record.ts';
import { LocalProvider } from './local-provider.ts';
import { alive, httpWorkload, newProvider, podLine, tcpService, tcpWorkload } from '../../../test-support/local-provider.ts';
import { watchLoop } from '../../../suites/helpers/loop-watch.ts';

let current: LocalProvider | undefined;
const noTracker: LeftoverTracker = {
  processGroupStarted: () => undefined,
  processGroupEnded: () => undefined,
  tempDirCreated: () => undefined,
  tempDirRemoved: () => undefined,
  namespaceCreated: () => undefined,
  kindClusterCreating: () => undefined,
  kindClusterDeleted: () => undefined,
};
afterEach(async () => {
  await current?.teardown();
  current = undefined;
});

function setup(): { provider: LocalProvider; recorder: Recorder } {
  const made = newProvider();
  current = made.provider;
  return made;
}

function at(event: TimelineEvent | undefined, what: string): number {
  if (!event) throw new Error(`missing event: ${what}`);
  return event.t;
}

/** When the pod's delete was issued, its stop signal sent and its SIGKILL sent, on the run clock. */
function stopTimes(recorder: Recorder, pod: string): { deleted: number; sigterm: number; sigkill: number } {
  return {
    deleted: at(firstEvent(recorder.timeline, 'delete-issued', pod), 'delete-issued'),
    sigterm: at(firstEvent(recorder.timeline, 'sigterm', pod), 'sigterm'),
    sigkill: at(firstEvent(recorder.timeline, 'sigkill', pod), 'sigkill'),
  };
}

/** The pod's events of the given kinds, in order, as "kind" or "kind:detail". */
function sequence(recorder: Recorder, pod: string, kinds: readonly string[]): string[] {
  return recorder.timeline.events
    .filter((e) => e.pod === pod && kinds.includes(e.kind))
    .map((e) => {
      if (e.kind !== 'endpoint-changed') return e.kind;
      const d = e.detail ?? {};
      return d.removed ? 'endpoint:removed' : `endpoint:${d.ready ? 'R' : 'r'}${d.serving ? 'S' : 's'}${d.terminating ? 'T' : 't'}`;
    });
}

describe('deletion sequence', () => {
  it('runs delete -> terminating endpoint -> preStop -> SIGTERM -> exit -> removed, grace counted from the delete', async () => {
    // Upper bounds on timers hold while this process kept up: a busy machine delays them all alike.
    using loop = watchLoop();
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        workloads: [
          tcpWorkload('web', {
            preStop: { sleep: { seconds: 0.4 } },
            terminationGracePeriodSeconds: 3,
            env: { EXIT_DELAY_MS: '150' },
            // No readiness probe: a probe every 50 ms can meet the port closed by the exit before the
            // harness has handled the exit itself (both land in one turn of its event loop on a
            // loaded machine), and then `serving` turns false before `exit` is recorded. Once seen
            // beside a CI run: [..., 'sigterm', 'endpoint:rsT', 'exit', ...]. Serving following
            // readiness while terminating has a test of its own below.
            readinessProbe: undefined,
          }),
        ],
        services: [tcpService('web', 'web')],
      },
      { timeoutMs: 10_000 },
    );
    const [pod] = provider.pods('web');
    expect(pod?.ready).toBe(true);
    const name = pod!.name;
    // Ready at once without a probe, before node has run the program: a delete sooner than its
    // start-up (over 0.4 s on a loaded machine, once in CI) would meet no SIGTERM handler yet.
    await podLine(recorder, name, (line) => line === 'listening');
    await provider.deletePod(name);
    expect(provider.pods('web').find((p) => p.name === name)?.phase).toBe('Terminating');
    // The ReplicaSet replaces a deleted pod at once, while the old one still drains.
    expect(provider.pods('web').map((p) => p.name)).toEqual([name, 'web-2']);
    await provider.waitForPodGone(name, { timeoutMs: 5_000 });

    const events = sequence(recorder, name, ['delete-issued', 'endpoint-changed', 'prestop-start', 'prestop-end', 'sigterm', 'sigkill', 'exit', 'pod-removed']);
    // (before the delete: the endpoint's creation, ready at once without a probe)
    expect(events.slice(events.indexOf('delete-issued'))).toEqual([
      'delete-issued',
      'endpoint:rST',
      'prestop-start',
      'prestop-end',
      'sigterm',
      'exit',
      'endpoint:rsT',
      'endpoint:removed',
      'pod-removed',
    ]);
    const deleted = at(firstEvent(recorder.timeline, 'delete-issued', name), 'delete-issued');
    expect(firstEvent(recorder.timeline, 'delete-issued', name)?.detail).toEqual({ gracePeriodSeconds: 3 });
    const preStopEnd = at(firstEvent(recorder.timeline, 'prestop-end', name), 'prestop-end');
    const sigterm = at(firstEvent(recorder.timeline, 'sigterm', name), 'sigterm');
    const exit = firstEvent(recorder.timeline, 'exit', name);
    expect(preStopEnd - deleted).toBeGreaterThanOrEqual(390);
    expect(preStopEnd - deleted).toBeLessThan(600 + loop.maxDelayMs());
    expect(sigterm - preStopEnd).toBeLessThan(20 + loop.maxDelayMs());
    expect(at(exit, 'exit') - sigterm).toBeGreaterThanOrEqual(140);
    expect(exit?.detail).toEqual({ code: 0, signal: null });
    expect(firstEvent(recorder.timeline, 'sigterm', name)?.detail).toEqual({ signal: 'SIGTERM' });
    // The pod saw the signal (its output is captured line by line).
    expect(recorder.timeline.podOutput[name]?.map((l) => l.line)).toEqual(['listening', 'sigterm']);
    // With no programming delay and no other ready endpoint, the terminating pod keeps new
    // connections (KEP-1669 fallback) until its replacement is ready and programmed.
    const deprogrammed = at(firstEvent(recorder.timeline, 'lb-deprogrammed', name), 'lb-deprogrammed');
    const replacement = at(firstEvent(recorder.timeline, 'lb-programmed', 'web-2'), 'web-2 programmed');
    expect(deprogrammed).toBeGreaterThanOrEqual(replacement);
    expect(deprogrammed - replacement).toBeLessThan(5 + loop.maxDelayMs());
    expect(deprogrammed).toBeLessThan(at(firstEvent(recorder.timeline, 'prestop-end', name), 'prestop-end'));
    expect(provider.pods('web').map((p) => p.name)).toEqual(['web-2']);
  });

  it('SIGKILLs the whole process group when SIGTERM is ignored, never sooner than the kubelet\'s 2 s after the stop signal, even with a shorter grace', async () => {
    // Upper bounds on timers hold while this process kept up: a busy machine delays them all alike.
    using loop = watchLoop();
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        workloads: [
          tcpWorkload('stubborn', { terminationGracePeriodSeconds: 0.5, env: { ON_SIGTERM: 'ignore', GRANDCHILD: '1' } }),
        ],
        services: [],
      },
      { timeoutMs: 10_000 },
    );
    const name = provider.pods('stubborn')[0]!.name;
    const grandchild = Number((await podLine(recorder, name, (line) => line.startsWith('grandchild '))).split(' ')[1]);
    expect(alive(grandchild)).toBe(true);
    await provider.deletePod(name);
    await provider.waitForPodGone(name, { timeoutMs: 5_000 });
    const { deleted, sigterm, sigkill } = stopTimes(recorder, name);
    expect(sigterm - deleted).toBeLessThan(20 + loop.maxDelayMs());
    // A grace of 0.5 s: the kubelet's minimumGracePeriodInSeconds decides, not G.
    expect(sigkill - sigterm).toBeGreaterThanOrEqual(1995);
    expect(sigkill - sigterm).toBeLessThan(2200 + loop.maxDelayMs());
    expect(firstEvent(recorder.timeline, 'exit', name)?.detail).toEqual({ code: null, signal: 'SIGKILL' });
    expect(alive(grandchild)).toBe(false);
  });

  it('sends SIGTERM when preStop overruns the grace period, then SIGKILL after the 2 s extension', async () => {
    // Upper bounds on timers hold while this process kept up: a busy machine delays them all alike.
    using loop = watchLoop();
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        workloads: [
          tcpWorkload('slowstop', {
            terminationGracePeriodSeconds: 0.3,
            preStop: { sleep: { seconds: 10 } },
            env: { ON_SIGTERM: 'ignore' },
          }),
        ],
        services: [],
      },
      { timeoutMs: 10_000 },
    );
    const name = provider.pods('slowstop')[0]!.name;
    await provider.deletePod(name);
    await provider.waitForPodGone(name, { timeoutMs: 5_000 });
    const deleted = at(firstEvent(recorder.timeline, 'delete-issued', name), 'delete');
    const preStopEnd = firstEvent(recorder.timeline, 'prestop-end', name);
    expect(preStopEnd?.detail).toEqual({ timedOut: true });
    expect(at(preStopEnd, 'prestop-end') - deleted).toBeGreaterThanOrEqual(295);
    expect(at(firstEvent(recorder.timeline, 'sigterm', name), 'sigterm') - deleted).toBeLessThan(450 + loop.maxDelayMs());
    const sigkill = at(firstEvent(recorder.timeline, 'sigkill', name), 'sigkill');
    expect(sigkill - deleted).toBeGreaterThanOrEqual(2_290);
    expect(sigkill - deleted).toBeLessThan(2_600 + loop.maxDelayMs());
  });

  it('force delete (grace 0) removes the endpoint at once; on the node, the kubelet\'s minimum grace: preStop cut at 1 s, SIGKILL 2 s after the stop signal', async () => {
    // Upper bounds on timers hold while this process kept up: a busy machine delays them all alike.
    using loop = watchLoop();
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        // Ignores SIGTERM, so that SIGKILL is what ends it.
        workloads: [tcpWorkload('web', { preStop: { sleep: { seconds: 5 } }, terminationGracePeriodSeconds: 30, env: { ON_SIGTERM: 'ignore' } })],
        services: [tcpService('web', 'web')],
      },
      { timeoutMs: 10_000 },
    );
    const name = provider.pods('web')[0]!.name;
    await provider.deletePod(name, { gracePeriodSeconds: 0 });
    await provider.waitForPodGone(name, { timeoutMs: 6_000 });
    expect(sequence(recorder, name, ['delete-issued', 'endpoint-changed', 'prestop-start', 'prestop-end', 'sigterm', 'sigkill', 'exit', 'pod-removed']).slice(2)).toEqual([
      'delete-issued',
      'endpoint:removed',
      'prestop-start',
      'prestop-end',
      'sigterm',
      'sigkill',
      'exit',
      'pod-removed',
    ]);
    expect(firstEvent(recorder.timeline, 'delete-issued', name)?.detail).toEqual({ gracePeriodSeconds: 0 });
    const { deleted, sigterm, sigkill } = stopTimes(recorder, name);
    expect(sigterm - deleted).toBeGreaterThanOrEqual(990);
    expect(sigterm - deleted).toBeLessThan(1_400 + loop.maxDelayMs());
    expect(sigkill - sigterm).toBeGreaterThanOrEqual(1_990);
    expect(sigkill - sigterm).toBeLessThan(2_400 + loop.maxDelayMs());
    expect(firstEvent(recorder.timeline, 'sigkill', name)?.detail).toEqual({ reason: 'force-delete' });
    expect(firstEvent(recorder.timeline, 'exit', name)?.detail).toEqual({ code: null, signal: 'SIGKILL' });
  });

  it('force delete without a preStop hook: the stop signal at once, SIGKILL 2 s later unless the process exits first', async () => {
    // Upper bounds on timers hold while this process kept up: a busy machine delays them all alike.
    using loop = watchLoop();
    const { provider, recorder } = setup();
    await provider.deploy({ workloads: [tcpWorkload('web', { terminationGracePeriodSeconds: 30 })], services: [tcpService('web', 'web')] }, { timeoutMs: 10_000 });
    const name = provider.pods('web')[0]!.name;
    await provider.deletePod(name, { gracePeriodSeconds: 0 });
    await provider.waitForPodGone(name, { timeoutMs: 4_000 });
    // The test app exits on SIGTERM: no SIGKILL.
    expect(sequence(recorder, name, ['delete-issued', 'endpoint-changed', 'sigterm', 'sigkill', 'exit', 'pod-removed']).slice(2)).toEqual([
      'delete-issued',
      'endpoint:removed',
      'sigterm',
      'exit',
      'pod-removed',
    ]);
    expect(at(firstEvent(recorder.timeline, 'sigterm', name), 'sigterm') - at(firstEvent(recorder.timeline, 'delete-issued', name), 'delete-issued')).toBeLessThan(300 + loop.maxDelayMs());
  });

  it('keeps probing a terminating pod: serving follows readiness', async () => {
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        workloads: [httpWorkload('api', { env: { ON_SIGTERM: 'stay', FAIL_READY_ON_SIGTERM: '1' }, terminationGracePeriodSeconds: 1 })],
        services: [tcpService('api', 'api')],
      },
      { timeoutMs: 10_000 },
    );
    const name = provider.pods('api')[0]!.name;
    await provider.deletePod(name);
    await provider.waitForPodGone(name, { timeoutMs: 5_000 });
    expect(sequence(recorder, name, ['delete-issued', 'endpoint-changed', 'sigterm', 'pod-unready', 'sigkill']).slice(2)).toEqual([
      'delete-issued',
      'endpoint:rST',
      'sigterm',
      'pod-unready',
      'endpoint:rsT',
      'sigkill',
      'endpoint:removed',
    ]);
  });

  it('replaces a pod that crashes on its own', async () => {
    const { provider, recorder } = setup();
    await provider.deploy({ workloads: [tcpWorkload('web')], services: [tcpService('web', 'web')] }, { timeoutMs: 10_000 });
    const first = provider.pods('web')[0]!;
    // Make the pod's own process exit, as a crash would.
    const pid = firstEvent(recorder.timeline, 'pod-started', first.name)?.detail?.pid as number;
    process.kill(pid, 'SIGKILL');
    await provider.waitForPodGone(first.name, { timeoutMs: 2_000 });
    expect(firstEvent(recorder.timeline, 'pod-removed', first.name)?.detail).toEqual({ crashed: true });
    expect(firstEvent(recorder.timeline, 'delete-issued', first.name)).toBeUndefined();
    await recorder.waitFor((e) => e.kind === 'lb-programmed' && e.pod === 'web-2', { timeoutMs: 5_000, what: 'replacement' });
  });
});

describe("the run's record", () => {
  it('lists the groups of running pods and their preStop hooks, and drops each once it is reaped', async () => {
    const started: number[] = [];
    const ended: number[] = [];
    const tracker = { ...noTracker, processGroupStarted: (pid: number) => started.push(pid), processGroupEnded: (pid: number) => ended.push(pid) };
    const recorder = new Recorder();
    current = new LocalProvider({ recorder, runId: 'test', cwd: process.cwd(), tracker });
    const preStop = { exec: { command: ['sh', '-c', 'sleep 0.2'] } };
    await current.deploy({ workloads: [tcpWorkload('web', { replicas: 2, preStop, terminationGracePeriodSeconds: 3 })], services: [tcpService('web', 'web')] }, { timeoutMs: 10_000 });
    const [gone, kept] = current.pods('web').map((p) => ({ name: p.name, pid: firstEvent(recorder.timeline, 'pod-started', p.name)?.detail?.pid as number }));
    expect(started).toEqual([gone!.pid, kept!.pid]);
    await current.deletePod(gone!.name);
    await current.waitForPodGone(gone!.name, { timeoutMs: 5_000 });
    // The hook's group and the pod's, once reaped; never the pod that still runs.
    // Four groups: the two pods, the replacement the ReplicaSet starts at once, and the hook.
    const pods = eventsOf(recorder.timeline, 'pod-started').map((e) => e.detail?.pid as number);
    const hooks = started.filter((pid) => !pods.includes(pid));
    expect(started).toHaveLength(4);
    expect(hooks).toHaveLength(1);
    const hook = hooks[0]!;
    expect(ended.sort()).toEqual([gone!.pid, hook].sort());
    expect(ended).not.toContain(kept!.pid);
  });
});

describe('readiness', () => {
  it('a pod that listens late is not ready until it listens (tcpSocket), and deploy waits for it', async () => {
    const { provider, recorder } = setup();
    const start = recorder.now();
    const deploying = provider.deploy(
      { workloads: [tcpWorkload('late', { env: { LISTEN_DELAY_MS: '600' } })], services: [tcpService('late', 'late')] },
      { timeoutMs: 10_000 },
    );
    await recorder.waitFor((e) => e.kind === 'pod-started', { timeoutMs: 5_000, what: 'start' });
    await new Promise((r) => setTimeout(r, 300));
    expect(provider.pods('late')[0]).toMatchObject({ phase: 'Running', ready: false });
    await deploying;
    const name = provider.pods('late')[0]!.name;
    const started = at(firstEvent(recorder.timeline, 'pod-started', name), 'started');
    const ready = at(firstEvent(recorder.timeline, 'pod-ready', name), 'ready');
    expect(ready - started).toBeGreaterThanOrEqual(580);
    expect(recorder.now() - start).toBeGreaterThanOrEqual(600);
    // Not-ready pods are listed, with ready:false, before they turn ready.
    expect(sequence(recorder, name, ['endpoint-changed', 'lb-programmed'])).toEqual(['endpoint:rst', 'endpoint:RSt', 'lb-programmed']);
  });

  it('httpGet probes pass on 2xx only (503 keeps the pod unready)', async () => {
    const { provider, recorder } = setup();
    await provider.deploy({ workloads: [httpWorkload('api', { env: { READY_AFTER_MS: '500' } })], services: [] }, { timeoutMs: 10_000 });
    const name = provider.pods('api')[0]!.name;
    const started = at(firstEvent(recorder.timeline, 'pod-started', name), 'started');
    expect(at(firstEvent(recorder.timeline, 'pod-ready', name), 'ready') - started).toBeGreaterThanOrEqual(450);
  });

  it('deploy fails with the crash output when pods cannot start', async () => {
    const { provider } = setup();
    await expect(
      provider.deploy(
        { workloads: [tcpWorkload('broken', { command: ['node', '-e', 'console.error("boom"); process.exit(3)'] })], services: [] },
        { timeoutMs: 1_000 },
      ),
    ).rejects.toThrow(/broken 0\/1 ready \(last crash broken-\d+: boom\)/);
  });
});

describe('deployment controller', () => {
  it('scales down not-ready pods first, then the newest', async () => {
    const { provider, recorder } = setup();
    await provider.deploy(
      {
        workloads: [
          httpWorkload('api', { replicas: 3, terminationGracePeriodSeconds: 1, env: { UNREADY_POD: 'api-1', UNREADY_AFTER_MS: '800' } }),
        ],
        services: [tcpService('api', 'api')],
      },
      { timeoutMs: 10_000 },
    );
    expect(provider.pods('api').map((p) => p.name)).toEqual(['api-1', 'api-2', 'api-3']);
    await recorder.waitFor((e) => e.kind === 'pod-unready' && e.pod === 'api-1', { timeoutMs: 5_000, what: 'api-1 unready' });
    await provider.scale('api', 2);
    expect(eventsOf(recorder.timeline, 'delete-issued').map((e) => e.pod)).toEqual(['api-1']);
    await provider.scale('api', 1);
    expect(eventsOf(recorder.timeline, 'delete-issued').map((e) => e.pod)).toEqual(['api-1', 'api-3']);
    expect(eventsOf(recorder.timeline, 'scale').map((e) => e.detail)).toEqual([
      { from: 3, to: 2 },
      { from: 2, to: 1 },
    ]);
    await provider.waitForPodGone('api-3', { timeoutMs: 5_000 });
    await provider.waitForPodGone('api-1', { timeoutMs: 5_000 });
    expect(provider.pods('api').map((p) => p.name)).toEqual(['api-2']);
    expect(eventsOf(recorder.timeline, 'pod-created')).toHaveLength(3);
  });

  it('rolls out with maxSurge 1 / maxUnavailable 0 without dropping below replicas ready pods', async () => {
    const { provider, recorder } = setup();
    const replicas = 3;
    await provider.deploy(
      {
        workloads: [
          tcpWorkload('web', {
            replicas,
            preStop: { sleep: { seconds: 0.2 } },
            terminationGracePeriodSeconds: 1,
            env: { LISTEN_DELAY_MS: '150' },
          }),
        ],
        services: [tcpService('web', 'web')],
      },
      { timeoutMs: 10_000 },
    );
    const before = provider.pods('web').map((p) => p.name);
    let minReady = Infinity;
    let maxActive = 0;
    const unsubscribe = recorder.onEvent(() => {
      const pods = provider.pods('web');
      minReady = Math.min(minReady, pods.filter((p) => p.phase === 'Running' && p.ready).length);
      maxActive = Math.max(maxActive, pods.filter((p) => p.phase !== 'Terminating').length);
    });
    await provider.rolloutRestart('web');
    await provider.waitForRollout('web', { timeoutMs: 15_000 });
    unsubscribe();
    const after = provider.pods('web');
    expect(after).toHaveLength(replicas);
    expect(after.every((p) => p.ready && p.phase === 'Running' && !before.includes(p.name))).toBe(true);
    expect(minReady).toBeGreaterThanOrEqual(replicas);
    expect(maxActive).toBeLessThanOrEqual(replicas + 1);
    // Complete only once the old pods are gone, not merely deleted.
    const complete = at(firstEvent(recorder.timeline, 'rollout-complete'), 'rollout-complete');
    for (const name of before) expect(at(firstEvent(recorder.timeline, 'pod-removed', name), `${name} removed`)).toBeLessThanOrEqual(complete);
    expect(firstEvent(recorder.timeline, 'rollout-complete')?.detail).toEqual({ generation: 2 });
  });
});
