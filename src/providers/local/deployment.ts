// The Deployment and ReplicaSet controllers for one workload, as far as drain depends on them
// (https://kubernetes.io/docs/concepts/workloads/controllers/deployment/ and
// https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/).
//
// - It keeps `replicas` active pods (not terminating). A deleted pod is replaced at once: the
//   ReplicaSet stops counting a pod as soon as it has a deletion timestamp, so the replacement
//   starts while the old pod still drains.
// - A pod that exits on its own is replaced too (in a cluster the kubelet restarts the container in
//   place; here the pod is replaced by a new one). Repeated crashes back off, like CrashLoopBackOff,
//   but in fractions of a second.
// - Scaling down deletes pods in the ReplicaSet controller's order: not yet started before started,
//   not ready before ready, then the newest first
//   (https://kubernetes.io/docs/concepts/workloads/controllers/replicaset/#scaling-a-replicaset).
// - A rollout restart bumps the template generation and replaces pods by a rolling update that
//   obeys maxSurge and maxUnavailable
//   (https://kubernetes.io/docs/concepts/workloads/controllers/deployment/#rolling-update-deployment),
//   with the deployment controller's arithmetic: at most replicas+maxSurge active pods; old pods
//   are deleted only while at least replicas-maxUnavailable pods stay ready. Unready old pods are
//   deleted first, since they serve nobody. It is complete when every replica is new and ready and
//   no old pod exists any more, terminating ones included.

import type { Workload } from '../../model/workload.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { LocalPod } from './pod.ts';

/** Creates and starts a pod of `workload` named `name` from template `generation`. */
export type PodFactory = (name: string, generation: number) => LocalPod;

const CRASH_BACKOFF_FIRST_MS = 100;
const CRASH_BACKOFF_MAX_MS = 5_000;

/** ReplicaSet victim order: the pods listed first are deleted first. */
export function rankForDeletion(pods: readonly LocalPod[]): LocalPod[] {
  return [...pods].sort((a, b) => {
    if (a.started !== b.started) return a.started ? 1 : -1;
    if (a.ready !== b.ready) return a.ready ? 1 : -1;
    return b.createdAt - a.createdAt;
  });
}

export class DeploymentController {
  readonly workload: Workload;
  replicas: number;
  /** Template generation; pods of an earlier one are "old". */
  generation = 1;
  /** Pods that still exist in the API (terminating ones included), oldest first. */
  readonly pods: LocalPod[] = [];
  /** Last crashed pod's name and output, for error messages. */
  lastCrash?: { pod: string; output: string[] };
  private readonly recorder: Recorder;
  private readonly factory: PodFactory;
  private nextOrdinal = 1;
  private rollout?: number;
  private reconciling = false;
  private dirty = false;
  private stopped = false;
  private crashes = 0;
  private backoffUntil = 0;
  private backoffTimer?: NodeJS.Timeout;

  constructor(workload: Workload, recorder: Recorder, factory: PodFactory) {
    const { maxSurge, maxUnavailable } = workload.strategy;
    if (maxSurge < 0 || maxUnavailable < 0 || (maxSurge === 0 && maxUnavailable === 0)) {
      // The API server rejects this too: the rollout could never make progress.
      throw new Error(`workload ${workload.name}: maxSurge and maxUnavailable must be >= 0 and not both 0`);
    }
    this.workload = workload;
    this.replicas = workload.replicas;
    this.recorder = recorder;
    this.factory = factory;
  }

  /** Active pods: not terminating, not exited. */
  active(): LocalPod[] {
    return this.pods.filter((p) => !p.terminating && !p.exited);
  }

  /** Ready active pods of the current generation. */
  readyCount(): number {
    return this.active().filter((p) => p.ready && p.generation === this.generation).length;
  }

  get rolloutInProgress(): boolean {
    return this.rollout !== undefined;
  }

  scale(replicas: number): void {
    const from = this.replicas;
    this.replicas = Math.max(0, Math.floor(replicas));
    this.recorder.event('scale', { workload: this.workload.name, detail: { from, to: this.replicas } });
    this.reconcile();
  }

  /** `kubectl rollout restart`: a new template generation. */
  restart(): void {
    this.generation++;
    this.rollout = this.generation;
    this.recorder.event('rollout-start', { workload: this.workload.name, detail: { generation: this.generation } });
    this.reconcile();
  }

