// A container's probe worker, as the kubelet's (pkg/kubelet/prober/worker.go,
// https://kubernetes.io/docs/concepts/configuration/liveness-readiness-startup-probes/):
//  - one worker per probe of a running container; the first attempt once initialDelaySeconds
//    have passed since the container started, then one every periodSeconds (start to start; an
//    attempt that takes longer delays the next one);
//  - the result starts as: readiness failure (not ready), liveness success, startup unknown;
//  - it changes only after successThreshold consecutive successes or failureThreshold consecutive
//    failures (successThreshold must be 1 for liveness and startup, the API server checks);
//  - liveness and readiness wait until the startup probe has succeeded;
//  - a failed liveness or startup probe ends the worker's run: the container is restarted and a
//    new worker starts with the new container;
//  - every failed attempt is an `Unhealthy` event (prober.go records one per failure).
// Defaults: periodSeconds 10, timeoutSeconds 1, successThreshold 1, failureThreshold 3.

import type { ProbeSpec } from './pod-types.ts';
import type { ProbeResult } from './probe-checks.ts';
import type { Clock } from './termination.ts';

export type ProbeKind = 'readiness' | 'liveness' | 'startup';

/** The kubelet's probe parameters with their defaults. */
export function probeTiming(spec: ProbeSpec): { initialDelayMs: number; periodMs: number; timeoutMs: number; successThreshold: number; failureThreshold: number } {
  return {
    initialDelayMs: (spec.initialDelaySeconds ?? 0) * 1000,
    periodMs: Math.max(1, spec.periodSeconds ?? 10) * 1000,
    timeoutMs: Math.max(1, spec.timeoutSeconds ?? 1) * 1000,
    successThreshold: Math.max(1, spec.successThreshold ?? 1),
    failureThreshold: Math.max(1, spec.failureThreshold ?? 3),
  };
}

/** The consecutive-result counting of worker.go: returns the new result when it changes. */
export class ProbeCounter {
  result: boolean | undefined;
  private last: boolean | undefined;
  private run = 0;
  private readonly successThreshold: number;
  private readonly failureThreshold: number;
  constructor(kind: ProbeKind, successThreshold: number, failureThreshold: number) {
    this.successThreshold = successThreshold;
    this.failureThreshold = failureThreshold;
    this.result = kind === 'readiness' ? false : kind === 'liveness' ? true : undefined;
  }

  record(ok: boolean): boolean | undefined {
    if (this.last === ok) this.run++;
    else {
      this.last = ok;
      this.run = 1;
    }
    if ((!ok && this.run < this.failureThreshold) || (ok && this.run < this.successThreshold)) return undefined;
    if (this.result === ok) return undefined;
    this.result = ok;
    return ok;
  }
}

export interface ProberHooks {
  check(timeoutMs: number): Promise<ProbeResult>;
  /** The probe's result changed (readiness: ready or not; liveness/startup: false = restart, true = started). */
  changed(ok: boolean): void;
  failed(message: string): void;
}

export class Prober {
  readonly kind: ProbeKind;
  private readonly timing: ReturnType<typeof probeTiming>;
  private readonly counter: ProbeCounter;
  private readonly hooks: ProberHooks;
  private readonly clock: Clock;
  private timer: unknown;
  private stopped = false;

  constructor(kind: ProbeKind, spec: ProbeSpec, hooks: ProberHooks, clock: Clock) {
    this.kind = kind;
    this.timing = probeTiming(spec);
    this.counter = new ProbeCounter(kind, kind === 'readiness' ? this.timing.successThreshold : 1, this.timing.failureThreshold);
    this.hooks = hooks;
    this.clock = clock;
  }

  /** Starts probing; `startedAt` is the clock time the container started. */
  start(startedAt: number): void {
    this.schedule(Math.max(0, startedAt + this.timing.initialDelayMs - this.clock.now()));
  }

  stop(): void {
    this.stopped = true;
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = this.clock.setTimeout(() => void this.tick(), ms);
  }

  private async tick(): Promise<void> {
    this.timer = undefined;
    const began = this.clock.now();
    const result = await this.hooks.check(this.timing.timeoutMs);
    if (this.stopped) return;
    if (!result.ok) this.hooks.failed(result.message ?? 'probe failed');
    const changed = this.counter.record(result.ok);
    if (changed !== undefined) {
      this.hooks.changed(changed);
      // A liveness failure restarts the container; a startup probe is done once it passed or failed.
      if ((this.kind === 'liveness' && !changed) || this.kind === 'startup') return;
    }
    this.schedule(Math.max(0, this.timing.periodMs - (this.clock.now() - began)));
  }
}
