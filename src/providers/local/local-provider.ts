// The local provider: pods as real process groups on loopback addresses, with a small in-process
// control plane (Deployment/ReplicaSet controllers, kubelet termination, readiness probes,
// EndpointSlices, and a kube-proxy-like Service load balancer). See docs/local-provider.md.
//
// Wiring: a pod reports every state change to the EndpointSlice stores of the Services that select
// its workload (which record endpoint-changed and notify the balancers' watches), then to its
// workload's controller (which replaces, scales and rolls pods). Everything happens in this process;
// only the pods are separate processes.

import { disruptionBudgetsOf, type DisruptionBudget, type Service, type Topology, type Workload } from '../../model/workload.ts';
import { evictEach } from '../../chaos/drain.ts';
import { evictionAllowed, LocalNodes } from './nodes.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type {
  DeleteOptions,
  PodInfo,
  Provider,
  ProviderCapabilities,
  ServiceAddress,
  DrainNodeOptions,
} from '../provider.ts';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { podTcpAddress } from '../pod-address.ts';
import { AddressPool } from './addresses.ts';
import { LocalApiServer } from './api-server.ts';
import { ServiceBalancer, type BalancerFault } from './balancer.ts';
import { newSeed } from './programming-schedule.ts';
import { DeploymentController } from './deployment.ts';
import { EndpointStore } from './endpoints.ts';
import { LocalPod } from './pod.ts';
import { EXIT_REAP_WAIT_MS, serviceEnv, waitForGroupsGoneSync } from './processes.ts';
import type { LeftoverTracker } from '../../state/run-record.ts';
import { onExit } from '../../state/exit-hooks.ts';

export interface LocalProviderOptions {
  recorder: Recorder;
  /** Identifies the run; pods see it as ZERODROP_RUN_ID. */
  runId: string;
  /** Working directory of every pod; relative paths in commands resolve against it. */
  cwd: string;
  /** A deliberately broken Service load balancer, for the project's own tests only. */
  balancerFault?: BalancerFault;
  /** The run's state record: every process group and temporary directory is noted there as it is created. */
  tracker?: LeftoverTracker;
  /** Seed of the nodes' programming lags (programming-schedule.ts): the same seed replays them. Random when absent. */
  seed?: number;
}

interface ServiceState {
  service: Service;
  ip: string;
  store: EndpointStore;
  balancer: ServiceBalancer;
}

const DEFAULT_DEPLOY_TIMEOUT_MS = 30_000;
/** Teardown waits at most this long for killed processes to be reaped. */
const TEARDOWN_WAIT_MS = 10_000;

function validate(topology: Topology, existingWorkloads: ReadonlySet<string>, existingServices: ReadonlySet<string>): void {
  const workloads = new Set(existingWorkloads);
  for (const w of topology.workloads) {
    if (workloads.has(w.name)) throw new Error(`workload ${w.name} is defined twice`);
    if (w.command.length === 0) throw new Error(`workload ${w.name} has an empty command`);
    if (!(w.replicas >= 0)) throw new Error(`workload ${w.name}: replicas must be >= 0`);
    if (!(w.terminationGracePeriodSeconds >= 0)) throw new Error(`workload ${w.name}: terminationGracePeriodSeconds must be >= 0`);
    const { maxSurge, maxUnavailable } = w.strategy;
    if (!(maxSurge >= 0 && maxUnavailable >= 0) || (maxSurge === 0 && maxUnavailable === 0)) {
      throw new Error(`workload ${w.name}: maxSurge and maxUnavailable must be >= 0 and not both 0`);
    }
    workloads.add(w.name);
  }
  const services = new Set(existingServices);
  for (const s of topology.services) {
    if (services.has(s.name)) throw new Error(`service ${s.name} is defined twice`);
    if (!workloads.has(s.selector)) throw new Error(`service ${s.name} selects unknown workload ${s.selector}`);
    if (s.ports.length === 0) throw new Error(`service ${s.name} has no ports`);
    services.add(s.name);
  }
}

/** What the local provider carries; its session states them before any provider exists (src/runner/eligibility.ts). */
export const LOCAL_CAPABILITIES: ProviderCapabilities = { multiNode: false, udp: true, nodeDrain: true, containerStopSignals: true, serviceConnectionRecords: true, roundRobinServices: true, podReload: true, routeChanges: 'reload' };

