// Processes as containers: how a container's argv and environment map onto a local process, and
// the signals the kubelet (through the container runtime) sends to it.
//
// Each container is a process group of its own (spawn with `detached: true`): the stop signal goes
// to the main process only, as the runtime signals PID 1 of the container, while SIGKILL at the end
// of the grace period goes to the whole group, as killing a container kills every process in it.

import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';

import type { Workload } from '../../model/workload.ts';
import { timedBlockingCall } from '../../state/blocking-calls.ts';
import { onExit } from '../../state/exit-hooks.ts';
import { runningProcesses } from '../../state/proc-stat.ts';

/**
 * Resolves a container argv for this machine: `node` is the Node.js running the harness (so that
 * pods run the same version), and a relative program path resolves against the run's cwd. Relative
 * arguments resolve against it too, since the process starts with `cwd` as working directory.
 */
export function resolveArgv(command: readonly string[], cwd: string): { file: string; args: string[] } {
  const [first, ...args] = command;
  if (first === undefined) throw new Error('empty command');
  let file = first;
  if (first === 'node') file = process.execPath;
  else if (first.startsWith('./') || first.startsWith('../')) file = path.resolve(cwd, first);
  return { file, args };
}

/** `PORT_HTTP` for a port named `http`, `PORT_METRICS_2` for `metrics-2`. */
export function portEnvName(portName: string): string {
  return `PORT_${portName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/**
 * The container's environment: the harness's own environment (the container image's), the
 * workload's `env`, and what the downward API would give a pod (POD_NAME, POD_IP, POD_NAMESPACE,
 * https://kubernetes.io/docs/concepts/workloads/pods/downward-api/), plus its ports by name.
 */
/**
 * The variables the kubelet gives every container for each Service that exists when the pod starts
 * (https://kubernetes.io/docs/concepts/services-networking/service/#environment-variables):
 * `<NAME>_SERVICE_HOST`, `<NAME>_SERVICE_PORT` and `<NAME>_SERVICE_PORT_<PORT NAME>`. Gateways
 * find their backend Service this way, locally and in a cluster alike.
 */
export function serviceEnv(services: readonly { name: string; host: string; ports: { name: string; port: number }[] }[]): Record<string, string> {
  const env: Record<string, string> = {};
  for (const service of services) {
    const prefix = service.name.toUpperCase().replace(/-/g, '_');
    env[`${prefix}_SERVICE_HOST`] = service.host;
    const [first] = service.ports;
    if (first) env[`${prefix}_SERVICE_PORT`] = String(first.port);
    for (const port of service.ports) env[`${prefix}_SERVICE_PORT_${port.name.toUpperCase().replace(/-/g, '_')}`] = String(port.port);
  }
  return env;
}

export function containerEnv(
  workload: Workload,
  pod: { name: string; ip: string },
  runId: string,
  serviceEnv: Record<string, string> = {},
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...serviceEnv,
    ...workload.env,
    POD_NAME: pod.name,
    POD_IP: pod.ip,
    POD_NAMESPACE: 'zerodrop',
    ZERODROP_RUN_ID: runId,
  };
  for (const port of workload.ports) env[portEnvName(port.name)] = String(port.containerPort);
  const first = workload.ports[0];
  if (first) env.PORT = String(first.containerPort);
  return env;
}

/**
 * Starts `argv` as the leader of a new process group. stdin is closed, as for a container without
 * `stdin: true`; stdout and stderr are piped so that the harness captures them.
 */
export function spawnGroup(argv: readonly string[], opts: { cwd: string; env: NodeJS.ProcessEnv }): ChildProcess {
  const { file, args } = resolveArgv(argv, opts.cwd);
  return timedBlockingCall(`starting ${path.basename(file)} (spawn returns once the new process has exec'd, and it waits for a core like any other)`, () =>
    spawn(file, args, {
      cwd: opts.cwd,
      env: opts.env,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    }),
  );
}

