import { describe, expect, it } from 'vitest';
import { FakeClock } from '../../../../test-support/fake-clock.ts';
import { Prober, type ProbeKind } from './prober.ts';
import type { ProbeSpec } from './pod-types.ts';

/**
 * A prober on a fake clock whose check answers `ok(t)` (after `takesMs`); `syncOnFirstSeen` stands
 * for the pod worker, which syncs the pod (triggers readiness) when a worker first sees its container.
 */
function probe(kind: ProbeKind, spec: ProbeSpec, ok: (t: number) => boolean, { takesMs = 0, syncOnFirstSeen = true } = {}) {
  const clock = new FakeClock();
  const attempts: number[] = [];
  const changes: { t: number; ok: boolean }[] = [];
  const prober: Prober = new Prober(
    kind,
    spec,
    {
      check: () => {
        attempts.push(clock.t);
        const answer = ok(clock.t);
        return takesMs === 0 ? Promise.resolve({ ok: answer }) : new Promise((resolve) => clock.setTimeout(() => resolve({ ok: answer }), takesMs));
      },
      changed: (result) => changes.push({ t: clock.t, ok: result }),
      failed: () => {},
      firstSeen: () => {
        if (syncOnFirstSeen) prober.trigger();
      },
    },
    clock,
  );
  return { clock, prober, attempts, changes };
}

const listening = (from: number) => (t: number) => t >= from;

describe('Prober, as the kubelet schedules its attempts', () => {
  it('without a pod sync, the first attempt is the ticker\'s, which runs from the pod\'s admission, not the container\'s start', async () => {
    const { clock, prober, attempts, changes } = probe('readiness', { periodSeconds: 10 }, listening(500));
    prober.start(300, 0);
    await clock.advanceSettled(25_000);
    expect(attempts).toEqual([10_000, 20_000]);
    expect(changes).toEqual([{ t: 10_000, ok: true }]);
  });

  it('the sync that sees the container start runs the readiness probe at once, and the ticker restarts from it', async () => {
    const { clock, prober, attempts, changes } = probe('readiness', { periodSeconds: 10 }, listening(500));
    prober.start(300, 0);
    await clock.advanceSettled(1_000);
    prober.trigger();
    await clock.advanceSettled(24_000);
    // Ready at the sync (the 1 s relist), then the ticker from there: 11 s, 21 s.
    expect(changes).toEqual([{ t: 1_000, ok: true }]);
    expect(attempts).toEqual([1_000, 11_000, 21_000]);
  });

  it('a container not listening yet at the sync is probed twice at once (its initial result is a change the pod is synced for), then a period later', async () => {
    const { clock, prober, attempts, changes } = probe('readiness', { periodSeconds: 15 }, listening(2_000));
    prober.start(300, 0);
    await clock.advanceSettled(1_000);
    prober.trigger();
    await clock.advanceSettled(20_000);
    expect(attempts).toEqual([1_000, 1_000, 16_000]);
    expect(changes).toEqual([{ t: 16_000, ok: true }]);
  });

  it('a sync before initialDelaySeconds probes nothing but restarts the ticker: delay 5 s, period 10 s is ready about 10 s after the start', async () => {
    const { clock, prober, attempts, changes } = probe('readiness', { initialDelaySeconds: 5, periodSeconds: 10 }, listening(0));
    prober.start(300, 0);
    await clock.advanceSettled(1_000);
    prober.trigger();
    await clock.advanceSettled(15_000);
    expect(attempts).toEqual([11_000]);
    expect(changes).toEqual([{ t: 11_000, ok: true }]);
  });

  it('a ready container is not probed by a sync, and liveness never is', async () => {
    const readiness = probe('readiness', { periodSeconds: 10 }, listening(0));
    readiness.prober.start(0, 0);
    await readiness.clock.advanceSettled(1_000);
    readiness.prober.trigger();
    await readiness.clock.advanceSettled(1_000);
    readiness.prober.trigger();
    await readiness.clock.advanceSettled(1_000);
    expect(readiness.attempts).toEqual([1_000]);

    const liveness = probe('liveness', { initialDelaySeconds: 15, periodSeconds: 20 }, listening(0));
    liveness.prober.start(300, 0);
    liveness.prober.trigger();
    await liveness.clock.advanceSettled(45_000);
    // The first tick 15 s or more after the start.
    expect(liveness.attempts).toEqual([20_000, 40_000]);
  });

  it('an attempt that outlasts the period is followed by the next at once', async () => {
    const { clock, prober, attempts } = probe('liveness', { periodSeconds: 1, timeoutSeconds: 5 }, listening(0), { takesMs: 2_500 });
    prober.start(0, 0);
    await clock.advanceSettled(6_500);
    expect(attempts).toEqual([1_000, 3_500, 6_000]);
  });
});
