// One clock for the whole run. Times are milliseconds since the run's origin, read from the
// monotonic `performance` clock so that NTP steps or a suspended laptop cannot reorder events.
// `performance.timeOrigin + performance.now()` is comparable across worker threads, which lets a
// generator moved into a worker still record on the same axis.

export class Clock {
  /** Absolute monotonic origin: performance.timeOrigin + performance.now() at construction. */
  readonly origin: number;
  /** Wall clock at the origin, for humans reading reports. */
  readonly originEpochMs: number;

  constructor(origin?: number) {
    this.origin = origin ?? performance.timeOrigin + performance.now();
    this.originEpochMs = Date.now() - (performance.timeOrigin + performance.now() - this.origin);
  }

  /**
   * The run-clock time of a wall-clock time read on this machine (a node agent's Event, a log line's
   * timestamp, a conntrack entry): what a process beside the harness stamped when it acted.
   */
  fromWallTime(epochMs: number): number {
    return epochMs - this.originEpochMs;
  }

  /** Milliseconds since the run's origin. */
  now(): number {
    return performance.timeOrigin + performance.now() - this.origin;
  }
}
