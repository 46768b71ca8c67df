// Test support for the local provider's own tests: tiny inline pod programs (so that these tests do
// not depend on the reference apps in fixtures/), workload/service builders and a raw TCP client.

import net from 'node:net';

import { defaultProbe, type Service, type Workload } from '../src/model/workload.ts';
import { Recorder } from '../src/observe/recorder.ts';
import { readProcStat, runs } from '../src/state/proc-stat.ts';
import type { ServiceAddress } from '../src/providers/provider.ts';
import type { BalancerFault } from '../src/providers/local/balancer.ts';
import type { EndpointSource } from '../src/providers/local/endpoints.ts';
import { LocalProvider } from '../src/providers/local/local-provider.ts';

/**
 * A TCP pod: greets each connection with its pod name and a newline, then echoes. Knobs (env):
 * LISTEN_DELAY_MS starts listening late; ON_SIGTERM=ignore ignores the stop signal, otherwise it
 * exits EXIT_DELAY_MS after it; GRANDCHILD=1 starts a second process in its group and prints its pid.
 */
export const TCP_POD = `
const net = require('node:net');
const env = process.env;
const server = net.createServer((c) => {
  c.on('error', () => {});
  c.write(env.POD_NAME + '\\n');
  c.on('data', (d) => c.write(d));
});
setTimeout(() => server.listen(Number(env.PORT), env.POD_IP, () => console.log('listening')), Number(env.LISTEN_DELAY_MS || 0));
process.on('SIGTERM', () => {
  console.log('sigterm');
  if (env.ON_SIGTERM === 'ignore') return;
  setTimeout(() => process.exit(0), Number(env.EXIT_DELAY_MS || 0));
});
if (env.GRANDCHILD === '1') {
  const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
  console.log('grandchild ' + c.pid);
}
`;

/**
 * An HTTP pod whose /ready answers 503 until READY_AFTER_MS, 503 after SIGTERM when
 * FAIL_READY_ON_SIGTERM=1, and 503 from UNREADY_AFTER_MS on when its name is UNREADY_POD.
 * On SIGTERM it exits after EXIT_DELAY_MS unless ON_SIGTERM=stay.
 */
export const HTTP_POD = `
const http = require('node:http');
const env = process.env;
const start = Date.now();
let terminating = false;
http.createServer((req, res) => {
  const age = Date.now() - start;
  const ready = age >= Number(env.READY_AFTER_MS || 0) &&
    !(terminating && env.FAIL_READY_ON_SIGTERM === '1') &&
    !(env.UNREADY_POD === env.POD_NAME && age >= Number(env.UNREADY_AFTER_MS || 0));
  res.statusCode = req.url === '/ready' && !ready ? 503 : 200;
  res.end(env.POD_NAME + '\\n');
}).listen(Number(env.PORT), env.POD_IP);
process.on('SIGTERM', () => {
  console.log('sigterm');
  terminating = true;
  if (env.ON_SIGTERM === 'stay') return;
  setTimeout(() => process.exit(0), Number(env.EXIT_DELAY_MS || 0));
});
`;

export const POD_PORT = 9000;

export function tcpWorkload(name: string, overrides: Partial<Workload> = {}): Workload {
  return {
    name,
    replicas: 1,
    command: ['node', '-e', TCP_POD],
    env: {},
    ports: [{ name: 'tcp', containerPort: POD_PORT, protocol: 'TCP' }],
    readinessProbe: defaultProbe({ tcpSocket: { port: POD_PORT } }, { periodSeconds: 0.05, timeoutSeconds: 0.5 }),
    terminationGracePeriodSeconds: 2,
    strategy: { maxSurge: 1, maxUnavailable: 0 },
    ...overrides,
  };
}

export function httpWorkload(name: string, overrides: Partial<Workload> = {}): Workload {
  return tcpWorkload(name, {
    command: ['node', '-e', HTTP_POD],
    readinessProbe: defaultProbe(
      { httpGet: { port: POD_PORT, path: '/ready' } },
      { periodSeconds: 0.05, timeoutSeconds: 0.5 },
    ),
    ...overrides,
  });
}

