// One pod: a real process group on its own loopback address, with the lifecycle the kubelet gives a
// pod's container, as far as drain depends on it.
//
// Start: the pod object is created (pod-created), its main process starts (pod-started), and it
// becomes ready when its readiness probe passes, or at once when it has none
// (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#container-probes).
//
// Termination (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination):
//  1. The API server records the delete with a grace period G (delete-issued). The pod is
//     Terminating: its endpoints turn `ready:false, serving:<readiness>, terminating:true`.
//  2. The kubelet runs the preStop hook (prestop-start / prestop-end), then sends the stop signal
//     (the image's STOPSIGNAL, SIGTERM by default) to the main process, PID 1 of the container.
//     Without a hook the signal is sent at once.
//  3. G counts from the delete, preStop included. When it runs out and the main process is still
//     there, every process of the container gets SIGKILL. If the preStop hook is still running
//     when G runs out, the kubelet sends the stop signal then and grants a one-off 2 s extension
//     before SIGKILL ("If the preStop hook is still running after the grace period expires, the
//     kubelet requests a small, one-off grace period extension of 2 seconds", same page).
//  4. When the main process has exited the container is gone: whatever else ran in it is killed,
//     the endpoint stops serving and is removed, and the pod object is removed (pod-removed).
// G = 0 is a force delete (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination-forced):
// the pod leaves the API and its endpoints at once. The kubelet does not kill its containers at
// once, though: its pod worker gives every terminating pod at least 1 s ("no matter what, we always
// supply a grace period of 1", calculateEffectiveGracePeriod in pkg/kubelet/pod_workers.go), runs a
// preStop hook while that grace is above 0, and its killContainer keeps a floor of
// minimumGracePeriodInSeconds = 2 between the stop signal and SIGKILL ("always give containers a
// minimal shutdown window to avoid unnecessary SIGKILLs", kuberuntime_container.go). The local
// provider models that: preStop for at most FORCE_DELETE_GRACE_MS, then the stop signal, then
// SIGKILL MIN_STOP_TO_KILL_MS later, so that a backend with short requests may drain them even
// after a force delete, on a node as here. (Which of the 1 s override and the 2 s floor wins in
// killContainer has varied between kubelet versions; the model takes the longer, the case in which
// a control built on "a force delete drops requests" can pass.)
//
// Readiness probes keep running while the pod terminates, and `serving` follows them
// (https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#serving).
//
// The kubelet never gives a container less than 2 s between the stop signal and SIGKILL
// (minimumGracePeriodInSeconds in kuberuntime_container.go), even when G is smaller or the preStop
// hook used up most of G: SIGKILL comes at G or 2 s after the stop signal, whichever is later (a
// 4 s grace after a 3 s preStop kills 5 s after the delete). The model follows it, as the netns
// node agent does (node-agent/termination.ts): a model that killed at G alone judged a grace below
// a system's drain timeout by a deadline a real cluster does not keep.

import type { ChildProcess } from 'node:child_process';

import type { EventKind } from '../../model/timeline.ts';
import type { Workload } from '../../model/workload.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { PodInfo } from '../provider.ts';
import { ProcessWatch } from './process-watch.ts';
import { ReadinessProber } from './probes.ts';
import {
  captureLines,
  containerEnv,
  groupAlive,
  signalGroup,
  signalProcess,
  spawnGroup,
  waitForGroupsGone,
} from './processes.ts';

/** The kubelet's one-off extension when the preStop hook overruns the grace period. */
export const PRESTOP_EXTENSION_MS = 2_000;
/** The grace the kubelet's pod worker gives a force-deleted pod (it never uses less than 1 s). */
export const FORCE_DELETE_GRACE_MS = 1_000;
/** The kubelet's floor between the stop signal and SIGKILL (minimumGracePeriodInSeconds). */
export const MIN_STOP_TO_KILL_MS = 2_000;
/** How long a pod waits for the leftovers of its killed process group to be reaped. */
const GROUP_REAP_TIMEOUT_MS = 2_000;

export interface PodHooks {
  /** The pod changed in a way the EndpointSlice controller sees: started, readiness, deletion, exit, removal. */
  endpoints(pod: LocalPod): void;
  /** The pod changed in a way its owner (the ReplicaSet / Deployment controller) acts on. */
  controller(pod: LocalPod): void;
  /** A process group of the pod (its main process, a preStop exec hook) was just started. */
  groupStarted?(pid: number): void;
  /** That group is empty now (every process reaped): nothing of it can be left behind any more. */
  groupEnded?(pid: number): void;
}

