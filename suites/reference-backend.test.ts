// The reference backend as a real process: each DRAIN_MODE behaves observably differently at
// SIGTERM, which is what lets every drain assertion be shown to fail against a mutant.

import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { killChildren } from './helpers/children.ts';

const SCRIPT = fileURLToPath(new URL('../fixtures/reference-backend.mjs', import.meta.url));

interface Line {
  t: number;
  ev: string;
  [key: string]: unknown;
}

interface Backend {
  child: ChildProcess;
  port: number;
  lines: Line[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; t: number }>;
  waitLine(ev: string, timeoutMs?: number): Promise<Line>;
  alive(): boolean;
}

const children: ChildProcess[] = [];
const sockets: net.Socket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await killChildren(children);
});

async function startBackend(mode: string, env: Record<string, string> = {}): Promise<Backend> {
  const child = spawn(process.execPath, [SCRIPT], {
    env: { ...process.env, POD_IP: '127.0.0.1', PORT: '0', POD_NAME: `ref-${mode}`, DRAIN_MODE: mode, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  const lines: Line[] = [];
  const listeners = new Set<() => void>();
  createInterface({ input: child.stdout! }).on('line', (text) => {
    lines.push({ ...(JSON.parse(text) as { ev: string }), t: performance.now() });
    for (const l of listeners) l();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; t: number }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal, t: performance.now() })),
  );
  const waitLine = (ev: string, timeoutMs = 5000) =>
    new Promise<Line>((resolve, reject) => {
      const check = () => {
        const line = lines.find((l) => l.ev === ev);
        if (!line) return;
        cleanup();
        resolve(line);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`no "${ev}" line within ${timeoutMs} ms; got ${JSON.stringify(lines)}`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        listeners.delete(check);
      };
      listeners.add(check);
      check();
    });
  const listening = await waitLine('listening');
  return {
    child,
    port: listening.port as number,
    lines,
    exited,
    waitLine,
    alive: () => child.exitCode === null && child.signalCode === null,
  };
}

interface Response {
  status: number;
  headers: Record<string, string>;
  body: string;
}

interface ClientSocket {
  socket: net.Socket;
  /** performance.now() when the socket closed (either side). */
  closed: Promise<number>;
}

function connect(port: number): Promise<ClientSocket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    sockets.push(socket);
    const closed = new Promise<number>((r) => socket.once('close', () => r(performance.now())));
    socket.once('error', reject);
    socket.once('connect', () => {
      socket.off('error', reject);
      socket.on('error', () => undefined);
      resolve({ socket, closed });
    });
  });
}

/** One HTTP/1.1 request on an open socket; resolves with the complete response. */
function exchange(client: ClientSocket, path: string): Promise<Response> {
  const { socket } = client;
  return new Promise((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const headerEnd = buffer.indexOf('\r\n\r\n');
      if (headerEnd < 0) return;
      const [statusLine = '', ...headerLines] = buffer.subarray(0, headerEnd).toString('latin1').split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of headerLines) {
        const colon = line.indexOf(':');
        headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
      }
      const length = Number(headers['content-length'] ?? 0);
      if (buffer.length < headerEnd + 4 + length) return;
      cleanup();
      resolve({
        status: Number(statusLine.split(' ')[1]),
        headers,
        body: buffer.subarray(headerEnd + 4, headerEnd + 4 + length).toString(),
      });
    };
    const onClose = () => {
      cleanup();
      reject(new Error(`socket closed before a complete response to ${path}`));
    };
    const cleanup = () => {
      socket.off('data', onData);
      socket.off('close', onClose);
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.write(`GET ${path} HTTP/1.1\r\nHost: backend\r\n\r\n`);
  });
}

async function get(port: number, path: string): Promise<Response> {
  return exchange(await connect(port), path);
}

