// A container's probe worker, as the kubelet's (pkg/kubelet/prober/worker.go and prober_manager.go,
// https://kubernetes.io/docs/concepts/configuration/liveness-readiness-startup-probes/):
//  - the kubelet starts one worker per probe when it admits the pod, and its ticker runs from then:
//    attempts come every periodSeconds on that grid, not counted from the container's start; one
//    that would come before initialDelaySeconds since the start is skipped (not a failure);
//  - while a container is started but not ready, every sync of its pod runs its readiness probe at
//    once and restarts the ticker from then (prober_manager.go UpdatePodStatus, the worker's
//    manualTriggerCh; https://github.com/kubernetes/kubernetes/issues/118815, and the docs since
//    https://github.com/kubernetes/website/pull/47727: while a container is not Ready, its
//    readiness probe may run at times other than periodSeconds). A pod is synced when the
//    kubelet's 1 s relist sees its container start, and when a readiness or startup result is
//    first set or changes; a trigger that comes while an attempt runs waits for it (the trigger
//    channel holds one);
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
  /** The worker saw its container for the first time and set its initial result: the kubelet syncs the pod for a readiness or startup worker. */
  firstSeen(): void;
}

export class Prober {
  readonly kind: ProbeKind;
  private readonly timing: ReturnType<typeof probeTiming>;
  private readonly counter: ProbeCounter;
  private readonly hooks: ProberHooks;
  private readonly clock: Clock;
  private timer: unknown;
  private stopped = false;
  private probing = false;
  /** A manual run asked for while an attempt ran. */
  private manualPending = false;
  /** The ticker's phase: attempts at anchor + k x periodSeconds. */
  private anchor = 0;
  private startedAt = 0;
  private seen = false;

  constructor(kind: ProbeKind, spec: ProbeSpec, hooks: ProberHooks, clock: Clock) {
    this.kind = kind;
    this.timing = probeTiming(spec);
    this.counter = new ProbeCounter(kind, kind === 'readiness' ? this.timing.successThreshold : 1, this.timing.failureThreshold);
    this.hooks = hooks;
    this.clock = clock;
  }

  /**
   * Starts probing the container that started at `startedAt`, on the ticker the kubelet started at
   * `origin` (when it admitted the pod). Its first attempt is the next tick, or a pod sync's.
   */
  start(startedAt: number, origin: number): void {
    this.startedAt = startedAt;
    this.anchor = origin;
    this.scheduleTick();
  }

  /** A sync of the pod: a readiness worker whose container is not ready runs now. */
  trigger(): void {
    if (this.stopped || this.kind !== 'readiness' || this.counter.result === true) return;
    if (this.probing) this.manualPending = true;
    else this.runManual();
  }

  stop(): void {
    this.stopped = true;
    this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  private runManual(): void {
    this.clearTimer();
    this.anchor = this.clock.now();
    void this.attempt();
  }

  /** The next tick after now; a tick that fell while an attempt ran comes at once (the ticker holds one). */
  private scheduleTick(lastAttemptAt?: number): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const period = this.timing.periodMs;
    const after = lastAttemptAt ?? now;
    const next = this.anchor + (Math.floor((after - this.anchor) / period) + 1) * period;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      void this.attempt();
    }, Math.max(0, next - now));
  }

  private async attempt(): Promise<void> {
    if (this.stopped) return;
    const began = this.clock.now();
    this.probing = true;
    if (!this.seen) {
      this.seen = true;
      if (this.kind !== 'liveness') this.hooks.firstSeen();
    }
    let changed: boolean | undefined;
    if (began - this.startedAt >= this.timing.initialDelayMs) {
      const result = await this.hooks.check(this.timing.timeoutMs);
      if (this.stopped) return;
      if (!result.ok) this.hooks.failed(result.message ?? 'probe failed');
      changed = this.counter.record(result.ok);
    }
    this.probing = false;
    if (changed !== undefined) {
      this.hooks.changed(changed);
      // A liveness failure restarts the container; a startup probe is done once it passed or failed.
      if ((this.kind === 'liveness' && !changed) || this.kind === 'startup' || this.stopped) return;
    }
    if (this.manualPending) {
      this.manualPending = false;
      if (this.counter.result !== true) {
        this.runManual();
        return;
      }
    }
    this.scheduleTick(began);
  }
}
