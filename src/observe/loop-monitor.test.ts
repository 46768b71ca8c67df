import { setTimeout as delay } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
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
