import { startLoopMonitor } from '../../src/observe/loop-monitor.ts';
import { Recorder } from '../../src/observe/recorder.ts';

/**
 * Watches a test's own event loop, as a run's harness check does. A load's start that was due may
 * be late by as much as the loop was held up without the generator being wrong (the test process
 * starved by a busy machine, as beside a campaign), so a timing assertion holds only while
 * `maxDelayMs()` stayed below what it allows. Compare with some margin: a timer also fires up to a
 * millisecond after its time, and a start waits for its turn behind the loop's other callbacks.
 * Hold it with `using`, so a test that fails before asking still stops the watch.
 */
export function watchLoop(): Disposable & { maxDelayMs: () => number } {
  const samples = new Recorder();
  const monitor = startLoopMonitor(samples, { intervalMs: 50 });
  return {
    /** Stops watching: the longest the loop was held up. */
    maxDelayMs: () => {
      monitor.stop();
      return Math.max(0, ...samples.timeline.harness.map((s) => s.loopDelayMaxMs));
    },
    [Symbol.dispose]: () => monitor.stop(),
  };
}