describe('reference backend, graceful', () => {
  it('serves with pod attribution', async () => {
    const b = await startBackend('graceful');
    const res = await get(b.port, '/delay?ms=50');
    expect(res.status).toBe(200);
    expect(res.headers['x-zerodrop-pod']).toBe('ref-graceful');
    expect(JSON.parse(res.body)).toEqual({ pod: 'ref-graceful', path: '/delay' });
    expect(res.headers.connection).toBe('keep-alive');
    expect((await get(b.port, '/healthz')).status).toBe(200);
    expect((await get(b.port, '/nope')).status).toBe(404);
  });

  it('keeps accepting after SIGTERM, closes politely and exits DRAIN_IDLE_MS after the last connection', async () => {
    const IDLE = 600;
    const IDLE_CLOSE = 400;
    const b = await startBackend('graceful', { DRAIN_IDLE_MS: String(IDLE), DRAIN_IDLE_CLOSE_MS: String(IDLE_CLOSE) });
    // Two keep-alive sockets that are idle at SIGTERM, and one request in flight.
    const reused = await connect(b.port);
    expect((await exchange(reused, '/')).headers.connection).toBe('keep-alive');
    const idle = await connect(b.port);
    await exchange(idle, '/');
    const inFlight = exchange(await connect(b.port), '/delay?ms=700');
    await delay(100);

    const sigtermAt = performance.now();
    b.child.kill('SIGTERM');
    expect((await b.waitLine('sigterm')).open).toBe(3);

    // A new connection after SIGTERM is accepted and served, with a polite close.
    await delay(150);
    const fresh = await connect(b.port);
    const freshRes = await exchange(fresh, '/');
    expect(freshRes.status).toBe(200);
    expect(freshRes.headers.connection).toBe('close');
    await fresh.closed;

    // The socket that was idle at SIGTERM was not closed under its client: its next request works.
    expect(performance.now() - sigtermAt).toBeLessThan(IDLE_CLOSE);
    const reusedRes = await exchange(reused, '/');
    expect(reusedRes.status).toBe(200);
    expect(reusedRes.headers.connection).toBe('close');

    // The in-flight request completes, told to close.
    const inFlightRes = await inFlight;
    expect(inFlightRes.status).toBe(200);
    expect(inFlightRes.headers.connection).toBe('close');

    // The untouched idle socket is closed once idle DRAIN_IDLE_CLOSE_MS after SIGTERM.
    const idleClosedAfter = (await idle.closed) - sigtermAt;
    expect(idleClosedAfter).toBeGreaterThanOrEqual(IDLE_CLOSE - 20);
    expect(idleClosedAfter).toBeLessThan(IDLE_CLOSE + 300);

    // Still accepting during the idle window; the late connection restarts the idle clock.
    await delay(IDLE / 2);
    expect(b.alive()).toBe(true);
    const late = await connect(b.port);
    expect((await exchange(late, '/')).status).toBe(200);
    const lastClose = await late.closed;

    const exit = await b.exited;
    expect(exit.code).toBe(0);
    expect(exit.t - lastClose).toBeGreaterThanOrEqual(IDLE - 20);
    expect(exit.t - lastClose).toBeLessThan(IDLE + 400);
    expect(b.lines.find((l) => l.ev === 'exit')?.served).toBe(6);
  });

  it('exits DRAIN_IDLE_MS after SIGTERM when idle, but not before DRAIN_MIN_MS', async () => {
    const [quick, held] = await Promise.all([
      startBackend('graceful', { DRAIN_IDLE_MS: '200' }),
      startBackend('graceful', { DRAIN_IDLE_MS: '200', DRAIN_MIN_MS: '1000' }),
    ]);
    const sigtermAt = performance.now();
    quick.child.kill('SIGTERM');
    held.child.kill('SIGTERM');
    const [q, h] = await Promise.all([quick.exited, held.exited]);
    expect(q.code).toBe(0);
    expect(q.t - sigtermAt).toBeGreaterThanOrEqual(180);
    expect(q.t - sigtermAt).toBeLessThan(600);
    expect(h.code).toBe(0);
    expect(h.t - sigtermAt).toBeGreaterThanOrEqual(980);
    expect(h.t - sigtermAt).toBeLessThan(1400);
  });
});

describe('reference backend, mutants', () => {
  it('exit-on-sigterm dies by the signal and kills the in-flight request', async () => {
    const b = await startBackend('exit-on-sigterm');
    const inFlight = get(b.port, '/delay?ms=3000');
    const outcome = inFlight.then(
      () => 'completed',
      () => 'failed',
    );
    await delay(150);
    b.child.kill('SIGTERM');
    const exit = await b.exited;
    expect(exit.signal).toBe('SIGTERM');
    expect(exit.code).toBeNull();
    expect(await outcome).toBe('failed');
    expect(b.lines.map((l) => l.ev)).toEqual(['listening']);
  });

  it('refuse-after-sigterm refuses new connections but completes the in-flight request', async () => {
    const b = await startBackend('refuse-after-sigterm');
    const inFlight = get(b.port, '/delay?ms=600');
    const idle = await connect(b.port);
    await exchange(idle, '/');
    await delay(150);
    b.child.kill('SIGTERM');
    await b.waitLine('sigterm');
    // Only the listener closes: an idle keep-alive socket still carries its client's next request,
    // answered with close (closing it at SIGTERM would be a second bug, racing that request).
    const next = await exchange(idle, '/');
    expect(next.status).toBe(200);
    expect(next.headers.connection).toBe('close');
    // (A connect in the first milliseconds after the listener closes has been seen to succeed and
    // then be reset in some sandboxes; 100 ms later it is refused.)
    await delay(100);
    await expect(connect(b.port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    const res = await inFlight;
    expect(res.status).toBe(200);
    const completedAt = performance.now();
    const exit = await b.exited;
    expect(exit.code).toBe(0);
    expect(exit.t - completedAt).toBeLessThan(500);
    expect(b.lines.find((l) => l.ev === 'exit')?.served).toBe(3);
  });

  it('hang-until-killed ignores SIGTERM and keeps serving with keep-alive', async () => {
    const b = await startBackend('hang-until-killed');
    const kept = await connect(b.port);
    await exchange(kept, '/');
    b.child.kill('SIGTERM');
    await b.waitLine('sigterm');
    await delay(1500);
    expect(b.alive()).toBe(true);
    const res = await exchange(kept, '/');
    expect(res.status).toBe(200);
    expect(res.headers.connection).toBe('keep-alive');
    expect((await get(b.port, '/')).status).toBe(200);
    b.child.kill('SIGKILL');
    expect((await b.exited).signal).toBe('SIGKILL');
  });

  it('rejects an unknown DRAIN_MODE', async () => {
    const child = spawn(process.execPath, [SCRIPT], {
      env: { ...process.env, PORT: '0', DRAIN_MODE: 'bogus' },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.push(child);
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const code = await new Promise((resolve) => child.once('exit', resolve));
    expect(code).toBe(2);
    expect(stderr).toContain('DRAIN_MODE');
  });
});
