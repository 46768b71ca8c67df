// When a deleted pod's container gets its stop signal and its SIGKILL: the kubelet's killContainer
// (pkg/kubelet/kuberuntime/kuberuntime_container.go) and pod worker (pkg/kubelet/pod_workers.go),
// as https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination describes:
//
//  - G (deletionGracePeriodSeconds) counts from when the kubelet saw the deletion, preStop included.
//    The pod worker never uses less than 1 s ("no matter what, we always supply a grace period of
//    1", calculateEffectiveGracePeriod): a force delete (G = 0) gets 1 s. A pod that vanished from
//    the API before the agent saw its deletion keeps the grace of its last known version
//    (pod-worker.ts, effectiveGraceSeconds), not this floor.
//  - With a preStop hook, the hook runs first, bounded by G; then the stop signal goes to the
//    container's main process. A hook still running when G runs out does not delay the signal: it
//    is sent then, with a one-off 2 s extension before SIGKILL ("If the preStop hook is still running
//    after the grace period expires, the kubelet requests a small, one-off grace period extension of
//    2 seconds").
//  - SIGKILL (the container's whole process group) when G runs out, but never less than
//    minimumGracePeriodInSeconds = 2 after the stop signal ("always give containers a minimal
//    shutdown window to avoid unnecessary SIGKILLs").
//  - A later delete may only shorten G (the API server keeps the earlier deletionTimestamp when a
//    new one would be later); it moves the deadline to now + the new G when that is sooner.
//
// The machine is driven by an injected clock so that its timing is tested without waiting.

/** The kubelet's floor between the stop signal and SIGKILL (minimumGracePeriodInSeconds). */
export const MIN_STOP_TO_KILL_MS = 2_000;
/** The pod worker's minimum grace (a delete with gracePeriodSeconds 1 or less still gets 1 s). */
export const MIN_GRACE_MS = 1_000;

export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface TerminationActions {
  /** Starts the preStop hook; the owner calls preStopDone() when it ends (success or failure). */
  runPreStop(timeoutMs: number): void;
  /** The hook outlasted G: a sleep hook ends now (an exec hook's process dies with the container). */
  preStopTimedOut(): void;
  stopSignal(): void;
  kill(): void;
}

export type TerminationState = 'running' | 'prestop' | 'stopping' | 'killed' | 'exited';

export class ContainerTermination {
  state: TerminationState = 'running';
  /** Clock time at which G runs out. */
  deadline?: number;
  stopSignalAt?: number;
  killAt?: number;
  private timer: unknown;
  private readonly clock: Clock;
  private readonly actions: TerminationActions;
  private readonly hasPreStop: boolean;

  constructor(clock: Clock, actions: TerminationActions, hasPreStop: boolean) {
    this.clock = clock;
    this.actions = actions;
    this.hasPreStop = hasPreStop;
  }

  /** The pod was deleted with G = graceSeconds (a force delete: 0), or G was shortened later. */
  terminate(graceSeconds: number): void {
    if (this.state === 'exited' || this.state === 'killed') return;
    const now = this.clock.now();
    const deadline = now + Math.max(MIN_GRACE_MS, graceSeconds * 1000);
    if (this.state !== 'running') {
      if (this.deadline !== undefined && deadline >= this.deadline) return;
      this.deadline = deadline;
      if (this.state === 'prestop') this.arm(this.deadline, () => this.preStopOverran());
      else this.armKill();
      return;
    }
    this.deadline = deadline;
    if (this.hasPreStop) {
      this.state = 'prestop';
      this.arm(this.deadline, () => this.preStopOverran());
      this.actions.runPreStop(this.deadline - now);
    } else {
      this.sendStop();
    }
  }

  /** The preStop hook ended (whatever its outcome: a failed hook does not stop the shutdown). */
  preStopDone(): void {
    if (this.state !== 'prestop') return;
    this.sendStop();
  }

  /** The container's main process exited. */
  exited(): void {
    this.state = 'exited';
    this.disarm();
  }

  private preStopOverran(): void {
    if (this.state !== 'prestop') return;
    this.actions.preStopTimedOut();
    this.sendStop();
  }

  private sendStop(): void {
    this.state = 'stopping';
    this.stopSignalAt = this.clock.now();
    this.actions.stopSignal();
    // stopSignal() may have seen the process gone already.
    if ((this.state as TerminationState) === 'stopping') this.armKill();
  }

  private killTime(): number {
    return Math.max(this.deadline ?? 0, (this.stopSignalAt ?? this.clock.now()) + MIN_STOP_TO_KILL_MS);
  }

  private doKill(): void {
    if (this.state !== 'stopping') return;
    this.state = 'killed';
    this.actions.kill();
  }

  private armKill(): void {
    this.killAt = this.killTime();
    this.arm(this.killAt, () => this.doKill());
  }

  private arm(at: number, fn: () => void): void {
    this.disarm();
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      fn();
    }, Math.max(0, at - this.clock.now()));
  }

  private disarm(): void {
    if (this.timer !== undefined) this.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }
}
