// Watches the harness's own event loop. A load generator on a lagging loop starts requests late
// and stamps times late, so a run whose loop lagged is inconclusive, never pass
// (docs/architecture.md). One HarnessSample per interval: the worst loop delay seen in it.

import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { Recorder } from './recorder.ts';

export interface LoopMonitor {
  /** Stops sampling, after recording a last sample for the interval in progress. */
  stop(): void;
}

export function startLoopMonitor(recorder: Recorder, { intervalMs = 100 }: { intervalMs?: number } = {}): LoopMonitor {
  if (!Number.isFinite(intervalMs) || intervalMs < 10) throw new RangeError(`intervalMs must be >= 10, got ${intervalMs}`);
  // The histogram's own timer fires every `resolution` ms and records how late it was (ns).
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let due = performance.now() + intervalMs;

  const sample = (): void => {
    const now = performance.now();
    // The sampling timer's own lateness is a second witness: when the loop was blocked right up to
    // this tick, the histogram's timer may not have had its turn yet to record it.
    const ownLateMs = Math.max(0, now - due);
    const histogramMs = histogram.count > 0 ? histogram.max / 1e6 : 0;
    recorder.harness({ t: recorder.now(), loopDelayMaxMs: Math.max(histogramMs, ownLateMs) });
    histogram.reset();
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
    },
  };
}