export class LocalProvider implements Provider {
  readonly name = 'local';
  // Nodes are modelled for drains only (nodes.ts): the pods all run on this machine.
  readonly capabilities: ProviderCapabilities = LOCAL_CAPABILITIES;
  private readonly nodes = new LocalNodes();
  private readonly budgets = new Map<string, DisruptionBudget>();

  private readonly recorder: Recorder;
  private readonly runId: string;
  private readonly cwd: string;
  private readonly fault?: BalancerFault;
  private readonly tracker?: LeftoverTracker;
  /** Seed of the Service balancers' programming lags, on the Timeline as a note at the first deploy. */
  readonly seed: number;
  private seedNoted = false;
  /** Waits to re-check when a balancer's node applies a change (waitUntil). */
  private readonly applied = new Set<() => void>();
  private addresses?: AddressPool;
  /** The read-only Kubernetes API the pods discover endpoints from (api-server.ts). */
  private api?: LocalApiServer;
  private readonly controllers = new Map<string, DeploymentController>();
  private readonly services = new Map<string, ServiceState>();
  /** Every pod this run created, removed ones included (teardown reaps all of them). */
  private readonly allPods = new Map<string, LocalPod>();
  private readonly stopping = new AbortController();
  private teardownPromise?: Promise<void>;
  /** Takes the exit hook off once teardown has done its work; undefined until the first deploy. */
  private dropExitHook?: () => void;
  /** Last resort if the harness exits without teardown: no pod may outlive it. */
  private readonly onProcessExit = (): void => {
    const groups = [...this.allPods.values()].flatMap((pod) => pod.groups());
    for (const pod of this.allPods.values()) void pod.kill();
    // As for the groups processes.ts kills at exit: a pod still dying could write into its directory.
    waitForGroupsGoneSync(groups, EXIT_REAP_WAIT_MS);
    this.removePodDirs();
  };
  /**
   * Parent of every pod's scratch directory (ZERODROP_POD_DIR), like an emptyDir volume that lives
   * as long as the pod: gateways render their configuration, pid and temp files there. Created on
   * first use, removed with everything in it at teardown.
   */
  private podDirRoot?: string;

  constructor(opts: LocalProviderOptions) {
    this.recorder = opts.recorder;
    this.runId = opts.runId;
    this.cwd = opts.cwd;
    this.fault = opts.balancerFault;
    this.tracker = opts.tracker;
    this.seed = opts.seed ?? newSeed();
  }

  async deploy(topology: Topology, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
    this.assertRunning();
    validate(topology, new Set(this.controllers.keys()), new Set(this.services.keys()));
    this.dropExitHook ??= onExit(this.onProcessExit);
    if (!this.addresses) {
      const pool = await AddressPool.create();
      if (this.stopping.signal.aborted) pool.close();
      this.assertRunning();
      this.addresses = pool;
    }
    const addresses = this.addresses;

    if (!this.seedNoted && topology.services.length > 0) {
      this.seedNoted = true;
      this.recorder.event('note', {
        message: `Service load balancers: each node applies each endpoint change after its programming delay plus a lag within its spread, drawn from seed ${this.seed} (--seed ${this.seed} replays them)`,
        detail: { seed: this.seed, spreadMs: Object.fromEntries(topology.services.map((s) => [s.name, s.programmingSpreadMs ?? 0])) },
      });
    }
    // Services first, so that they take the first addresses of the block (.1, .2, ...).
    for (const service of topology.services) {
      const ip = addresses.allocate();
      const store = new EndpointStore(service, this.recorder);
      const onApplied = () => {
        for (const listener of this.applied) listener();
      };
      const balancer = new ServiceBalancer({ service, host: ip, store, recorder: this.recorder, fault: this.fault, seed: this.seed, onApplied });
      this.services.set(service.name, { service, ip, store, balancer });
      await balancer.listen();
      this.assertRunning();
    }
    if (!this.api) {
      const api = new LocalApiServer({ host: addresses.allocate() });
      this.api = api;
      await api.listen();
      this.assertRunning();
    }
    for (const service of topology.services) {
      const state = this.services.get(service.name);
      if (state) this.api.addService(state.store);
    }
    for (const budget of disruptionBudgetsOf(topology)) this.budgets.set(budget.workload, budget);
    for (const workload of topology.workloads) {
      const controller = new DeploymentController(workload, this.recorder, (name, generation) => {
        this.nodes.schedule(name);
        return this.createPod(workload, name, generation);
      });
      this.controllers.set(workload.name, controller);
    }
    for (const workload of topology.workloads) this.controllers.get(workload.name)?.reconcile();

    await this.waitUntil(() => this.deployed(topology), {
      timeoutMs: opts.timeoutMs ?? DEFAULT_DEPLOY_TIMEOUT_MS,
      signal: opts.signal,
      what: () => this.deployStatus(topology),
    });
  }

