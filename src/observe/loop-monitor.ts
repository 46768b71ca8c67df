// Watches the harness's own event loop. A load generator on a lagging loop starts requests late
// and stamps times late, so a run whose loop lagged is inconclusive, never pass
// (docs/architecture.md). One HarnessSample per interval: the worst loop delay seen in it, and
// what the process did meanwhile (its CPU time, its garbage collection's pauses, and on Linux how
// long its main thread waited for a core and how much CPU the hypervisor took from the machine), so
// that an inconclusive run says whether the harness was busy with itself or kept waiting, and by what;
// and the longest synchronous call it timed in the window (src/state/blocking-calls.ts).

import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import type { HarnessSample } from '../model/timeline.ts';
import { onBlockingCall, type BlockingCall } from '../state/blocking-calls.ts';
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
  let waited = runQueueWaitNs();
  let stolen = stealMs();
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
  let longestCall: BlockingCall | undefined;
  const stopHearing = onBlockingCall((call) => {
    if (longestCall === undefined || call.ms > longestCall.ms) longestCall = call;
  });

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
    const waitedNow = runQueueWaitNs();
    if (waited !== undefined && waitedNow !== undefined) s.waitMs = round((waitedNow - waited) / 1e6);
    waited = waitedNow;
    const stolenNow = stealMs();
    if (stolen !== undefined && stolenNow !== undefined) s.stealMs = stolenNow - stolen;
    stolen = stolenNow;
    if (longestCall !== undefined) s.longestCall = longestCall;
    longestCall = undefined;
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
      stopHearing();
    },
  };
}

/**
 * How long the calling thread (the main one: the monitor's timer runs on it) has been runnable but
 * not running, ns: the second field of Linux's /proc/thread-self/schedstat. Undefined elsewhere.
 */
function runQueueWaitNs(): number | undefined {
  try {
    const wait = Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[1]);
    return Number.isFinite(wait) ? wait : undefined;
  } catch {
    return undefined;
  }
}

/** CPU time the hypervisor has taken from this machine, summed over its CPUs, ms (/proc/stat's steal, in USER_HZ ticks of 10 ms). */
function stealMs(): number | undefined {
  try {
    const text = readFileSync('/proc/stat', 'utf8');
    const steal = Number(text.slice(0, text.indexOf('\n')).split(/\s+/)[8]);
    return Number.isFinite(steal) ? steal * 10 : undefined;
  } catch {
    return undefined;
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