  /** Called by a pod of this workload whenever its state changes. */
  podChanged(pod: LocalPod): void {
    if (pod.removed) {
      const index = this.pods.indexOf(pod);
      if (index >= 0) this.pods.splice(index, 1);
      if (pod.crashed) {
        this.crashes++;
        this.lastCrash = { pod: pod.name, output: [...pod.lastOutput] };
        const backoff = Math.min(CRASH_BACKOFF_MAX_MS, CRASH_BACKOFF_FIRST_MS * 2 ** (this.crashes - 1));
        this.backoffUntil = this.recorder.now() + backoff;
      }
    } else if (pod.ready) {
      this.crashes = 0;
    }
    this.reconcile();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.backoffTimer);
    this.backoffTimer = undefined;
  }

  /** Brings the pods in line with the spec. Re-entrant calls (a delete notifies back) are folded in. */
  reconcile(): void {
    if (this.stopped) return;
    if (this.reconciling) {
      this.dirty = true;
      return;
    }
    this.reconciling = true;
    try {
      do {
        this.dirty = false;
        this.step();
      } while (this.dirty && !this.stopped);
    } finally {
      this.reconciling = false;
    }
  }

  private step(): void {
    const active = this.active();
    const current = active.filter((p) => p.generation === this.generation);
    const old = active.filter((p) => p.generation !== this.generation);
    if (old.length === 0) {
      // ReplicaSet: keep exactly `replicas`.
      if (current.length < this.replicas) this.create(this.replicas - current.length);
      else if (current.length > this.replicas) this.deletePods(rankForDeletion(current).slice(0, current.length - this.replicas));
    } else {
      this.rollingUpdate(active, current, old);
    }
    this.checkRollout();
  }

  private rollingUpdate(active: LocalPod[], current: LocalPod[], old: LocalPod[]): void {
    const { maxSurge, maxUnavailable } = this.workload.strategy;
    const maxTotal = this.replicas + maxSurge;
    const minAvailable = this.replicas - maxUnavailable;

    // Scale up the new generation within the surge.
    const toCreate = Math.min(this.replicas - current.length, maxTotal - active.length);
    let created: LocalPod[] = [];
    if (toCreate > 0) created = this.create(toCreate);

    // Scale down old pods without going below minAvailable ready pods. The new pods that are not
    // ready yet cannot be counted on.
    const all = active.length + created.length;
    const newUnavailable = current.filter((p) => !p.ready).length + created.length;
    const budget = all - minAvailable - newUnavailable;
    if (budget <= 0) return;
    const unhealthy = rankForDeletion(old.filter((p) => !p.ready)).slice(0, budget);
    this.deletePods(unhealthy);
    const available = active.filter((p) => p.ready).length;
    const healthy = old.filter((p) => p.ready);
    const toDelete = Math.min(healthy.length, available - minAvailable);
    if (toDelete > 0) {
      // Oldest template first, like scaling down the oldest ReplicaSet first.
      const victims = [...healthy].sort((a, b) => a.generation - b.generation || b.createdAt - a.createdAt);
      this.deletePods(victims.slice(0, toDelete));
    }
  }

  private checkRollout(): void {
    if (this.rollout === undefined) return;
    if (this.pods.some((p) => p.generation !== this.generation)) return;
    const active = this.active();
    if (active.length !== this.replicas || !active.every((p) => p.ready)) return;
    this.recorder.event('rollout-complete', { workload: this.workload.name, detail: { generation: this.generation } });
    this.rollout = undefined;
  }

  private create(count: number): LocalPod[] {
    const wait = this.backoffUntil - this.recorder.now();
    if (wait > 0) {
      this.backoffTimer ??= setTimeout(() => {
        this.backoffTimer = undefined;
        this.reconcile();
      }, wait);
      return [];
    }
    const created: LocalPod[] = [];
    for (let i = 0; i < count; i++) {
      const pod = this.factory(`${this.workload.name}-${this.nextOrdinal++}`, this.generation);
      this.pods.push(pod);
      created.push(pod);
    }
    return created;
  }

  private deletePods(pods: readonly LocalPod[]): void {
    for (const pod of pods) pod.delete(this.workload.terminationGracePeriodSeconds);
  }
}