export interface PodOptions {
  name: string;
  workload: Workload;
  ip: string;
  /** Template generation of the Deployment that created it (bumped by a rollout restart). */
  generation: number;
  recorder: Recorder;
  runId: string;
  /** Kubernetes-style `<SERVICE>_SERVICE_HOST/PORT` variables for the Services that exist. */
  serviceEnv?: Record<string, string>;
  cwd: string;
  hooks: PodHooks;
}

export class LocalPod {
  readonly name: string;
  readonly workload: Workload;
  readonly ip: string;
  readonly generation: number;
  readonly createdAt: number;

  /** Its main process is running (or ran): the pod had an IP and could have had an endpoint. */
  started = false;
  /** Ready condition: the readiness probe's verdict while the container runs. */
  ready = false;
  /** Deleted: it has a deletion timestamp (Terminating). */
  terminating = false;
  /** Deleted with grace 0: gone from the API at once. */
  forceDeleted = false;
  /** Its main process has ended. */
  exited = false;
  /** The pod object is gone from the API. */
  removed = false;
  pid?: number;
  /** Set when the pod's process has exited on its own without being deleted. */
  crashed = false;
  /** Run-clock time of the first delete. */
  deletedAt?: number;
  /** Lines the pod last wrote, for error messages when it crashes during deploy. */
  readonly lastOutput: string[] = [];

  private readonly recorder: Recorder;
  private readonly cwd: string;
  private readonly hooks: PodHooks;
  private readonly env: NodeJS.ProcessEnv;
  private prober?: ReadinessProber;
  private preStop: 'none' | 'running' | 'done' = 'none';
  /** Run-clock time of the stop signal. */
  private stopSignalAt?: number;
  private preStopTimer?: NodeJS.Timeout;
  /** Process groups of preStop exec hooks: they run inside the container and die with it. */
  private readonly hookGroups = new Set<number>();
  private readonly hookExits: Promise<void>[] = [];
  /** The container's processes over time, for a pod that reloads (process-watch.ts). */
  private processes?: ProcessWatch;
  private killTimer?: NodeJS.Timeout;
  /** Run-clock time at which SIGKILL is due. */
  private killAt?: number;
  private tornDown = false;
  private resolveExited!: () => void;
  /** Resolves once the main process has ended and the rest of its group is gone. */
  readonly exitedPromise: Promise<void>;

  constructor(opts: PodOptions) {
    this.name = opts.name;
    this.workload = opts.workload;
    this.ip = opts.ip;
    this.generation = opts.generation;
    this.recorder = opts.recorder;
    this.cwd = opts.cwd;
    this.hooks = opts.hooks;
    this.env = containerEnv(opts.workload, { name: opts.name, ip: opts.ip }, opts.runId, opts.serviceEnv);
    this.createdAt = this.recorder.now();
    this.exitedPromise = new Promise((resolve) => (this.resolveExited = resolve));
  }

  get phase(): PodInfo['phase'] {
    if (this.removed) return 'Gone';
    if (this.terminating) return 'Terminating';
    return this.started ? 'Running' : 'Pending';
  }

  info(): PodInfo {
    return {
      name: this.name,
      workload: this.workload.name,
      ip: this.ip,
      phase: this.phase,
      ready: this.ready,
      createdAt: this.createdAt,
    };
  }

  /** Creates the pod and starts its main process. */
  start(): void {
    this.event('pod-created', { ip: this.ip, generation: this.generation });
    let child: ChildProcess;
    try {
      child = spawnGroup(this.workload.command, { cwd: this.cwd, env: this.env });
    } catch (err) {
      queueMicrotask(() => this.onExit(null, null, err));
      return;
    }
    this.pid = child.pid;
    if (child.pid !== undefined) this.hooks.groupStarted?.(child.pid);
    captureLines(child, (stream, line) => this.output(stream, line));
    child.once('spawn', () => this.onSpawn());
    child.on('error', (err) => this.onExit(null, null, err));
    child.once('exit', (code, signal) => this.onExit(code, signal));
  }

