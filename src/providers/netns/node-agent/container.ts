// One container of a pod: its process (started as rootfs-script.ts describes), its probes, its log,
// its status, and how it is stopped (termination.ts). Restarts are the pod worker's decision; each
// start is a new process with restartCount one higher and the previous run in lastState.
//
// Signals go as the container runtime sends them: the stop signal to the main process only (PID 1
// of a container), SIGKILL to every process of the container (its process group, plus preStop
// exec hooks, which run inside it) — and once the main process has exited the rest of the container
// is killed too, as a container's other processes die with its PID 1.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { constants } from 'node:os';

import { ContainerLog } from './container-log.ts';
import type { EventSink } from './events.ts';
import { containerArgv, goProgramBinds, imagePath, resolveImage, stopSignalOf, type GoPrograms, type ImageSpec } from './images.ts';
import type { ContainerSpec, LifecycleHandler, Pod, ProbeSpec } from './pod-types.ts';
import { execInContainer, runProbe } from './probe-checks.ts';
import { Prober, type ProbeKind } from './prober.ts';
import { rootfsScript, type RootfsMount } from './rootfs-script.ts';
import { terminatedReason, type ContainerRecord, type TerminatedState } from './status.ts';
import { ContainerTermination, type Clock } from './termination.ts';
import { LIFECYCLE_EVENT_COMPONENT, lifecycleMessage, type LifecycleEventReason } from '../../kube/lifecycle-events.ts';

export interface ContainerHost {
  pod(): Pod;
  podIP(): string;
  /** Name of the pod's network namespace (under /run/netns). */
  readonly netns: string;
  nodeName: string;
  nodeExecPath: string;
  /** Programs built from Go modules, for the images that run them (images.ts). */
  goPrograms: GoPrograms;
  kubeletMinor: string;
  clock: Clock;
  /** Clock time the agent admitted the pod: the kubelet starts the pod's probe workers, and their tickers, then. */
  admittedAt: number;
  /** The kubelet syncs the pod: the readiness probe of each started container that is not ready runs now (prober.ts). */
  syncPod(): void;
  events: EventSink;
  log(message: string): void;
  /** Something in the container's status changed: the pod status should be reported. */
  changed(): void;
  /** The main process exited (after the record was updated). */
  exited(container: Container): void;
}

export interface StartInputs {
  env: Map<string, string>;
  mounts: RootfsMount[];
  hostsFile: string;
  /** The pod's hostname (spec.hostname or its name), in the container's own UTS namespace. */
  hostname: string;
  links: Readonly<Record<string, string>>;
  binds: readonly string[];
}

function rfc3339(date = new Date()): string {
  return date.toISOString().replace(/\.\d+Z$/, 'Z');
}

/** The kubelet's generic PLEG relist period (pkg/kubelet/kubelet.go, genericPlegRelistPeriod). */
const RELIST_MS = 1000;

function signalNumber(signal: NodeJS.Signals): number {
  return (constants.signals as Record<string, number>)[signal] ?? 15;
}

export class Container {
  readonly spec: ContainerSpec;
  readonly init: boolean;
  readonly fieldPath: string;
  readonly record: ContainerRecord;
  readonly log: ContainerLog;
  pid?: number;
  env?: Map<string, string>;
  /** The pod is being deleted: this container's current run is being stopped and not restarted. */
  stopping = false;
  private readonly host: ContainerHost;
  private readonly dir: string;
  private image?: ImageSpec;
  private child?: ChildProcess;
  private termination?: ContainerTermination;
  private probers: Prober[] = [];
  private readonly hookGroups = new Set<number>();
  private preStopTimer?: unknown;
  private startedAtMs = 0;
  private endedAtMs = 0;
  /** Runs started so far: the next run's restartCount. */
  private runs = 0;
  private liveness = true;
  private startupDone = false;
  private runResolve?: () => void;
  /** Resolves when the current run's main process has exited. */
  runDone: Promise<void> = Promise.resolve();