  serviceAddress(service: string, port?: string): ServiceAddress {
    const state = this.services.get(service);
    if (!state) throw new Error(`unknown service ${service}`);
    return state.balancer.address(port);
  }

  podAddress(service: string, pod: string): ServiceAddress | undefined {
    const spec = this.services.get(service)?.service;
    return spec && podTcpAddress(spec, this.pods(spec.selector), pod);
  }

  pods(workload: string): PodInfo[] {
    return this.controller(workload).pods.filter((p) => !p.removed).map((p) => {
      const node = this.nodes.nodeOfPod(p.name);
      return { ...p.info(), ...(node ? { node } : {}) };
    });
  }

  /**
   * `kubectl drain` on the modelled nodes (nodes.ts): cordon, then evict the run's pods on the node
   * one by one, an eviction the workload's PodDisruptionBudget refuses (429) tried again after
   * `retryMs` (src/chaos/drain.ts). An accepted eviction is a delete with the pod's grace period.
   */
  async drainNode(node: string, opts: DrainNodeOptions): Promise<string[]> {
    this.assertRunning();
    this.nodes.cordon(node);
    this.recorder.event('note', { message: `cordon and drain node ${node}`, detail: { node } });
    const onNode = [...this.controllers.keys()].flatMap((w) => this.nodes.podsOn(node, this.pods(w)).filter((p) => p.phase !== 'Terminating'));
    const evict = async (name: string): Promise<boolean> => {
      const pod = onNode.find((p) => p.name === name);
      const current = pod ? this.pods(pod.workload).find((p) => p.name === name) : undefined;
      if (!pod || !current || current.phase === 'Terminating') return true;
      const controller = this.controller(pod.workload);
      if (!evictionAllowed(current, this.pods(pod.workload), controller.replicas, this.budgets.get(pod.workload))) return false;
      await this.deletePod(name);
      return true;
    };
    return evictEach(node, onNode.map((p) => p.name), evict, {
      ...opts,
      onBlocked: (pod) => this.recorder.event('note', { pod, message: `eviction of ${pod} refused by its PodDisruptionBudget (429)` }),
      onEvicted: (pod) => this.recorder.event('note', { pod, message: `eviction of ${pod} accepted` }),
    });
  }

  // The API calls below take effect synchronously (the delete is "accepted" when they return); they
  // are async only to fit the Provider interface, so that errors arrive as rejections.

  async deletePod(pod: string, opts: DeleteOptions = {}): Promise<void> {
    this.assertRunning();
    const target = this.allPods.get(pod);
    if (!target || target.removed) throw new Error(`pod ${pod} not found`);
    target.delete(opts.gracePeriodSeconds ?? target.workload.terminationGracePeriodSeconds);
  }

  async reloadPod(pod: string, opts: { env?: Record<string, string> } = {}): Promise<void> {
    this.assertRunning();
    const target = this.allPods.get(pod);
    if (!target || target.removed) throw new Error(`pod ${pod} not found`);
    await target.reload(opts.env);
  }

  async scale(workload: string, replicas: number): Promise<void> {
    this.assertRunning();
    this.controller(workload).scale(replicas);
  }

  async rolloutRestart(workload: string): Promise<void> {
    this.assertRunning();
    this.controller(workload).restart();
  }

  async waitForRollout(workload: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const controller = this.controller(workload);
    if (!controller.rolloutInProgress) return;
    const generation = controller.generation;
    await this.recorder.waitFor(
      (e) =>
        e.kind === 'rollout-complete' &&
        e.workload === workload &&
        typeof e.detail?.generation === 'number' &&
        e.detail.generation >= generation,
      { timeoutMs: opts.timeoutMs, signal: this.signal(opts.signal), what: `rollout of ${workload}` },
    );
  }

