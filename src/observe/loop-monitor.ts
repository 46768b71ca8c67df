// Watches the harness's own event loop. A load generator on a lagging loop starts requests late
// and stamps times late, so a run whose loop lagged is inconclusive, never pass
// (docs/architecture.md). One HarnessSample per interval: the worst loop delay seen in it, and
// what the process did meanwhile (its CPU time and its garbage collection's pauses), so that an
// inconclusive run says whether the harness was busy with itself or the machine kept it waiting.

import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { HarnessSample } from '../model/timeline.ts';
import type { Recorder } from './recorder.ts';

export interface LoopMonitor {
  /** Stops sampling, after recording a last sample for the interval in progress. */
  stop(): void;
}

/** Samples kept open for garbage collections reported after their window closed (the observer's delivery is queued). */
const GC_LATE_WINDOWS = 8;

export function startLoopMonitor(recorder: Recorder, { intervalMs = 100 }: { intervalMs?: number } = {}): LoopMonitor {
  if (!Number.isFinite(intervalMs) || intervalMs < 10) throw new RangeError(`intervalMs must be >= 10, got ${intervalMs}`);
  // The histogram's own timer fires every `resolution` ms and records how late it was (ns).
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let windowStart = performance.now();
  let due = windowStart + intervalMs;
  let cpu = process.cpuUsage();
  // Windows on performance.now()'s axis (a gc entry's startTime is on it too), newest last.
  const recent: { from: number; to: number; sample: HarnessSample }[] = [];
  let pendingGcMs = 0;
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      const window = recent.find((w) => entry.startTime >= w.from && entry.startTime < w.to);
      if (window !== undefined) window.sample.gcMs = round(window.sample.gcMs! + entry.duration);
      else if (entry.startTime >= windowStart) pendingGcMs += entry.duration;
    }
  });
  gc.observe({ entryTypes: ['gc'] });

  const sample = (): void => {
    const now = performance.now();
    // The sampling timer's own lateness is a second witness: when the loop was blocked right up to
    // this tick, the histogram's timer may not have had its turn yet to record it.
    const ownLateMs = Math.max(0, now - due);
    const histogramMs = histogram.count > 0 ? histogram.max / 1e6 : 0;
    const used = process.cpuUsage(cpu);
    cpu = process.cpuUsage();
    const s: HarnessSample = {
      t: recorder.now(),
      loopDelayMaxMs: Math.max(histogramMs, ownLateMs),
      windowMs: round(now - windowStart),
      cpuMs: round((used.user + used.system) / 1000),
      gcMs: round(pendingGcMs),
    };
    recorder.harness(s);
    recent.push({ from: windowStart, to: now, sample: s });
    if (recent.length > GC_LATE_WINDOWS) recent.shift();
    pendingGcMs = 0;
    histogram.reset();
    windowStart = now;
    due = now + intervalMs;
  };

  const timer = setInterval(sample, intervalMs);
  timer.unref();
  let stopped = false;
  return {
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      due = Math.min(due, performance.now());
      sample();
      histogram.disable();
      gc.disconnect();
    },
  };
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