  constructor(spec: ContainerSpec, init: boolean, dir: string, host: ContainerHost) {
    this.spec = spec;
    this.init = init;
    this.dir = dir;
    this.host = host;
    this.fieldPath = `spec.${init ? 'initContainers' : 'containers'}{${spec.name}}`;
    this.record = {
      name: spec.name,
      image: spec.image ?? '',
      imageID: '',
      state: { waiting: { reason: init ? 'PodInitializing' : 'ContainerCreating' } },
      ready: false,
      restartCount: 0,
    };
    this.log = new ContainerLog(path.join(dir, 'logs'));
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  /** The image this container can run, or undefined after reporting ErrImagePull. */
  pull(): ImageSpec | undefined {
    const image = this.spec.image ?? '';
    const resolved = resolveImage(image, this.host.nodeExecPath, undefined, this.host.goPrograms);
    if (!resolved.ok) {
      this.setWaiting('ErrImagePull', resolved.message);
      this.event('Warning', 'Failed', resolved.message);
      this.event('Warning', 'Failed', 'Error: ErrImagePull');
      return undefined;
    }
    this.image = resolved.spec;
    this.record.imageID = `zerodrop://${image}`;
    this.event('Normal', 'Pulled', `Container image "${image}" already present on machine`);
    return resolved.spec;
  }

  setWaiting(reason: string, message?: string): void {
    this.archiveRun();
    this.record.state = { waiting: { reason, ...(message ? { message } : {}) } };
    this.record.ready = false;
    this.record.started = false;
    this.host.changed();
  }

  /** Starts one run of the container (its image already pulled). */
  start(inputs: StartInputs): void {
    const image = this.image;
    if (!image) throw new Error(`container ${this.spec.name}: start before pull`);
    const env = new Map(inputs.env);
    if (!env.has('PATH')) env.set('PATH', imagePath(image));
    this.env = env;
    const expand = (s: string) => s.replace(/\$\$|\$\(([^)]*)\)/g, (m, name: string | undefined) => (m === '$$' ? '$' : (env.get(name!) ?? m)));
    const argv = containerArgv(image, this.spec.command?.map(expand), this.spec.args?.map(expand));
    const root = path.join(this.dir, 'root');
    mkdirSync(root, { recursive: true });
    const script = path.join(this.dir, 'setup.sh');
    writeFileSync(
      script,
      rootfsScript({
        root,
        mounts: inputs.mounts,
        hostsFile: inputs.hostsFile,
        hostname: inputs.hostname,
        ...(image.node ? { nodeExec: this.host.nodeExecPath } : {}),
        programs: goProgramBinds(image, this.host.goPrograms),
        workingDir: this.spec.workingDir ?? '/',
        links: inputs.links,
        binds: inputs.binds,
      }),
    );
    this.event('Normal', 'Created', `Created container: ${this.spec.name}`);
    this.archiveRun();
    this.record.restartCount = this.runs++;
    this.log.begin(this.record.restartCount);
    const netns = `/run/netns/${this.host.netns}`;
    const child = spawn('nsenter', [`--net=${netns}`, '--', 'unshare', '--mount', '--uts', '--propagation', 'private', '--', 'sh', script, ...[...env].map(([k, v]) => `${k}=${v}`), ...argv], {
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    });
    this.child = child;
    this.pid = child.pid;
    this.stopping = false;
    this.runDone = new Promise((resolve) => (this.runResolve = resolve));
    const spawnedAt = rfc3339();
    this.startedAtMs = this.host.clock.now();
    this.record.containerID = `zerodrop://${child.pid ?? 0}`;
    this.record.state = { waiting: { reason: 'ContainerCreating' } };
    this.record.ready = false;
    this.record.started = false;
    this.liveness = true;
    for (const stream of ['stdout', 'stderr'] as const) {
      const readable = child[stream];
      if (!readable) continue;
      readable.setEncoding('utf8');
      createInterface({ input: readable, crlfDelay: Infinity }).on('line', (line) => this.log.write(stream, line));
      readable.on('error', () => undefined);
    }
    let startedAt: string | undefined;
    const marker = child.stdio[3] as Readable | null;
    marker?.once('data', () => {
      if (this.child !== child) return;
      startedAt = rfc3339();
      this.onStarted(startedAt);
    });
    marker?.on('error', () => undefined);
    child.once('error', (err) => {
      this.log.write('stderr', `zerodrop node agent: ${err.message}`);
      this.onExit(127, null, startedAt ?? spawnedAt);
    });
    child.once('exit', (code, signal) => this.onExit(code, signal, startedAt ?? spawnedAt));
    this.termination = new ContainerTermination(this.host.clock, this.terminationActions(), this.spec.lifecycle?.preStop !== undefined && !this.init);
  }

