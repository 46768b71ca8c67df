// Readiness probes, as the kubelet runs them
// (https://kubernetes.io/docs/concepts/configuration/liveness-readiness-startup-probes/ and
// https://kubernetes.io/docs/tasks/configure-pod-container/configure-liveness-readiness-startup-probes/#configure-probes).
//
// - A container starts not ready. The first probe runs after initialDelaySeconds, then one every
//   periodSeconds (measured start to start; a probe that takes longer delays the next one).
// - successThreshold consecutive successes make it ready; failureThreshold consecutive failures
//   make a ready container unready. A probe that does not answer within timeoutSeconds fails.
// - tcpSocket passes when a TCP connection opens; httpGet passes on a status in 200..399
//   (https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#probe-outcome).
// - Readiness probes keep running while the pod terminates, so an endpoint's `serving` condition
//   follows readiness during termination (https://kubernetes.io/docs/concepts/services-networking/endpoint-slices/#serving);
//   the kubelet stops only liveness and startup probes once the pod has a deletion timestamp
//   (pkg/kubelet/prober/worker.go, "Graceful shutdown of the pod"). A server that waits for "no
//   open connection" before exiting must therefore not count probe connections (they carry
//   `User-Agent: kube-probe/...`).
//
// An exec probe runs its command in the pod's directory and environment, as the kubelet runs it in
// the container, and fails once it outlasts timeoutSeconds.
//
// Probes go straight to the pod's address, like the kubelet's, never through a Service, so they are
// never counted as load.

import http from 'node:http';
import net from 'node:net';

import type { ChildProcess } from 'node:child_process';
import type { Probe } from '../../model/workload.ts';
import { signalGroup, spawnGroup } from './processes.ts';

/** The User-Agent the kubelet sends (it ends in the kubelet's minor version). */
const PROBE_USER_AGENT = 'kube-probe/1.33';

export type ProbeCheck = (signal: AbortSignal) => Promise<boolean>;

function tcpCheck(host: string, port: number, timeoutMs: number): ProbeCheck {
  return (signal) =>
    new Promise((resolve) => {
      const socket = net.connect({ host, port });
      const done = (ok: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        socket.destroy();
        resolve(ok);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
    });
}

function httpCheck(host: string, port: number, path: string, timeoutMs: number): ProbeCheck {
  return (signal) =>
    new Promise((resolve) => {
      let settled = false;
      const done = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        resolve(ok);
      };
      const req = http.request({
        host,
        port,
        path,
        method: 'GET',
        agent: false,
        headers: { 'user-agent': PROBE_USER_AGENT, accept: '*/*', connection: 'close' },
      });
      const onAbort = () => {
        req.destroy();
        done(false);
      };
      const timer = setTimeout(onAbort, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      req.once('error', () => done(false));
      req.once('response', (res) => {
        const status = res.statusCode ?? 0;
        // The kubelet reads (a bounded part of) the body; reading it lets the server finish cleanly.
        res.resume();
        res.once('end', () => req.destroy());
        res.once('error', () => undefined);
        done(status >= 200 && status < 400);
      });
      req.end();
    });
}

/**
 * An exec probe: the command runs in the container's directory and environment and succeeds when it
 * exits 0 within the timeout; one that overruns is killed with its process group, as the kubelet's
 * exec probe timeout ends it (ExecProbeTimeout, on by default since 1.20).
 */
function execCheck(command: readonly string[], container: ProbeContainer, timeoutMs: number): ProbeCheck {
  return (signal) =>
    new Promise((resolve) => {
      let child: ChildProcess;
      try {
        child = spawnGroup(command, container);
      } catch {
        resolve(false);
        return;
      }
      child.stdout?.resume();
      child.stderr?.resume();
      const done = (ok: boolean) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        if (child.pid !== undefined && child.exitCode === null && child.signalCode === null) signalGroup(child.pid, 'SIGKILL');
        resolve(ok);
      };
      const onAbort = () => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      child.once('error', () => done(false));
      child.once('exit', (code) => done(code === 0));
    });
}

/** Where an exec probe runs: the container's working directory and environment. */
export interface ProbeContainer {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export function probeCheck(probe: Probe, host: string, container?: ProbeContainer): ProbeCheck {
  const timeoutMs = probe.timeoutSeconds * 1000;
  const h = probe.handler;
  if ('exec' in h) {
    if (!container) throw new Error('an exec probe needs the container it runs in');
    return execCheck(h.exec.command, container, timeoutMs);
  }
  return 'httpGet' in h ? httpCheck(host, h.httpGet.port, h.httpGet.path, timeoutMs) : tcpCheck(host, h.tcpSocket.port, timeoutMs);
}

/** Runs one container's readiness probe; reports each readiness transition to `onChange`. */
export class ReadinessProber {
  private readonly probe: Probe;
  private readonly check: ProbeCheck;
  private readonly onChange: (ready: boolean) => void;
  private ready = false;
  private successes = 0;
  private failures = 0;
  private timer?: NodeJS.Timeout;
  private inflight?: AbortController;
  private stopped = false;

  constructor(probe: Probe, host: string, onChange: (ready: boolean) => void, container?: ProbeContainer) {
    this.probe = probe;
    this.check = probeCheck(probe, host, container);
    this.onChange = onChange;
  }

  start(): void {
    this.schedule(this.probe.initialDelaySeconds * 1000);
  }

  /** Stops probing at once; an in-flight probe is aborted and reports nothing. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.inflight?.abort();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.tick(), delayMs);
  }

  private async tick(): Promise<void> {
    const started = performance.now();
    const controller = new AbortController();
    this.inflight = controller;
    const ok = await this.check(controller.signal);
    this.inflight = undefined;
    if (this.stopped) return;
    this.record(ok);
    const periodMs = this.probe.periodSeconds * 1000;
    this.schedule(Math.max(0, periodMs - (performance.now() - started)));
  }

  private record(ok: boolean): void {
    if (ok) {
      this.failures = 0;
      this.successes++;
      if (!this.ready && this.successes >= Math.max(1, this.probe.successThreshold)) {
        this.ready = true;
        this.onChange(true);
      }
    } else {
      this.successes = 0;
      this.failures++;
      if (this.ready && this.failures >= Math.max(1, this.probe.failureThreshold)) {
        this.ready = false;
        this.onChange(false);
      }
    }
  }
}