  async waitForPodGone(pod: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<void> {
    const target = this.allPods.get(pod);
    if (!target) throw new Error(`pod ${pod} not found`);
    if (target.removed) return;
    await this.recorder.waitFor((e) => e.kind === 'pod-removed' && e.pod === pod, {
      timeoutMs: opts.timeoutMs,
      signal: this.signal(opts.signal),
      what: `pod ${pod} to be gone`,
    });
  }

  /** Where the read-only Kubernetes API of this run listens, once something was deployed. */
  apiAddress(): ServiceAddress | undefined {
    const env = this.api?.env();
    return env ? { host: env['KUBERNETES_SERVICE_HOST'] ?? '', port: Number(env['KUBERNETES_SERVICE_PORT']) } : undefined;
  }

  /** The EndpointSlice-style store of a Service: list() and watch() (served over HTTP by api-server.ts). */
  endpoints(service: string): EndpointStore {
    const state = this.services.get(service);
    if (!state) throw new Error(`unknown service ${service}`);
    return state.store;
  }

  /**
   * Kills everything now and resolves once every process is reaped. The synchronous part (signals,
   * closing listeners and sockets, clearing timers) runs before the first await, so that calling it
   * from a signal handler is enough even if the process exits right after.
   */
  teardown(): Promise<void> {
    this.teardownPromise ??= this.stopAll();
    return this.teardownPromise;
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.teardown();
  }

  private stopAll(): Promise<void> {
    this.stopping.abort(new Error('local provider torn down'));
    for (const controller of this.controllers.values()) controller.stop();
    const live = [...this.allPods.values()].filter((p) => !p.exited).length;
    if (live > 0) this.recorder.event('note', { message: `teardown: killing ${live} pod(s)` });
    const exits = [...this.allPods.values()].map((pod) => pod.kill());
    for (const { balancer, store } of this.services.values()) {
      balancer.close();
      store.close();
    }
    this.api?.close();
    this.addresses?.close();
    let timer: NodeJS.Timeout | undefined;
    const cap = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, TEARDOWN_WAIT_MS);
      timer.unref();
    });
    return Promise.race([Promise.all(exits).then(() => undefined), cap]).finally(async () => {
      clearTimeout(timer);
      // Asynchronously: a synchronous removal of a big pod tree blocked the event loop for 50-70 ms,
      // in the middle of the measurements of a scenario running next to this one (--workers).
      const root = this.podDirRoot;
      if (root !== undefined) {
        await rm(root, { recursive: true, force: true });
        this.tracker?.tempDirRemoved(root);
        if (this.podDirRoot === root) this.podDirRoot = undefined;
      }
      this.dropExitHook?.();
    });
  }

  private podDirEnv(pod: string): Record<string, string> {
    if (this.podDirRoot === undefined) {
      this.podDirRoot = mkdtempSync(join(tmpdir(), `zerodrop-${this.runId}-`));
      // Traversable by a system's unprivileged worker processes (nginx started as root runs its
      // workers as nobody), as a volume mounted into a container would be.
      chmodSync(this.podDirRoot, 0o755);
      this.tracker?.tempDirCreated(this.podDirRoot);
    }
    // POD_DIR too: the pod's hooks (a preStop touching a draining marker) see the directory its
    // system renders into, as an env var naming a volume's mount path would in a cluster.
    const dir = join(this.podDirRoot, pod);
    return { ZERODROP_POD_DIR: dir, POD_DIR: dir };
  }

  private removePodDirs(): void {
    if (this.podDirRoot === undefined) return;
    rmSync(this.podDirRoot, { recursive: true, force: true });
    this.tracker?.tempDirRemoved(this.podDirRoot);
    this.podDirRoot = undefined;
  }

  private createPod(workload: Workload, name: string, generation: number): LocalPod {
    if (!this.addresses) throw new Error('no address pool');
    const pod = new LocalPod({
      name,
      workload,
      ip: this.addresses.allocate(),
      generation,
      recorder: this.recorder,
      runId: this.runId,
      cwd: this.cwd,
      serviceEnv: {
        ...this.podDirEnv(name),
        ...this.api?.env(),
        ...serviceEnv(
          [...this.services.values()].map(({ service }) => {
            const { host } = this.serviceAddress(service.name);
            return { name: service.name, host, ports: service.ports.map((p) => ({ name: p.name, port: this.serviceAddress(service.name, p.name).port })) };
          }),
        ),
      },
      hooks: {
        endpoints: (p) => {
          for (const state of this.services.values()) if (state.service.selector === p.workload.name) state.store.sync(p);
        },
        ...(this.tracker
          ? { groupStarted: (pid: number) => this.tracker?.processGroupStarted(pid), groupEnded: (pid: number) => this.tracker?.processGroupEnded(pid) }
          : {}),
        controller: (p) => {
          // Runs from timers and child-process events: an error here must be recorded, not thrown
          // into the event loop (where it would take the harness down).
          try {
            this.controllers.get(p.workload.name)?.podChanged(p);
          } catch (err) {
            this.recorder.event('note', {
              workload: p.workload.name,
              message: `controller of ${p.workload.name}: ${err instanceof Error ? err.message : String(err)}`,
            });
          }
        },
      },
    });
    this.allPods.set(name, pod);
    pod.start();
    return pod;
  }

  private controller(workload: string): DeploymentController {
    const controller = this.controllers.get(workload);
    if (!controller) throw new Error(`unknown workload ${workload}`);
    return controller;
  }

  private assertRunning(): void {
    if (this.stopping.signal.aborted) throw new Error('local provider is torn down');
  }

  private signal(signal: AbortSignal | undefined): AbortSignal {
    return signal ? AbortSignal.any([signal, this.stopping.signal]) : this.stopping.signal;
  }

  /** Every workload has its replicas ready and every Service's balancer has them programmed. */
  private deployed(topology: Topology): boolean {
    for (const w of topology.workloads) {
      if (this.controller(w.name).readyCount() < w.replicas) return false;
    }
    for (const s of topology.services) {
      const state = this.services.get(s.name);
      const controller = this.controllers.get(s.selector);
      if (!state || !controller) return false;
      const ready = new Set(controller.active().filter((p) => p.ready).map((p) => p.name));
      const programmed = state.balancer.programmedPods().filter((p) => ready.has(p)).length;
      if (programmed < controller.replicas) return false;
    }
    return true;
  }

  private deployStatus(topology: Topology): string {
    const parts = topology.workloads.map((w) => {
      const controller = this.controller(w.name);
      let part = `${w.name} ${controller.readyCount()}/${w.replicas} ready`;
      if (controller.lastCrash) {
        const output = controller.lastCrash.output.slice(-5).join(' | ');
        part += ` (last crash ${controller.lastCrash.pod}${output ? `: ${output}` : ''})`;
      }
      return part;
    });
    for (const s of topology.services) {
      parts.push(`${s.name} programmed [${this.services.get(s.name)?.balancer.programmedPods().join(', ') ?? ''}]`);
    }
    return `deployment (${parts.join('; ')})`;
  }

  /** Resolves when `done()` holds, checked after every recorded event. */
  private waitUntil(
    done: () => boolean,
    opts: { timeoutMs: number; signal?: AbortSignal; what: () => string },
  ): Promise<void> {
    if (done()) return Promise.resolve();
    const signal = this.signal(opts.signal);
    return new Promise((resolve, reject) => {
      let scheduled = false;
      let settled = false;
      const check = () => {
        scheduled = false;
        if (!settled && done()) finish();
      };
      // Check once the event's synchronous consequences (endpoint sync, reprogramming) have run.
      const poke = () => {
        if (scheduled) return;
        scheduled = true;
        queueMicrotask(check);
      };
      const unsubscribeEvents = this.recorder.onEvent(poke);
      // A balancer's node catching up on a change records no event of its own.
      this.applied.add(poke);
      const unsubscribe = () => {
        unsubscribeEvents();
        this.applied.delete(poke);
      };
      const onAbort = () => finish(signal.reason instanceof Error ? signal.reason : new Error(`aborted waiting for ${opts.what()}`));
      const timer = setTimeout(
        () => finish(new Error(`timed out after ${opts.timeoutMs} ms waiting for ${opts.what()}`)),
        opts.timeoutMs,
      );
      const finish = (err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unsubscribe();
        signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }
}
