import { spawn } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { timedBlockingCall } from '../state/blocking-calls.ts';
import { startLoopMonitor } from './loop-monitor.ts';
import { Recorder } from './recorder.ts';

function blockFor(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // busy: the event loop cannot run
  }
}

describe('startLoopMonitor', () => {
  it('records one sample per interval, small while the loop is free', async () => {
    const recorder = new Recorder();
    const monitor = startLoopMonitor(recorder, { intervalMs: 50 });
    await delay(420);
    monitor.stop();
    const samples = recorder.timeline.harness;
    // ~8 interval samples plus the final one on stop.
    expect(samples.length).toBeGreaterThanOrEqual(6);
    expect(samples.length).toBeLessThanOrEqual(11);
    for (let i = 1; i < samples.length; i++) expect(samples[i]!.t).toBeGreaterThan(samples[i - 1]!.t);
    expect(Math.max(...samples.map((s) => s.loopDelayMaxMs))).toBeLessThan(100);
  });

  it('sees the loop blocked for 200 ms', async () => {
    const recorder = new Recorder();
    const monitor = startLoopMonitor(recorder, { intervalMs: 100 });
    await delay(150);
    const blockedAt = recorder.now();
    blockFor(200);
    await delay(250);
    monitor.stop();
    const samples = recorder.timeline.harness;
    const lagged = samples.filter((s) => s.loopDelayMaxMs > 150);
    expect(lagged.length).toBeGreaterThanOrEqual(1);
    expect(lagged[0]!.t).toBeGreaterThanOrEqual(blockedAt);
    expect(lagged[0]!.loopDelayMaxMs).toBeLessThan(400);
    // Reset each interval: the samples after the lag are small again.
    expect(samples.at(-1)!.loopDelayMaxMs).toBeLessThan(100);
  });

  it('records the CPU the blocked loop spent, and no more than its window', async () => {
    const recorder = new Recorder();
    const monitor = startLoopMonitor(recorder, { intervalMs: 100 });
    await delay(150);
    blockFor(200);
    await delay(250);
    monitor.stop();
    const samples = recorder.timeline.harness;
    const lagged = samples.find((s) => s.loopDelayMaxMs > 150)!;
    // Busy on its own thread: at least most of the 200 ms on the CPU.
    expect(lagged.cpuMs).toBeGreaterThan(150);
    expect(lagged.windowMs).toBeGreaterThanOrEqual(lagged.loopDelayMaxMs);
    for (const s of samples) expect(s.windowMs).toBeGreaterThan(0);
  });

  it('records garbage collection pauses in the window they began in', async () => {
    const recorder = new Recorder();
    const monitor = startLoopMonitor(recorder, { intervalMs: 50 });
    await delay(60);
    // Enough short-lived garbage for several young-generation collections, kept reachable for a while
    // so that the compiler cannot prove it dead and skip allocating it.
    let kept: { i: number }[] = [];
    let dropped = 0;
    for (let i = 0; i < 2_000_000; i++) {
      kept.push({ i });
      if (kept.length === 10_000) {
        dropped += kept.length;
        kept = [];
      }
    }
    expect(dropped).toBeGreaterThan(0);
    await delay(200);
    monitor.stop();
    const gcMs = recorder.timeline.harness.reduce((sum, s) => sum + (s.gcMs ?? 0), 0);
    expect(gcMs).toBeGreaterThan(0);
  });

  it.skipIf(process.platform !== 'linux')('records how long the main thread waited for a core while other processes held every one', async () => {
    const recorder = new Recorder();
    const monitor = startLoopMonitor(recorder, { intervalMs: 50 });
    // More busy processes than cores, each for 600 ms: the loop's timer wakes find no core free.
    const busy = Array.from({ length: availableParallelism() + 2 }, () =>
      spawn(process.execPath, ['-e', 'const end = Date.now() + 600; while (Date.now() < end);'], { stdio: 'ignore' }),
    );
    await Promise.all(busy.map((child) => new Promise((resolve) => child.once('exit', resolve))));
    monitor.stop();
    const samples = recorder.timeline.harness;
    for (const s of samples) {
      expect(s.waitMs).toBeGreaterThanOrEqual(0);
      expect(s.stealMs).toBeGreaterThanOrEqual(0);
    }
    expect(samples.reduce((sum, s) => sum + s.waitMs!, 0)).toBeGreaterThan(0);
  });

  it('names the longest timed blocking call of the window the loop lagged in', async () => {
    const recorder = new Recorder();
    const monitor = startLoopMonitor(recorder, { intervalMs: 100 });
    await delay(150);
    timedBlockingCall('a short one', () => blockFor(10));
    // Off the CPU, as spawn() waiting for its new process to exec is.
    timedBlockingCall('sleeping', () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200));
    await delay(250);
    monitor.stop();
    const samples = recorder.timeline.harness;
    const lagged = samples.find((s) => s.loopDelayMaxMs > 150)!;
    expect(lagged.longestCall?.what).toBe('sleeping');
    expect(lagged.longestCall!.ms).toBeGreaterThanOrEqual(195);
    expect(lagged.cpuMs).toBeLessThan(100);
    // Named in its own window only.
    expect(samples.filter((s) => s.longestCall !== undefined)).toEqual([lagged]);
    // Without a monitor listening, nothing is kept.
    timedBlockingCall('unheard', () => blockFor(10));
    expect(samples.filter((s) => s.longestCall !== undefined)).toEqual([lagged]);
  });

  it('stops recording after stop()', async () => {
    const recorder = new Recorder();
    const monitor = startLoopMonitor(recorder, { intervalMs: 20 });
    await delay(70);
    monitor.stop();
    const count = recorder.timeline.harness.length;
    await delay(80);
    expect(recorder.timeline.harness.length).toBe(count);
  });
});