/** Sends `signal` to the process `pid` only. False when it no longer exists. */
export function signalProcess(pid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` to every process of the group led by `pid`. False when the group is empty. */
export function signalGroup(pid: number, signal: NodeJS.Signals | 0 = 'SIGKILL'): boolean {
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Groups to SIGKILL (and directories to remove) should this process exit while they still run. */
const killOnExit = new Map<number, string | undefined>();
/** Takes the exit hook off while no group is listed: registered anew after the run's record, it runs before the record's (exit-hooks.ts). */
let dropExitHook: (() => void) | undefined;
function killGroupsLeftRunning(): void {
  dropExitHook = undefined;
  for (const pid of killOnExit.keys()) signalGroup(pid, 'SIGKILL');
  // SIGKILL lands asynchronously: a process of the group still running for a moment (nginx writing
  // its logs) could put a file back into its directory while it is being removed, and the removal
  // then fails with ENOTEMPTY. The directories go once their groups are gone (or after a bound).
  waitForGroupsGoneSync([...killOnExit.keys()], EXIT_REAP_WAIT_MS);
  for (const dir of killOnExit.values()) {
    if (dir === undefined) continue;
    try {
      rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 20 });
    } catch {
      // An exit hook must not throw: the other groups' directories still go.
    }
  }
}

/** How long an exit hook waits for the groups it killed to be gone before removing their directories. */
export const EXIT_REAP_WAIT_MS = 1_000;

/**
 * SIGKILLs the group led by `pid` (and removes `dir`) if the harness exits while the group is still
 * listed: a harness that exits without its teardown (a second Ctrl-C, a crash) leaves nothing
 * running. forgetGroup() takes it off once its owner has ended it.
 */
export function killGroupOnExit(pid: number, dir?: string): void {
  killOnExit.set(pid, dir);
  dropExitHook ??= onExit(killGroupsLeftRunning);
}

export function forgetGroup(pid: number): void {
  killOnExit.delete(pid);
  if (killOnExit.size > 0) return;
  dropExitHook?.();
  dropExitHook = undefined;
}

/**
 * True while a process of the group led by `pid` still runs. A killed process stays a zombie until
 * its parent reaps it, and an orphan's parent is init, which may take its time (a second or more):
 * on Linux, where /proc tells, a group of zombies counts as gone since nothing in it can run.
 */
export function groupAlive(pid: number): boolean {
  if (!signalGroup(pid, 0)) return false;
  if (process.platform !== 'linux') return true;
  const running = runningProcesses();
  return running === undefined || running.some((stat) => stat.pgrp === pid);
}

/** Feeds each line the child writes on stdout/stderr to `onLine`, including a last unterminated one. */
export function captureLines(child: ChildProcess, onLine: (stream: 'stdout' | 'stderr', line: string) => void): void {
  for (const stream of ['stdout', 'stderr'] as const) {
    const readable = child[stream];
    if (!readable) continue;
    readable.setEncoding('utf8');
    const lines = createInterface({ input: readable, crlfDelay: Infinity });
    lines.on('line', (line) => onLine(stream, line));
    // A read error on a pipe (EIO when a group is killed) is not the harness's failure.
    readable.on('error', () => undefined);
  }
}

/** waitForGroupsGone for an exit hook, which cannot wait for the event loop: it blocks. */
export function waitForGroupsGoneSync(pids: readonly number[], timeoutMs: number): void {
  const deadline = performance.now() + timeoutMs;
  const pause = new Int32Array(new SharedArrayBuffer(4));
  while (pids.some(groupAlive) && performance.now() < deadline) Atomics.wait(pause, 0, 0, 10);
}

/**
 * Resolves once every process of these groups is gone (reaped), checking every few ms, or after
 * `timeoutMs`: processes killed with SIGKILL take a moment to die.
 */
export async function waitForGroupsGone(pids: readonly number[], timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (pids.some(groupAlive) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