export function tcpService(name: string, selector: string, programmingDelayMs = 0, targetPort = POD_PORT): Service {
  return { name, selector, ports: [{ name: 'tcp', port: 8080, targetPort, protocol: 'TCP' }], programmingDelayMs };
}

/** What the endpoint store knows of one pod: started and ready, not terminating, changed by `overrides`. */
export function endpointSource(name: string, workload: string, ip: string, overrides: Partial<EndpointSource> = {}): EndpointSource {
  return { name, workload: { name: workload }, ip, started: true, ready: true, terminating: false, forceDeleted: false, exited: false, removed: false, ...overrides };
}

export function newProvider(balancerFault?: BalancerFault, seed?: number): { provider: LocalProvider; recorder: Recorder } {
  const recorder = new Recorder();
  const provider = new LocalProvider({ recorder, runId: 'test', cwd: process.cwd(), ...(balancerFault ? { balancerFault } : {}), ...(seed !== undefined ? { seed } : {}) });
  return { provider, recorder };
}

/**
 * Waits until `pod` has printed a line that `matches` (its output is captured as it comes), and
 * returns it. A pod started without a readiness probe counts as ready the moment it is spawned,
 * before its program has run a line (installed its SIGTERM handler, printed a pid).
 */
export async function podLine(recorder: Recorder, pod: string, matches: (line: string) => boolean, timeoutMs = 5_000): Promise<string> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const found = recorder.timeline.podOutput[pod]?.find((l) => matches(l.line));
    if (found) return found.line;
    if (performance.now() > deadline) throw new Error(`pod ${pod} printed no matching line in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export type Dialed = { pod: string; socket: net.Socket } | { error: string };

/** Connects and reads the greeting line (the pod's name); or the error code the client saw. */
export function dial(address: ServiceAddress, timeoutMs = 2_000): Promise<Dialed> {
  return new Promise((resolve) => {
    const socket = net.connect(address);
    let buffer = '';
    let done = false;
    const finish = (result: Dialed) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.off('data', onData);
      if ('error' in result) socket.destroy();
      resolve(result);
    };
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      const newline = buffer.indexOf('\n');
      if (newline >= 0) finish({ pod: buffer.slice(0, newline), socket });
    };
    const timer = setTimeout(() => finish({ error: 'timeout' }), timeoutMs);
    socket.on('data', onData);
    socket.on('error', (err: NodeJS.ErrnoException) => finish({ error: err.code ?? err.message }));
    socket.on('close', () => finish({ error: 'eof' }));
  });
}

/** Dials, then closes the connection cleanly; returns the pod name or the error code. */
export async function whoServes(address: ServiceAddress): Promise<string> {
  const result = await dial(address);
  if ('error' in result) return `error:${result.error}`;
  result.socket.end();
  return result.pod;
}

/** Sends `text` on an established connection and resolves with what comes back. */
export function roundTrip(socket: net.Socket, text: string, timeoutMs = 2_000): Promise<string> {
  return new Promise((resolve, reject) => {
    let buffer = '';
    const onData = (chunk: Buffer) => {
      buffer += chunk.toString('utf8');
      if (buffer.length >= text.length) {
        cleanup();
        resolve(buffer);
      }
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    const timer = setTimeout(() => onError(new Error('round trip timed out')), timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('error', onError);
    };
    socket.on('data', onData);
    socket.on('error', onError);
    socket.write(text);
  });
}

/** True when nothing accepts TCP connections on host:port. */
export function refuses(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNREFUSED'));
  });
}

/** True while a process with this pid exists and is not a zombie waiting for init to reap it. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  // Without /proc (not Linux, or it ended meanwhile) trust kill.
  const stat = readProcStat(pid);
  return stat === undefined || runs(stat);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
