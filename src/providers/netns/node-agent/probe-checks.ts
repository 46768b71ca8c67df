// One probe attempt, as the kubelet's prober runs it (pkg/kubelet/prober/prober.go,
// https://kubernetes.io/docs/concepts/workloads/pods/pod-lifecycle/#probe-outcome):
//  - tcpSocket: success when a TCP connection to podIP:port opens;
//  - httpGet: success on a status in 200..399 (redirects are not followed: a 3xx counts as success);
//    `User-Agent: kube-probe/<major.minor>`, headers from httpHeaders;
//  - exec: the command runs inside the container (its network, mounts, root and working directory,
//    with the container's environment) and succeeds on exit 0; past timeoutSeconds it fails and is
//    killed (ExecProbeTimeout);
//  - grpc: not modelled; such a probe fails with a message saying so.
// A probe goes from the node straight to the pod's address, never through a Service.

import { spawn } from 'node:child_process';
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

import type { ProbeHandler } from './pod-types.ts';

export interface ProbeResult {
  ok: boolean;
  /** Why it failed, for the Unhealthy event. */
  message?: string;
}

export interface ProbeTarget {
  podIP: string;
  /** The container's main process, whose namespaces an exec runs in. */
  pid: number;
  env: ReadonlyMap<string, string>;
  ports: readonly { name?: string; containerPort: number }[];
  userAgent: string;
}

function resolvePort(port: number | string, target: ProbeTarget): number | undefined {
  if (typeof port === 'number') return port;
  if (/^\d+$/.test(port)) return Number(port);
  return target.ports.find((p) => p.name === port)?.containerPort;
}

function tcp(host: string, port: number, timeoutMs: number): Promise<ProbeResult> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    const done = (result: ProbeResult) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done({ ok: false, message: `dial tcp ${host}:${port}: i/o timeout` }), timeoutMs);
    socket.once('connect', () => done({ ok: true }));
    socket.once('error', (err) => done({ ok: false, message: `dial tcp ${host}:${port}: ${err.message}` }));
  });
}

function httpGet(h: NonNullable<ProbeHandler['httpGet']>, host: string, port: number, timeoutMs: number, userAgent: string): Promise<ProbeResult> {
  const secure = h.scheme?.toUpperCase() === 'HTTPS';
  const pathPart = h.path ?? '/';
  const url = `${secure ? 'https' : 'http'}://${host}:${port}${pathPart.startsWith('/') ? '' : '/'}${pathPart}`;
  const headers: Record<string, string> = { 'user-agent': userAgent, accept: '*/*', connection: 'close' };
  for (const header of h.httpHeaders ?? []) headers[header.name.toLowerCase()] = header.value;
  return new Promise((resolve) => {
    let settled = false;
    const done = (result: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    // The kubelet does not verify an HTTPS probe's certificate.
    const req = (secure ? https : http).request(url, { method: 'GET', agent: false, headers, ...(secure ? { rejectUnauthorized: false } : {}) });
    const timer = setTimeout(() => done({ ok: false, message: `Get "${url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)` }), timeoutMs);
    req.once('error', (err) => done({ ok: false, message: `Get "${url}": ${err.message}` }));
    req.once('response', (res) => {
      const status = res.statusCode ?? 0;
      res.resume();
      res.once('error', () => undefined);
      done(status >= 200 && status < 400 ? { ok: true } : { ok: false, message: `HTTP probe failed with statuscode: ${status}` });
    });
    req.end();
  });
}

/** argv that runs `command` inside the container of `pid`, with its environment only. */
export function execInContainerArgv(pid: number, env: ReadonlyMap<string, string>, command: readonly string[]): string[] {
  return ['nsenter', `--target=${pid}`, '--net', '--mount', '--uts', '--root', '--wd', '--', '/usr/bin/env', '-i', ...[...env].map(([k, v]) => `${k}=${v}`), ...command];
}

/** Runs a command in the container; resolves with its exit code (or an error) within timeoutMs. */
export function execInContainer(pid: number, env: ReadonlyMap<string, string>, command: readonly string[], timeoutMs: number): { pid: number | undefined; result: Promise<ProbeResult & { output: string }> } {
  const [file, ...args] = execInContainerArgv(pid, env, command);
  const child = spawn(file!, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => {
    if (output.length < 4096) output += chunk.toString('utf8');
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const result = new Promise<ProbeResult & { output: string }>((resolve) => {
    let settled = false;
    const done = (r: ProbeResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...r, output: output.trim() });
    };
    const timer =
      timeoutMs === Infinity
        ? undefined
        : setTimeout(() => {
            try {
              if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
            } catch {
              // already gone
            }
            done({ ok: false, message: `command timed out after ${timeoutMs / 1000}s` });
          }, timeoutMs);
    child.once('error', (err) => done({ ok: false, message: err.message }));
    child.once('close', (code, signal) => done(code === 0 ? { ok: true } : { ok: false, message: `command ${JSON.stringify(command)} exited with ${code ?? signal}` }));
  });
  return { pid: child.pid, result };
}

/** Runs one probe attempt against the container. */
export async function runProbe(handler: ProbeHandler, target: ProbeTarget, timeoutMs: number): Promise<ProbeResult> {
  if (handler.exec) {
    const r = await execInContainer(target.pid, target.env, handler.exec.command ?? [], timeoutMs).result;
    return r.ok ? { ok: true } : { ok: false, message: r.output ? `${r.message ?? ''}: ${r.output}` : r.message };
  }
  if (handler.httpGet) {
    const port = resolvePort(handler.httpGet.port, target);
    if (port === undefined) return { ok: false, message: `unknown port ${handler.httpGet.port}` };
    return httpGet(handler.httpGet, handler.httpGet.host ?? target.podIP, port, timeoutMs, target.userAgent);
  }
  if (handler.tcpSocket) {
    const port = resolvePort(handler.tcpSocket.port, target);
    if (port === undefined) return { ok: false, message: `unknown port ${handler.tcpSocket.port}` };
    return tcp(handler.tcpSocket.host ?? target.podIP, port, timeoutMs);
  }
  if (handler.grpc) return { ok: false, message: 'grpc probes are not supported by the zerodrop node agent' };
  return { ok: false, message: 'probe has no handler' };
}
