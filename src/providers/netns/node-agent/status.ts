// The pod status the agent reports (PATCH .../pods/NAME/status), computed as the kubelet's
// generateAPIPodStatus / getPhase (pkg/kubelet/kubelet_pods.go) and status manager compute it:
// https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-phase and
// https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#pod-conditions.
// Pure: the runtime hands in what it knows, this says what the API should show.

import type { Pod, PodCondition } from './pod-types.ts';

export interface TerminatedState {
  exitCode: number;
  signal?: number;
  reason: string;
  message?: string;
  startedAt: string;
  finishedAt: string;
  containerID?: string;
}

export type ContainerState =
  | { waiting: { reason: string; message?: string } }
  | { running: { startedAt: string } }
  | { terminated: TerminatedState };

export interface ContainerRecord {
  name: string;
  image: string;
  imageID: string;
  containerID?: string;
  state: ContainerState;
  lastState?: { terminated: TerminatedState };
  ready: boolean;
  /** The startup probe passed (or there is none) while it runs; undefined before it ever ran. */
  started?: boolean;
  restartCount: number;
}

export interface PodStatusInput {
  pod: Pod;
  podIP?: string;
  hostIP: string;
  startTime: string;
  sandboxReady: boolean;
  init: readonly ContainerRecord[];
  containers: readonly ContainerRecord[];
  /** The pod is done on this node (deleted and every container exited): its phase is terminal. */
  terminal: boolean;
  now: string;
}

/** Reason and exit code of a process end, as the container runtime reports it (128+n for signal n). */
export function terminatedReason(exitCode: number): string {
  return exitCode === 0 ? 'Completed' : 'Error';
}

/** The pod phase, as getPhase computes it (restartable init containers are not modelled). */
export function podPhase(input: Pick<PodStatusInput, 'pod' | 'init' | 'containers' | 'terminal'>): string {
  const restartPolicy = input.pod.spec?.restartPolicy ?? 'Always';
  const initialized = initDone(input.init);
  const initFailed = input.init.some((c) => 'terminated' in c.state && c.state.terminated.exitCode !== 0);
  if (!initialized) {
    if (initFailed && restartPolicy === 'Never') return 'Failed';
    if (input.terminal) return 'Failed';
    return 'Pending';
  }
  let waiting = 0;
  let running = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const c of input.containers) {
    if ('running' in c.state) running++;
    else if ('terminated' in c.state) {
      stopped++;
      if (c.state.terminated.exitCode === 0) succeeded++;
    } else if (c.lastState) stopped++;
    else waiting++;
  }
  if (input.terminal) return stopped === succeeded && waiting === 0 && running === 0 && stopped > 0 ? 'Succeeded' : 'Failed';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (restartPolicy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (restartPolicy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

function initDone(init: readonly ContainerRecord[]): boolean {
  return init.every((c) => 'terminated' in c.state && c.state.terminated.exitCode === 0);
}

function condition(type: string, ok: boolean, previous: readonly PodCondition[], now: string, reason?: string, message?: string): PodCondition {
  const status = ok ? 'True' : 'False';
  const before = previous.find((c) => c.type === type);
  const transition = before && before.status === status && before.lastTransitionTime ? before.lastTransitionTime : now;
  return { type, status, lastProbeTime: null, lastTransitionTime: transition, ...(!ok && reason ? { reason } : {}), ...(!ok && message ? { message } : {}) };
}

function apiContainerStatus(c: ContainerRecord): Record<string, unknown> {
  return {
    name: c.name,
    image: c.image,
    imageID: c.imageID,
    ...(c.containerID ? { containerID: c.containerID } : {}),
    ready: c.ready,
    started: c.started ?? false,
    restartCount: c.restartCount,
    state: c.state,
    lastState: c.lastState ?? {},
  };
}

/** The `status` to PATCH: a full replacement of what the kubelet owns; conditions of others are kept. */
export function podStatus(input: PodStatusInput): Record<string, unknown> {
  const previous = input.pod.status?.conditions ?? [];
  const phase = podPhase(input);
  const done = phase === 'Succeeded' || phase === 'Failed';
  const notInit = input.init.filter((c) => !('terminated' in c.state && c.state.terminated.exitCode === 0)).map((c) => c.name);
  const unready = input.containers.filter((c) => !c.ready).map((c) => c.name);
  const initialized = notInit.length === 0;
  const containersReady = initialized && unready.length === 0;
  const readyReason = done ? 'PodCompleted' : 'ContainersNotReady';
  const readyMessage = done ? undefined : `containers with unready status: [${unready.join(' ')}]`;
  const ours = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady'];
  const conditions: PodCondition[] = [
    condition('PodReadyToStartContainers', input.sandboxReady && !done, previous, input.now),
    condition('Initialized', initialized, previous, input.now, done ? 'PodCompleted' : 'ContainersNotInitialized', done ? undefined : `containers with incomplete status: [${notInit.join(' ')}]`),
    condition('Ready', containersReady && !done, previous, input.now, readyReason, readyMessage),
    condition('ContainersReady', containersReady && !done, previous, input.now, readyReason, readyMessage),
    // PodScheduled (the scheduler's), DisruptionTarget and readiness gates belong to others: kept.
    ...previous.filter((c) => !ours.includes(c.type)),
  ];
  return {
    phase,
    conditions,
    hostIP: input.hostIP,
    hostIPs: [{ ip: input.hostIP }],
    ...(input.podIP ? { podIP: input.podIP, podIPs: [{ ip: input.podIP }] } : {}),
    startTime: input.startTime,
    ...(input.init.length > 0 ? { initContainerStatuses: input.init.map(apiContainerStatus) } : {}),
    containerStatuses: input.containers.map(apiContainerStatus),
  };
}