  /**
   * Deletes the pod with `graceSeconds` (the API's gracePeriodSeconds). A second delete may only
   * shorten the grace period, as in Kubernetes.
   */
  delete(graceSeconds: number): void {
    if (this.exited || this.removed || this.tornDown) return;
    const grace = Math.max(0, graceSeconds);
    this.event('delete-issued', { gracePeriodSeconds: grace });
    if (this.terminating) {
      if (grace === 0) this.forceDelete();
      else {
        // A shorter G moves SIGKILL sooner, but not within the floor after a stop signal already sent.
        const killAt = Math.max(this.recorder.now() + grace * 1000, (this.stopSignalAt ?? -Infinity) + MIN_STOP_TO_KILL_MS);
        if (this.killAt === undefined || killAt < this.killAt) this.scheduleKill(killAt - this.recorder.now());
      }
      return;
    }
    this.terminating = true;
    this.deletedAt = this.recorder.now();
    if (grace === 0) {
      this.forceDelete();
      return;
    }
    this.notify();
    this.scheduleKill(grace * 1000);
    if (this.workload.preStop) this.runPreStop();
    else this.sendStopSignal();
  }

  /** The process groups of its container and its running hooks. */
  groups(): number[] {
    return [...(this.pid === undefined ? [] : [this.pid]), ...this.hookGroups];
  }

  /**
   * Teardown: kills every process of the pod now, records nothing more, and resolves once the main
   * process and any preStop hook have exited. Synchronous up to the returned promise.
   */
  kill(): Promise<void> {
    this.tornDown = true;
    this.prober?.stop();
    this.processes?.cancel();
    clearTimeout(this.killTimer);
    clearTimeout(this.preStopTimer);
    // Once removed, its groups were killed and reaped: their ids may belong to someone else now.
    if (!this.removed) {
      if (this.pid !== undefined) signalGroup(this.pid);
      for (const group of this.hookGroups) signalGroup(group);
    }
    return Promise.all([this.exitedPromise, ...this.hookExits]).then(() => undefined);
  }

