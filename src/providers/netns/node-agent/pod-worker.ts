// What the kubelet does for one pod on its node (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/):
//  start: sandbox (netns + routed veth, sandbox.ts), volumes (volumes.ts), init containers one at a
//  time, each to completion (a failed one is retried with back-off unless restartPolicy is Never),
//  then every container at once; a container that exits is restarted as restartPolicy says, with
//  the kubelet's back-off (10 s doubling to 5 min; a container that ran 10 min resets it; the first
//  restart is immediate, as the back-off entry is created by the first crash);
//  delete: every running container stopped as termination.ts says; once all have exited, a last
//  status (terminal phase), the sandbox torn down (netns, veth, route, address, volumes), and the
//  pod object deleted with grace 0 and a UID precondition
//  (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-termination: "the kubelet
//  ... triggers forcible removal of the Pod object from the API server, by setting grace period to 0").
//  A pod whose object vanished without this agent seeing its deletion is stopped with the grace of
//  the last version it saw, as the kubelet stops a pod removed from its config (effectiveGraceSeconds).

import { existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { PATCH, statusOf, type KubeClient } from '../../kube/client.ts';
import type { GoPrograms } from './images.ts';
import type { PodObjects } from './api-objects.ts';
import { Container, type ContainerHost } from './container.ts';
import { containerEnv, EnvError } from './env.ts';
import type { EventSink } from './events.ts';
import type { IpPool } from './ip-pool.ts';
import type { ContainerSpec, DataObject, Pod, ServiceObject } from './pod-types.ts';
import { hostsFile, type RootfsMount } from './rootfs-script.ts';
import { createSandbox, destroySandbox, sandboxNames, type SandboxNames } from './sandbox.ts';
import { applySysctls, podSysctls } from './sysctls.ts';
import { podStatus } from './status.ts';
import type { Clock } from './termination.ts';
import { setUpVolume } from './volumes.ts';

export const BACKOFF_INITIAL_MS = 10_000;
export const BACKOFF_MAX_MS = 300_000;
/** A run this long resets the back-off (the kubelet's backOffPeriod reset after twice the max). */
export const BACKOFF_RESET_MS = 600_000;
/** Retry of a pod whose sandbox or volumes could not be set up. */
const SETUP_RETRY_MS = 5_000;

/** The next restart delay after a run of `ranMs`, given the previous delay (undefined: first crash). */
/**
 * The grace a pod is stopped with, from the last version of it this agent saw. A force delete
 * (gracePeriodSeconds 0) first writes deletionGracePeriodSeconds 0, which the watch shows before the
 * removal (updateForGracefulDeletionAndFinalizers, apiserver's pkg/registry/generic/registry/store.go),
 * so it is normally stopped by update() with the pod worker's floor of 1 s. An agent that missed that
 * version (a watch gap, or a new pod of the same name) sees only the removal; the kubelet then stops
 * the copy it cached (pkg/kubelet/config/config.go), whose deletionGracePeriodSeconds is unset, and
 * the pod worker falls back to spec.terminationGracePeriodSeconds (calculateEffectiveGracePeriod,
 * pkg/kubelet/pod_workers.go): not the 1 s floor.
 */
export function effectiveGraceSeconds(pod: Pod): number {
  return pod.metadata.deletionGracePeriodSeconds ?? pod.spec?.terminationGracePeriodSeconds ?? 30;
}

export function nextBackoff(previous: number | undefined, ranMs: number): number {
  if (previous === undefined || ranMs >= BACKOFF_RESET_MS) return 0;
  return Math.min(BACKOFF_MAX_MS, previous === 0 ? BACKOFF_INITIAL_MS : previous * 2);
}

/** Whether a container that exited with `exitCode` is restarted (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#restart-policy). */
export function shouldRestart(restartPolicy: string | undefined, exitCode: number): boolean {
  const policy = restartPolicy ?? 'Always';
  return policy === 'Always' || (policy === 'OnFailure' && exitCode !== 0);
}

export interface WorkerDeps {
  client: KubeClient;
  objects: PodObjects;
  events: EventSink;
  clock: Clock;
  ips: IpPool;
  clusterId: string;
  nodeName: string;
  nodeIP: string;
  nodeExecPath: string;
  goPrograms: GoPrograms;
  kubeletMinor: string;
  dir: string;
  top: { links: Record<string, string>; binds: string[] };
  log(message: string): void;
  /** The worker is done (pod deleted and torn down). */
  finished(worker: PodWorker): void;
}

function rfc3339(date = new Date()): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

export class PodWorker {
  pod: Pod;
  readonly uid: string;
  readonly names: SandboxNames;
  readonly dir: string;
  podIP = '';
  readonly init: Container[];
  readonly containers: Container[];
  private readonly deps: WorkerDeps;
  private readonly startTime = rfc3339();
  private sandboxReady = false;
  /** The sandbox was torn down (the pod completed): the address may belong to another pod now. */
  private networkReleased = false;
  private terminating = false;
  private gone = false;
  private shutDown = false;
  private finishing = false;
  /** The running finish(): shutdown waits for it (its teardown must complete before the agent exits). */
  private teardownDone?: Promise<void>;
  private terminal = false;
  private grace?: number;
  private backoff = new Map<string, number>();
  private restartTimers = new Map<string, NodeJS.Timeout>();
  private setupTimer?: NodeJS.Timeout;
  private volumePaths = new Map<string, string>();
  private patching = false;
  private dirty = false;
  private patchTimer?: NodeJS.Timeout;

  constructor(pod: Pod, deps: WorkerDeps) {
    this.pod = pod;
    this.deps = deps;
    this.uid = pod.metadata.uid ?? '';
    this.names = sandboxNames(deps.clusterId, this.uid);
    this.dir = path.join(deps.dir, 'pods', this.uid);
    const admittedAt = deps.clock.now();
    const host = (spec: ContainerSpec): ContainerHost => {
      return {
        pod: () => this.pod,
        podIP: () => this.podIP,
        netns: this.names.netns,
        nodeName: deps.nodeName,
        nodeExecPath: deps.nodeExecPath,
        goPrograms: deps.goPrograms,
        kubeletMinor: deps.kubeletMinor,
        clock: deps.clock,
        admittedAt,
        syncPod: () => {
          for (const c of this.containers) c.triggerReadiness();
        },
        events: deps.events,
        log: (m) => deps.log(`${this.key} ${spec.name}: ${m}`),
        changed: () => this.markDirty(),
        exited: (c) => this.onContainerExit(c),
      };
    };
    this.init = (pod.spec?.initContainers ?? []).map((c) => new Container(c, true, path.join(this.dir, 'containers', c.name), host(c)));
    this.containers = (pod.spec?.containers ?? []).map((c) => new Container(c, false, path.join(this.dir, 'containers', c.name), host(c)));
  }

  get key(): string {
    return `${this.pod.metadata.namespace ?? 'default'}/${this.pod.metadata.name}`;
  }

  container(name: string): Container | undefined {
    return [...this.containers, ...this.init].find((c) => c.spec.name === name);
  }

  /** Starts the pod (sandbox, volumes, init containers, containers). */
  start(): void {
    if (this.pod.metadata.deletionTimestamp) {
      // Deleted before it ever ran here: nothing to stop.
      this.update(this.pod);
      return;
    }
    void this.setUp();
  }

  private async setUp(): Promise<void> {
    try {
      if (!this.podIP) this.podIP = this.deps.ips.allocate();
      mkdirSync(this.dir, { recursive: true });
      await createSandbox(this.names, this.podIP);
      await applySysctls(this.names.netns, podSysctls(this.pod));
      if (this.terminating || this.shutDown) return this.maybeFinish();
      this.sandboxReady = true;
      this.markDirty();
      writeFileSync(path.join(this.dir, 'hosts'), hostsFile(this.podIP, this.pod.spec?.hostname ?? this.pod.metadata.name));
      for (const volume of this.pod.spec?.volumes ?? []) {
        if (this.volumePaths.has(volume.name)) continue;
        const source = await setUpVolume(volume, path.join(this.dir, 'volumes', volume.name), { pod: this.pod, podIP: this.podIP, hostIP: this.deps.nodeIP, objects: this.deps.objects });
        this.volumePaths.set(volume.name, source);
      }
    } catch (err) {
      const message = (err as Error).message;
      this.deps.log(`${this.key}: setup failed: ${message}`);
      this.deps.events.emit(this.pod, undefined, 'Warning', this.sandboxReady ? 'FailedMount' : 'FailedCreatePodSandBox', message);
      if (this.terminating || this.shutDown) return this.maybeFinish();
      this.setupTimer = setTimeout(() => void this.setUp(), SETUP_RETRY_MS);
      return;
    }
    if (this.terminating || this.shutDown) return this.maybeFinish();
    this.runNextInit();
  }

  /** Runs the first init container that has not succeeded, or the containers once all have. */
  private runNextInit(): void {
    if (this.terminating || this.shutDown) return this.maybeFinish();
    const next = this.init.find((c) => !('terminated' in c.record.state && c.record.state.terminated.exitCode === 0));
    if (next) {
      void this.startContainer(next);
      return;
    }
    for (const c of this.containers) void this.startContainer(c);
  }

  private async startContainer(c: Container): Promise<void> {
    if (this.terminating || this.shutDown) return this.maybeFinish();
    if (!c.pull()) {
      this.scheduleRestart(c, 'ImagePullBackOff');
      return;
    }
    let env: Map<string, string>;
    try {
      env = await this.buildEnv(c.spec);
    } catch (err) {
      const message = (err as Error).message;
      c.setWaiting('CreateContainerConfigError', message);
      c.event('Warning', 'Failed', `Error: ${message}`);
      if (!(err instanceof EnvError)) this.deps.log(`${this.key} ${c.spec.name}: ${message}`);
      this.scheduleRestart(c, 'CreateContainerConfigError');
      return;
    }
    if (this.terminating || this.shutDown) return this.maybeFinish();
    let mounts: RootfsMount[];
    try {
      mounts = this.mountsOf(c.spec);
    } catch (err) {
      c.setWaiting('CreateContainerError', (err as Error).message);
      return;
    }
    try {
      c.start({ env, mounts, hostsFile: path.join(this.dir, 'hosts'), hostname: (this.pod.spec?.hostname ?? this.pod.metadata.name).slice(0, 63), links: this.deps.top.links, binds: this.deps.top.binds });
    } catch (err) {
      c.setWaiting('RunContainerError', (err as Error).message);
      this.scheduleRestart(c, 'RunContainerError');
    }
  }

  private mountsOf(spec: ContainerSpec): RootfsMount[] {
    return (spec.volumeMounts ?? []).map((m) => {
      const base = this.volumePaths.get(m.name);
      if (base === undefined) throw new Error(`volumeMount ${m.name}: no such volume in the pod`);
      const source = m.subPath ? path.join(base, m.subPath) : base;
      if (m.subPath && !existsSync(source)) mkdirSync(source, { recursive: true });
      const file = existsSync(source) && !statSync(source).isDirectory();
      return { source, target: m.mountPath, readOnly: m.readOnly === true, file };
    });
  }

  private async buildEnv(spec: ContainerSpec): Promise<Map<string, string>> {
    const ns = this.pod.metadata.namespace ?? 'default';
    const cmNames = new Set<string>();
    const secretNames = new Set<string>();
    for (const from of spec.envFrom ?? []) {
      if (from.configMapRef) cmNames.add(from.configMapRef.name);
      if (from.secretRef) secretNames.add(from.secretRef.name);
    }
    for (const v of spec.env ?? []) {
      if (v.valueFrom?.configMapKeyRef) cmNames.add(v.valueFrom.configMapKeyRef.name);
      if (v.valueFrom?.secretKeyRef) secretNames.add(v.valueFrom.secretKeyRef.name);
    }
    const [services, master, cms, secrets] = await Promise.all([
      this.pod.spec?.enableServiceLinks === false ? Promise.resolve([] as ServiceObject[]) : this.deps.objects.services(ns),
      this.deps.objects.services('default').then((all) => all.find((s) => s.metadata.name === 'kubernetes')),
      Promise.all([...cmNames].map(async (n) => [n, await this.deps.objects.configMap(ns, n)] as const)),
      Promise.all([...secretNames].map(async (n) => [n, await this.deps.objects.secret(ns, n)] as const)),
    ]);
    const cmMap = new Map<string, DataObject | undefined>(cms);
    const secretMap = new Map<string, DataObject | undefined>(secrets);
    return containerEnv(spec, {
      pod: this.pod,
      podIP: this.podIP,
      hostIP: this.deps.nodeIP,
      services,
      ...(master ? { masterService: master } : {}),
      configMap: (n) => cmMap.get(n),
      secret: (n) => secretMap.get(n),
      imagePath: '',
    });
  }

  private scheduleRestart(c: Container, waitingReason: string): void {
    if (this.terminating || this.shutDown) return this.maybeFinish();
    const delay = nextBackoff(this.backoff.get(c.spec.name), c.ranForMs());
    this.backoff.set(c.spec.name, delay);
    if (delay > 0) {
      const reason = waitingReason === 'Error' ? 'CrashLoopBackOff' : waitingReason;
      const message = `back-off ${Math.round(delay / 1000)}s restarting failed container=${c.spec.name} pod=${this.pod.metadata.name}_${this.pod.metadata.namespace ?? ''}(${this.uid})`;
      if (waitingReason === 'Error') {
        c.setWaiting(reason, message);
        c.event('Warning', 'BackOff', `Back-off restarting failed container ${c.spec.name} in pod ${this.pod.metadata.name}_${this.pod.metadata.namespace ?? ''}(${this.uid})`);
      } else if (waitingReason === 'ImagePullBackOff') {
        c.setWaiting('ImagePullBackOff', `Back-off pulling image "${c.spec.image ?? ''}"`);
        c.event('Normal', 'BackOff', `Back-off pulling image "${c.spec.image ?? ''}"`);
      }
    }
    clearTimeout(this.restartTimers.get(c.spec.name));
    this.restartTimers.set(
      c.spec.name,
      setTimeout(() => {
        this.restartTimers.delete(c.spec.name);
        if (c.init) this.runNextInit();
        else void this.startContainer(c);
      }, delay),
    );
  }

  private onContainerExit(c: Container): void {
    if (this.terminating || this.shutDown) {
      this.maybeFinish();
      return;
    }
    const state = c.record.state;
    const exitCode = 'terminated' in state ? state.terminated.exitCode : 1;
    const policy = this.pod.spec?.restartPolicy;
    if (c.init) {
      if (exitCode === 0) {
        this.runNextInit();
        return;
      }
      // A failed init container is retried unless the pod never restarts (then the pod fails).
      if ((policy ?? 'Always') !== 'Never') this.scheduleRestart(c, 'Error');
      return;
    }
    if (shouldRestart(policy, exitCode) || c.killedByProbe) this.scheduleRestart(c, 'Error');
    else if (this.containers.every((x) => !x.running && 'terminated' in x.record.state && !this.restartTimers.has(x.spec.name))) void this.releaseNetwork();
  }

  /**
   * A pod that has run to completion (restartPolicy Never/OnFailure) keeps its object, status and
   * logs, but its sandbox goes, as the kubelet stops the sandbox of a terminal pod: the netns, the
   * veth and the address are freed at once.
   */
  private async releaseNetwork(): Promise<void> {
    if (this.networkReleased) return;
    this.networkReleased = true;
    await destroySandbox(this.names, this.podIP || undefined);
    if (this.podIP) this.deps.ips.release(this.podIP);
  }

  /** A new version of the pod object. */
  update(pod: Pod): void {
    this.pod = pod;
    const ts = pod.metadata.deletionTimestamp;
    if (!ts) return;
    this.terminate(effectiveGraceSeconds(pod));
  }

  /** The pod object is gone from the API (a force delete, or a new pod of the same name). */
  vanished(): void {
    this.gone = true;
    this.terminate(effectiveGraceSeconds(this.pod));
  }

  private terminate(grace: number): void {
    if (this.grace !== undefined && grace >= this.grace) return;
    const first = !this.terminating;
    this.grace = grace;
    this.terminating = true;
    if (first) {
      clearTimeout(this.setupTimer);
      for (const t of this.restartTimers.values()) clearTimeout(t);
      this.restartTimers.clear();
    }
    for (const c of [...this.init, ...this.containers]) c.terminate(grace);
    this.markDirty();
    this.maybeFinish();
  }

  /** Once every container has exited: last status, teardown, and the pod object deleted. */
  private maybeFinish(): void {
    if (this.finishing || (!this.terminating && !this.shutDown)) return;
    if ([...this.init, ...this.containers].some((c) => c.running)) return;
    this.finishing = true;
    this.teardownDone = this.finish();
  }

  private async finish(): Promise<void> {
    if (!this.shutDown && !this.gone) {
      this.terminal = true;
      // Containers that never ran are reported terminated too, as for a pod that is done.
      await this.flushStatus();
    }
    await this.tearDown();
    if (!this.shutDown && !this.gone) {
      try {
        await this.deps.client.request('DELETE', `/api/v1/namespaces/${this.pod.metadata.namespace ?? 'default'}/pods/${this.pod.metadata.name}`, {
          body: { apiVersion: 'v1', kind: 'DeleteOptions', gracePeriodSeconds: 0, preconditions: { uid: this.uid } },
          allow: [404, 409],
        });
      } catch (err) {
        this.deps.log(`${this.key}: delete failed: ${(err as Error).message}`);
      }
    }
    this.deps.finished(this);
  }

  private async tearDown(): Promise<void> {
    clearTimeout(this.patchTimer);
    for (const c of [...this.init, ...this.containers]) c.log.remove();
    await this.releaseNetwork();
    rmSync(this.dir, { recursive: true, force: true });
  }

  /** Agent shutdown: SIGKILL everything now, then tear down; resolves when done. */
  async shutdown(): Promise<void> {
    this.shutDown = true;
    clearTimeout(this.setupTimer);
    for (const t of this.restartTimers.values()) clearTimeout(t);
    const all = [...this.init, ...this.containers];
    for (const c of all) c.kill();
    await Promise.race([Promise.all(all.map((c) => c.runDone)), new Promise((r) => setTimeout(r, 3_000))]);
    if (!this.finishing) {
      this.finishing = true;
      this.teardownDone = this.tearDown();
    }
    await this.teardownDone;
  }

  private markDirty(): void {
    if (this.gone || this.shutDown) return;
    this.dirty = true;
    if (this.patching || this.patchTimer) return;
    // Changes of one tick (a container's state, its readiness) go in one patch.
    this.patchTimer = setTimeout(() => {
      this.patchTimer = undefined;
      void this.patchLoop();
    }, 0);
  }

  private async patchLoop(): Promise<void> {
    if (this.patching) return;
    this.patching = true;
    try {
      while (this.dirty && !this.gone && !this.shutDown) {
        this.dirty = false;
        await this.patchOnce();
      }
    } finally {
      this.patching = false;
    }
  }

  private async flushStatus(): Promise<void> {
    while (this.patching) await new Promise((r) => setTimeout(r, 20));
    this.dirty = true;
    await this.patchLoop();
  }

  private statusBody(): Record<string, unknown> {
    if (this.terminal) {
      // A container that never started in a finished pod is reported terminated, as the kubelet
      // reports containers of a terminal pod (ContainerStatusUnknown for those it never ran).
      for (const c of [...this.init, ...this.containers]) {
        if ('waiting' in c.record.state) {
          const now = rfc3339();
          c.record.state = { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown', message: 'The container could not be located when the pod was terminated', startedAt: now, finishedAt: now } };
        }
      }
    }
    return podStatus({
      pod: this.pod,
      ...(this.sandboxReady && this.podIP ? { podIP: this.podIP } : {}),
      hostIP: this.deps.nodeIP,
      startTime: this.startTime,
      sandboxReady: this.sandboxReady,
      init: this.init.map((c) => c.record),
      containers: this.containers.map((c) => c.record),
      terminal: this.terminal,
      now: rfc3339(),
    });
  }

  private async patchOnce(): Promise<void> {
    const status = this.statusBody();
    try {
      const { body } = await this.deps.client.request<Pod>('PATCH', `/api/v1/namespaces/${this.pod.metadata.namespace ?? 'default'}/pods/${this.pod.metadata.name}/status`, {
        body: { metadata: { uid: this.uid }, status },
        contentType: PATCH.merge,
      });
      // Keep condition transition times as the server now has them.
      if (body?.metadata?.uid === this.uid && body.status) this.pod = { ...this.pod, status: body.status };
    } catch (err) {
      const code = statusOf(err);
      if (code === 404 || code === 409) return;
      this.deps.log(`${this.key}: status patch failed: ${(err as Error).message}`);
      this.dirty = true;
      await new Promise((r) => setTimeout(r, 1_000));
    }
  }
}