  /** The container's own program runs (the setup script signalled it): Started, probes begin. */
  private onStarted(startedAt: string): void {
    this.startedAtMs = this.host.clock.now();
    this.record.state = { running: { startedAt } };
    this.startupDone = !this.spec.startupProbe;
    this.record.started = this.startupDone;
    this.event('Normal', 'Started', `Started container ${this.spec.name}`);
    if (!this.init && !this.stopping) this.startProbes();
    else if (!this.init) this.startReadinessOnly();
    // The kubelet's generic PLEG relists containers every second: the pod is synced when it sees
    // this one running, not at the moment it started.
    if (!this.init) this.host.clock.setTimeout(() => this.host.syncPod(), RELIST_MS - (this.host.clock.now() % RELIST_MS));
    // Without a readiness probe a started container is ready at once.
    if (!this.init && !this.spec.readinessProbe && this.startupDone) this.record.ready = true;
    this.host.changed();
  }

  private startReadinessOnly(): void {
    if (!this.spec.readinessProbe) return;
    const p = this.makeProber('readiness', this.spec.readinessProbe);
    this.probers.push(p);
    p.start(this.startedAtMs, this.host.admittedAt);
  }

  /** A sync of the pod: the readiness probe runs now if the container is started and not ready. */
  triggerReadiness(): void {
    for (const p of this.probers) if (p.kind === 'readiness') p.trigger();
  }

  /** The pod is deleted (or G shortened): stop this run as the kubelet does. */
  terminate(graceSeconds: number): void {
    if (!this.child) return;
    if (!this.stopping) this.event('Normal', 'Killing', `Stopping container ${this.spec.name}`);
    this.stopping = true;
    // The kubelet stops liveness and startup probes of a terminating pod; readiness keeps running.
    for (const p of this.probers) if (p.kind !== 'readiness') p.stop();
    this.probers = this.probers.filter((p) => p.kind === 'readiness');
    this.termination?.terminate(graceSeconds);
  }

  /** SIGKILL now (agent shutdown). */
  kill(): void {
    if (this.pid !== undefined && this.child) this.signalGroup(this.pid, 'SIGKILL');
    for (const g of this.hookGroups) this.signalGroup(g, 'SIGKILL');
  }

  private signalGroup(pid: number, signal: NodeJS.Signals): void {
    try {
      process.kill(-pid, signal);
    } catch {
      // gone
    }
  }

  private terminationActions() {
    const hook = this.spec.lifecycle?.preStop;
    return {
      runPreStop: (timeoutMs: number) => {
        this.lifecycleEvent('PreStopStarted', lifecycleMessage.PreStopStarted(this.spec.name));
        this.runPreStop(hook!, timeoutMs);
      },
      preStopTimedOut: () => {
        if (this.preStopTimer !== undefined) this.host.clock.clearTimeout(this.preStopTimer);
        this.preStopTimer = undefined;
        this.lifecycleEvent('PreStopTimedOut', lifecycleMessage.PreStopTimedOut(this.spec.name));
      },
      stopSignal: () => {
        const signal = stopSignalOf(this.image, this.spec.lifecycle?.stopSignal);
        if (this.pid !== undefined && this.child) {
          this.lifecycleEvent('StopSignalSent', lifecycleMessage.StopSignalSent(this.spec.name, signal));
          try {
            process.kill(this.pid, signal);
          } catch {
            // gone
          }
        }
      },
      kill: () => {
        if (this.pid !== undefined && this.child) this.lifecycleEvent('ContainerKilled', lifecycleMessage.ContainerKilled(this.spec.name));
        this.kill();
      },
    };
  }