  /**
   * The workload's configuration reload, in the running container: its templates rendered again
   * (with `env` over the pod's variables), then its signal to the main process or its command run in
   * the pod (`ZERODROP_MAIN_PID` names the main process). Resolves once the reload has ended.
   */
  async reload(env: Record<string, string> = {}): Promise<void> {
    const reload = this.workload.reload;
    if (!reload) throw new Error(`pod ${this.name}: workload ${this.workload.name} defines no reload`);
    if (!this.started || this.exited || this.terminating || this.tornDown || this.pid === undefined) throw new Error(`pod ${this.name} is not running: nothing to reload`);
    const pid = this.pid;
    const how = 'signal' in reload ? reload.signal : reload.exec.command.join(' ');
    this.processes?.quicken();
    this.event('reload-start', { how, ...(Object.keys(env).length > 0 ? { env } : {}) });
    // A value may name the pod's own variables (`${BACKEND_B_SERVICE_HOST}`): what a changed
    // ConfigMap would say of another Service, resolved where the pod resolves its own.
    const expanded = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.replace(/\$\{([A-Z][A-Z0-9_]*)\}/g, (_, name: string) => this.env[name] ?? '')]));
    const podEnv = { ...this.env, ...expanded, ZERODROP_MAIN_PID: String(pid) };
    if (reload.render) {
      const rendered = await this.runInContainer(reload.render, podEnv);
      if (rendered.exitCode !== 0) {
        this.event('reload-end', { stage: 'render', ...rendered });
        return;
      }
    }
    if ('signal' in reload) {
      this.event('reload-end', { signal: reload.signal, sent: !this.tornDown && signalProcess(pid, reload.signal) });
      return;
    }
    this.event('reload-end', await this.runInContainer(reload.exec.command, podEnv));
  }

  /** Runs a command inside the container (its own group, killed with the container), with its output captured. */
  private runInContainer(command: string[], env: NodeJS.ProcessEnv): Promise<{ exitCode: number | null; signal?: NodeJS.Signals; error?: string }> {
    let child: ChildProcess;
    try {
      child = spawnGroup(command, { cwd: this.cwd, env });
    } catch (err) {
      return Promise.resolve({ exitCode: null, error: String(err) });
    }
    const group = child.pid;
    if (group !== undefined) {
      this.hookGroups.add(group);
      this.hooks.groupStarted?.(group);
    }
    captureLines(child, (stream, line) => this.output(stream, line));
    const ended = new Promise<{ exitCode: number | null; signal?: NodeJS.Signals; error?: string }>((resolve) => {
      child.once('error', (err) => resolve({ exitCode: null, error: err.message }));
      child.once('exit', (code, signal) => {
        // A finished command whose group is empty is forgotten: its id may be reused.
        if (group !== undefined && !groupAlive(group)) {
          this.hookGroups.delete(group);
          this.hooks.groupEnded?.(group);
        }
        resolve({ exitCode: code, ...(signal ? { signal } : {}) });
      });
    });
    this.hookExits.push(ended.then(() => undefined));
    return ended;
  }

  private onSpawn(): void {
    if (this.exited || this.tornDown) return;
    this.started = true;
    this.event('pod-started', { pid: this.pid });
    if (this.workload.reload && this.pid !== undefined) {
      this.processes = new ProcessWatch(this.pid, () => this.recorder.now(), (kind, detail, t) =>
        this.recorder.event(kind, { pod: this.name, workload: this.workload.name, detail, ...(t !== undefined ? { t } : {}) }),
      );
      this.processes.start();
    }
    if (this.workload.readinessProbe) {
      this.prober = new ReadinessProber(this.workload.readinessProbe, this.ip, (ready) => this.setReady(ready), { cwd: this.cwd, env: this.env });
      this.prober.start();
    } else {
      // No readiness probe: the kubelet treats the container as ready once it runs.
      this.ready = true;
      this.event('pod-ready', { probe: false });
    }
    this.notify();
  }

  private setReady(ready: boolean): void {
    if (this.exited || this.tornDown || this.ready === ready) return;
    this.ready = ready;
    this.event(ready ? 'pod-ready' : 'pod-unready');
    this.notify();
  }

  /** Gone from the API and its endpoints at once; on the node, the kubelet's minimum grace (see the top of the file). */
  private forceDelete(): void {
    if (this.forceDeleted) return;
    this.forceDeleted = true;
    this.prober?.stop();
    this.notify();
    if (this.preStop === 'running') {
      // A second delete with grace 0 cuts a running hook at the kubelet's 1 s.
      if (this.killAt === undefined || this.recorder.now() + FORCE_DELETE_GRACE_MS < this.killAt) this.scheduleKill(FORCE_DELETE_GRACE_MS);
    } else if (this.preStop === 'done' || this.stopSignalAt !== undefined) {
      if (this.killAt === undefined || this.recorder.now() + MIN_STOP_TO_KILL_MS < this.killAt) this.scheduleKill(MIN_STOP_TO_KILL_MS);
    } else if (this.workload.preStop) {
      this.scheduleKill(FORCE_DELETE_GRACE_MS);
      this.runPreStop();
    } else {
      this.sendStopSignal();
    }
  }

  private scheduleKill(delayMs: number): void {
    clearTimeout(this.killTimer);
    this.killAt = this.recorder.now() + delayMs;
    this.killTimer = setTimeout(() => this.onGraceExpired(), delayMs);
  }

  private runPreStop(): void {
    const hook = this.workload.preStop;
    if (!hook) return;
    this.preStop = 'running';
    if ('sleep' in hook) {
      this.event('prestop-start', { action: 'sleep', seconds: hook.sleep.seconds });
      this.preStopTimer = setTimeout(() => this.endPreStop({}), hook.sleep.seconds * 1000);
      return;
    }
    this.event('prestop-start', { action: 'exec', command: hook.exec.command });
    let child: ChildProcess;
    try {
      child = spawnGroup(hook.exec.command, { cwd: this.cwd, env: this.env });
    } catch (err) {
      this.endPreStop({ error: String(err) });
      return;
    }
    if (child.pid !== undefined) {
      this.hookGroups.add(child.pid);
      this.hooks.groupStarted?.(child.pid);
    }
    captureLines(child, (stream, line) => this.output(stream, line));
    this.hookExits.push(
      new Promise((resolve) => {
        child.once('close', () => resolve());
        child.once('error', () => resolve());
      }),
    );
    child.on('error', (err) => this.endPreStop({ error: err.message }));
    child.once('exit', (code, signal) => {
      // A finished hook whose group is empty is forgotten: its id may be reused.
      if (child.pid !== undefined && !groupAlive(child.pid)) {
        this.hookGroups.delete(child.pid);
        this.hooks.groupEnded?.(child.pid);
      }
      this.endPreStop({ exitCode: code, signal });
    });
  }

  /** The hook finished (whatever its exit code: a failed hook does not stop the shutdown). */
  private endPreStop(detail: Record<string, unknown>): void {
    if (this.preStop !== 'running' || this.tornDown) return;
    this.preStop = 'done';
    clearTimeout(this.preStopTimer);
    this.event('prestop-end', detail);
    this.sendStopSignal();
  }

  private onGraceExpired(): void {
    this.killTimer = undefined;
    if (this.exited || this.tornDown) return;
    if (this.preStop === 'running') {
      // An exec hook's process keeps running until the container is killed; a sleep just ends.
      this.preStop = 'done';
      clearTimeout(this.preStopTimer);
      this.event('prestop-end', { timedOut: true });
      this.sendStopSignal();
      this.scheduleKill(PRESTOP_EXTENSION_MS);
      return;
    }
    this.kill9(this.forceDeleted ? 'force-delete' : 'grace-period-expired');
  }

  private sendStopSignal(): void {
    if (this.exited || this.tornDown || this.pid === undefined) return;
    const signal = this.workload.stopSignal ?? 'SIGTERM';
    this.stopSignalAt = this.recorder.now();
    this.event('sigterm', { signal });
    signalProcess(this.pid, signal);
    // After a force delete the kubelet's floor decides SIGKILL: never sooner, never later. Otherwise
    // G does, but never sooner than the floor.
    if (this.forceDeleted || this.killAt === undefined || this.killAt < this.stopSignalAt + MIN_STOP_TO_KILL_MS) this.scheduleKill(MIN_STOP_TO_KILL_MS);
  }

  private kill9(reason: 'grace-period-expired' | 'force-delete'): void {
    clearTimeout(this.killTimer);
    this.killTimer = undefined;
    if (this.exited || this.tornDown || this.pid === undefined) return;
    this.event('sigkill', { reason });
    signalGroup(this.pid, 'SIGKILL');
    for (const group of this.hookGroups) signalGroup(group, 'SIGKILL');
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, error?: unknown): void {
    if (this.exited) return;
    this.exited = true;
    this.ready = false;
    this.crashed = !this.terminating;
    this.prober?.stop();
    clearTimeout(this.killTimer);
    clearTimeout(this.preStopTimer);
    if (!this.tornDown) this.processes?.stop();
    if (!this.tornDown) {
      const detail: Record<string, unknown> = { code, signal };
      if (error !== undefined) detail.error = error instanceof Error ? error.message : String(error);
      this.event('exit', detail);
    }
    // The container is gone: nothing it started outlives it, preStop hook included.
    const groups = this.groups();
    for (const group of groups) signalGroup(group, 'SIGKILL');
    if (!this.tornDown) {
      if (this.preStop === 'running') {
        this.preStop = 'done';
        this.event('prestop-end', { interrupted: true });
      }
      // The kubelet reports the container not running: the endpoint stops serving.
      this.hooks.endpoints(this);
    }
    // Once every process of the container has been reaped, the pod object is deleted and its
    // endpoint goes with it.
    if (groups.some(groupAlive)) void waitForGroupsGone(groups, GROUP_REAP_TIMEOUT_MS).then(() => this.onGone(groups));
    else this.onGone(groups);
  }

  private onGone(groups: readonly number[]): void {
    // One that outlived the reap timeout stays on the run's record, for teardown or `zerodrop clean`.
    for (const group of groups) if (!groupAlive(group)) this.hooks.groupEnded?.(group);
    this.removed = true;
    if (!this.tornDown) {
      this.hooks.endpoints(this);
      this.event('pod-removed', this.crashed ? { crashed: true } : undefined);
      this.hooks.controller(this);
    }
    this.resolveExited();
  }

  private notify(): void {
    this.hooks.endpoints(this);
    this.hooks.controller(this);
  }

  private output(stream: 'stdout' | 'stderr', line: string): void {
    this.recorder.podOutput(this.name, stream, line);
    this.lastOutput.push(line);
    if (this.lastOutput.length > 20) this.lastOutput.shift();
  }

  private event(kind: EventKind, detail?: Record<string, unknown>): void {
    this.recorder.event(kind, { pod: this.name, workload: this.workload.name, ...(detail ? { detail } : {}) });
  }
}