  /** One of the Events no kubelet writes (src/providers/kube/lifecycle-events.ts), for the main containers. */
  private lifecycleEvent(reason: LifecycleEventReason, message: string): void {
    if (this.init) return;
    this.host.events.emit(this.host.pod(), this.fieldPath, 'Normal', reason, message, LIFECYCLE_EVENT_COMPONENT);
  }

  private runPreStop(hook: LifecycleHandler, timeoutMs: number): void {
    const done = (error?: string) => {
      if (error !== undefined) this.event('Warning', 'FailedPreStopHook', error);
      if (this.termination?.state === 'prestop') this.lifecycleEvent('PreStopEnded', lifecycleMessage.PreStopEnded(this.spec.name, error !== undefined));
      this.termination?.preStopDone();
    };
    const pod = this.host.pod();
    if (hook.sleep) {
      this.preStopTimer = this.host.clock.setTimeout(() => {
        this.preStopTimer = undefined;
        done();
      }, hook.sleep.seconds * 1000);
      return;
    }
    if (hook.exec && this.pid !== undefined) {
      const command = hook.exec.command ?? [];
      const run = execInContainer(this.pid, this.env ?? new Map(), command, Infinity);
      if (run.pid !== undefined) this.hookGroups.add(run.pid);
      void run.result.then((r) => {
        if (run.pid !== undefined) this.hookGroups.delete(run.pid);
        done(r.ok ? undefined : `PreStopHook failed: Exec lifecycle hook (${JSON.stringify(command)}) for Container "${this.spec.name}" in Pod "${pod.metadata.name}_${pod.metadata.namespace ?? ''}(${pod.metadata.uid ?? ''})" failed - error: ${r.message ?? ''}, message: ${JSON.stringify(r.output)}`);
      });
      return;
    }
    if (hook.httpGet) {
      const port = typeof hook.httpGet.port === 'number' ? hook.httpGet.port : (this.spec.ports?.find((p) => p.name === hook.httpGet!.port)?.containerPort ?? Number(hook.httpGet.port));
      const url = `http://${hook.httpGet.host ?? this.host.podIP()}:${port}${hook.httpGet.path ?? '/'}`;
      const req = http.get(url, { agent: false, timeout: timeoutMs }, (res) => {
        res.resume();
        res.once('end', () => done(res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode < 400 ? undefined : `PreStopHook failed: HTTP lifecycle hook (${hook.httpGet!.path ?? '/'}) for Container "${this.spec.name}" in Pod "${pod.metadata.name}" failed - error: status ${res.statusCode}`));
      });
      req.once('timeout', () => req.destroy(new Error('timeout')));
      req.once('error', (err) => done(`PreStopHook failed: HTTP lifecycle hook (${hook.httpGet!.path ?? '/'}) for Container "${this.spec.name}" in Pod "${pod.metadata.name}" failed - error: ${err.message}`));
      return;
    }
    done('PreStopHook failed: unsupported handler');
  }

  private makeProber(kind: ProbeKind, spec: ProbeSpec): Prober {
    return new Prober(
      kind,
      spec,
      {
        check: (timeoutMs) =>
          runProbe(spec, { podIP: this.host.podIP(), pid: this.pid ?? 0, env: this.env ?? new Map(), ports: this.spec.ports ?? [], userAgent: `kube-probe/${this.host.kubeletMinor}` }, timeoutMs),
        changed: (ok) => this.probeChanged(kind, ok),
        failed: (message) => this.event('Warning', 'Unhealthy', `${kind[0]!.toUpperCase()}${kind.slice(1)} probe failed: ${message}`),
        firstSeen: () => this.host.syncPod(),
      },
      this.host.clock,
    );
  }

  private startProbes(): void {
    if (this.spec.startupProbe) {
      const p = this.makeProber('startup', this.spec.startupProbe);
      this.probers.push(p);
      p.start(this.startedAtMs, this.host.admittedAt);
    } else this.startAfterStartup();
  }

  /** Liveness and readiness probes start once the startup probe (if any) has passed. */
  private startAfterStartup(): void {
    for (const [kind, spec] of [['liveness', this.spec.livenessProbe], ['readiness', this.spec.readinessProbe]] as const) {
      if (!spec) continue;
      const p = this.makeProber(kind, spec);
      this.probers.push(p);
      p.start(this.startedAtMs, this.host.admittedAt);
    }
  }

  private probeChanged(kind: ProbeKind, ok: boolean): void {
    if (!this.child) return;
    if (kind === 'readiness') {
      this.record.ready = ok;
      this.host.changed();
      this.host.syncPod();
      return;
    }
    if (kind === 'startup' && ok) {
      this.startupDone = true;
      this.record.started = true;
      if (!this.spec.readinessProbe) this.record.ready = true;
      this.startAfterStartup();
      this.host.changed();
      this.host.syncPod();
      return;
    }
    // Liveness or startup failed: the container is killed and restarted (the kubelet's
    // "Container X failed liveness probe, will be restarted").
    this.liveness = false;
    const spec = kind === 'liveness' ? this.spec.livenessProbe : this.spec.startupProbe;
    this.event('Normal', 'Killing', `Container ${this.spec.name} failed ${kind} probe, will be restarted`);
    for (const p of this.probers) p.stop();
    this.probers = [];
    const grace = spec?.terminationGracePeriodSeconds ?? this.host.pod().spec?.terminationGracePeriodSeconds ?? 30;
    this.termination?.terminate(grace);
  }

  /** The last run was ended by a failed liveness/startup probe. */
  get killedByProbe(): boolean {
    return !this.liveness;
  }

  private onExit(code: number | null, signal: NodeJS.Signals | null, startedAt: string): void {
    if (!this.child) return;
    const pid = this.pid;
    this.child = undefined;
    this.endedAtMs = this.host.clock.now();
    for (const p of this.probers) p.stop();
    this.probers = [];
    this.termination?.exited();
    if (this.preStopTimer !== undefined) this.host.clock.clearTimeout(this.preStopTimer);
    this.preStopTimer = undefined;
    // Whatever else ran in the container dies with its main process.
    if (pid !== undefined) this.signalGroup(pid, 'SIGKILL');
    for (const g of this.hookGroups) this.signalGroup(g, 'SIGKILL');
    this.hookGroups.clear();
    const exitCode = code ?? 128 + signalNumber(signal ?? 'SIGKILL');
    const terminated: TerminatedState = {
      exitCode,
      ...(signal ? { signal: signalNumber(signal) } : {}),
      reason: terminatedReason(exitCode),
      startedAt,
      finishedAt: rfc3339(),
      ...(this.record.containerID ? { containerID: this.record.containerID } : {}),
    };
    this.record.state = { terminated };
    this.record.ready = false;
    this.record.started = false;
    this.log.end();
    this.runResolve?.();
    this.host.exited(this);
    this.host.changed();
  }

  /** The last run, once the container waits or starts again, is its lastState. */
  private archiveRun(): void {
    if ('terminated' in this.record.state) this.record.lastState = { terminated: this.record.state.terminated };
  }

  /** Milliseconds the last run lasted (0 when it never ran). */
  ranForMs(): number {
    return this.runs === 0 || this.running ? 0 : this.endedAtMs - this.startedAtMs;
  }

  event(type: 'Normal' | 'Warning', reason: string, message: string): void {
    this.host.events.emit(this.host.pod(), this.fieldPath, type, reason, message);
  }
}
