import { spawn } from 'node:child_process';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HttpLoadSpec, SingleRequestSpec } from '../model/load.ts';
import type { RequestRecord } from '../model/timeline.ts';
import { watchLoop } from '../../suites/helpers/loop-watch.ts';
import { Recorder } from '../observe/recorder.ts';
import { LATE_THRESHOLD_MS, startHttpLoad, type LoadHandle } from './http.ts';

interface Seen {
  path: string;
  remotePort: number;
}

interface TestServer {
  port: number;
  /** Every request the server received, in order. */
  seen: Seen[];
  /** Distinct client sockets that connected. */
  sockets: number;
  close(): Promise<void>;
}

const cleanups: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function startServer(handle: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<TestServer> {
  const server = http.createServer((req, res) => {
    seen.push({ path: req.url ?? '', remotePort: req.socket.remotePort ?? -1 });
    handle(req, res);
  });
  server.keepAliveTimeout = 5000;
  const seen: Seen[] = [];
  let sockets = 0;
  server.on('connection', () => sockets++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  };
  cleanups.push(close);
  return {
    port: (server.address() as AddressInfo).port,
    seen,
    get sockets() {
      return sockets;
    },
    close,
  };
}

function track(handle: LoadHandle): LoadHandle {
  cleanups.push(() => handle.stop());
  return handle;
}

/** A pod that answers like the reference backend. */
function reply(res: http.ServerResponse, status = 200, pod = 'pod-a'): void {
  res.writeHead(status, { 'x-zerodrop-pod': pod, 'content-type': 'application/json' });
  res.end(JSON.stringify({ pod }));
}

const single = (path: string, timeoutMs = 2000): SingleRequestSpec => ({ kind: 'single', service: 'svc', path, timeoutMs });

async function one(port: number, path: string, timeoutMs = 2000): Promise<{ record: RequestRecord; recorder: Recorder }> {
  const recorder = new Recorder();
  const load = track(startHttpLoad('one', single(path, timeoutMs), { host: '127.0.0.1', port }, recorder));
  const summary = await load.done;
  expect(summary.sent).toBe(1);
  expect(recorder.timeline.requests).toHaveLength(1);
  return { record: recorder.timeline.requests.at(0), recorder };
}

/**
 * A port whose TCP handshake never completes: a listener with backlog 1 in a process whose event
 * loop is blocked, so it never accepts, with its accept queue filled; further SYNs are dropped.
 */
async function unacceptingPort(): Promise<number> {
  const script = `const s = require('node:net').createServer();
s.listen({ port: 0, host: '127.0.0.1', backlog: 1 }, () => {
  console.log(s.address().port);
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60000);
});`;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  cleanups.push(async () => {
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
  });
  const line = await new Promise<string>((resolve) => createInterface({ input: child.stdout! }).once('line', resolve));
  const port = Number(line);
  const fillers: net.Socket[] = [];
  cleanups.push(async () => fillers.forEach((s) => s.destroy()));
  // Fill the accept queue until connections stop completing.
  for (let i = 0; i < 16; i++) {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('error', () => undefined);
    fillers.push(socket);
    const connected = await Promise.race([
      new Promise<boolean>((resolve) => socket.once('connect', () => resolve(true))),
      delay(100).then(() => false),
    ]);
    if (!connected) return port;
  }
  throw new Error('could not fill the accept queue');
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function http11(overrides: Partial<HttpLoadSpec>): HttpLoadSpec {
  return { kind: 'http', service: 'svc', path: '/', keepAlive: false, mode: 'closed', connections: 1, timeoutMs: 2000, ...overrides };
}

describe('outcome classes', () => {
  it('ok, with the pod, the client socket and its open time', async () => {
    const server = await startServer((_req, res) => reply(res, 200, 'pod-7'));
    const { record } = await one(server.port, '/hello');
    expect(record).toMatchObject({ id: 1, load: 'one', outcome: 'ok', status: 200, pod: 'pod-7', path: '/hello', newConnection: true });
    expect(record.error).toBeUndefined();
    expect(record.localPort).toBe(server.seen[0]!.remotePort);
    expect(record.connectionStart).toBeGreaterThanOrEqual(record.start);
    expect(record.connectionStart).toBeLessThanOrEqual(record.end);
    expect(record.end).toBeGreaterThan(record.start);
  });

  it('refused: nothing listens on the port', async () => {
    const { record } = await one(await freePort(), '/');
    expect(record.outcome).toBe('refused');
    // The port the connect left from, which places it by the balancer's or conntrack's record; it never opened.
    expect(record.localPort).toBeGreaterThan(0);
    expect(record.connectionStart).toBeUndefined();
    expect(record.newConnection).toBe(false);
    expect(record.error).toMatch(/ECONNREFUSED/);
  });

  it("refused on the way to a new connection: the record carries no status and no pod of the previous request's response", async () => {
    // The pod answers once, says Connection: close and stops listening: the client's next request
    // needs a new connection, which is refused. That request was answered by nobody.
    const server: TestServer = await startServer((_req, res) => {
      res.setHeader('connection', 'close');
      reply(res, 200, 'pod-before');
      void server.close();
    });
    const recorder = new Recorder();
    const load = track(startHttpLoad('ka', http11({ keepAlive: true }), { host: '127.0.0.1', port: server.port }, recorder, { maxRequests: 2 }));
    await load.done;
    const [first, second] = recorder.timeline.requests.toArray();
    expect(first).toMatchObject({ outcome: 'ok', status: 200, pod: 'pod-before' });
    expect(second).toMatchObject({ outcome: 'refused', newConnection: false });
    expect(second?.status).toBeUndefined();
    expect(second?.pod).toBeUndefined();
    // Its own connect's port, not the first request's connection's: what places it (observe/join.ts).
    expect(second?.localPort).toBeGreaterThan(0);
    expect(second?.localPort).not.toBe(first?.localPort);
  });

  it('reset: the server resets the connection before responding', async () => {
    const server = await startServer((req) => req.socket.resetAndDestroy());
    const { record } = await one(server.port, '/');
    expect(record.outcome).toBe('reset');
    expect(record.localPort).toBe(server.seen[0]!.remotePort);
    await delay(100);
    expect(server.seen).toHaveLength(1);
  });

  it('reset: the server resets the connection in the middle of the body', async () => {
    const server = await startServer((req, res) => {
      res.writeHead(200, { 'content-length': '100', 'x-zerodrop-pod': 'pod-r' });
      res.write('partial');
      setTimeout(() => req.socket.resetAndDestroy(), 30);
    });
    const { record } = await one(server.port, '/');
    expect(record).toMatchObject({ outcome: 'reset', status: 200, pod: 'pod-r' });
  });

  it('eof: the server closes the connection without a response', async () => {
    const server = await startServer((req) => req.socket.end());
    const { record } = await one(server.port, '/');
    expect(record.outcome).toBe('eof');
    expect(record.error).toMatch(/other side closed/);
    await delay(100);
    expect(server.seen).toHaveLength(1);
  });

  it('eof: the server closes the connection in the middle of the body', async () => {
    const server = await startServer((req, res) => {
      res.writeHead(200, { 'content-length': '100' });
      res.write('partial');
      setTimeout(() => req.socket.end(), 30);
    });
    const { record } = await one(server.port, '/');
    expect(record).toMatchObject({ outcome: 'eof', status: 200 });
  });

  it('timeout: no response within timeoutMs', async () => {
    const server = await startServer(() => {
      // never answers
    });
    const { record } = await one(server.port, '/hang', 300);
    expect(record.outcome).toBe('timeout');
    expect(record.end - record.start).toBeGreaterThanOrEqual(295);
    expect(record.end - record.start).toBeLessThan(500);
    expect(record.localPort).toBe(server.seen[0]!.remotePort);
    await delay(100);
    expect(server.seen).toHaveLength(1);
  });

  it('timeout: a request after many quick ones on the same connection gets its whole timeoutMs', async () => {
    // The worker's timer is set at its first request and not moved per request: when it fires for a
    // later one, that request is timed out only once its own timeoutMs has passed.
    const started = performance.now();
    const server = await startServer((_req, res) => {
      if (performance.now() - started < 250) setTimeout(() => reply(res), 5);
      // later requests are never answered
    });
    const recorder = new Recorder();
    const load = track(startHttpLoad('late-hang', http11({ keepAlive: true, timeoutMs: 400 }), { host: '127.0.0.1', port: server.port }, recorder));
    await delay(900);
    await load.stop();
    const [hung, ...after] = recorder.timeline.requests.filter((r) => r.outcome === 'timeout');
    expect(recorder.timeline.requests.filter((r) => r.outcome === 'ok').length).toBeGreaterThan(5);
    expect(hung!.start).toBeGreaterThan(recorder.timeline.requests.at(0).start + 150);
    expect(hung!.end - hung!.start).toBeGreaterThanOrEqual(399);
    expect(hung!.end - hung!.start).toBeLessThan(800);
    expect(after.every((r) => r.end - r.start >= 399)).toBe(true);
  });

  it('timeout and abort while still connecting: the TCP handshake never completes', async () => {
    const port = await unacceptingPort();
    const { record } = await one(port, '/', 300);
    expect(record).toMatchObject({ outcome: 'timeout', newConnection: false });
    expect(record.localPort).toBeGreaterThan(0);
    expect(record.connectionStart).toBeUndefined();
    expect(record.end - record.start).toBeLessThan(500);

    const recorder = new Recorder();
    const ac = new AbortController();
    const load = track(
      startHttpLoad('connecting', http11({ connections: 2, timeoutMs: 10_000 }), { host: '127.0.0.1', port }, recorder, { signal: ac.signal }),
    );
    await delay(100);
    ac.abort();
    const summary = await load.done;
    expect(summary.stoppedAt - summary.startedAt).toBeLessThan(600);
    expect(recorder.timeline.requests.map((r) => r.error)).toEqual(['aborted', 'aborted']);
  });

  it('status: a 503 is a failure of class status, still attributed to its pod', async () => {
    const server = await startServer((_req, res) => reply(res, 503, 'pod-b'));
    const { record } = await one(server.port, '/');
    expect(record).toMatchObject({ outcome: 'status', status: 503, pod: 'pod-b' });
    await delay(50);
    expect(server.seen).toHaveLength(1);
  });

  it('a 404 is a response, not a failure', async () => {
    const server = await startServer((_req, res) => reply(res, 404));
    const { record } = await one(server.port, '/');
    expect(record).toMatchObject({ outcome: 'ok', status: 404 });
  });

  it("a 404 is a failure of class status where the load counts only a 2xx (okStatus): a gateway's own answer", async () => {
    const server = await startServer((_req, res) => reply(res, 404));
    const recorder = new Recorder();
    const load = track(startHttpLoad('one', { ...single('/', 2000), okStatus: '2xx' }, { host: '127.0.0.1', port: server.port }, recorder));
    await load.done;
    expect(recorder.timeline.requests.at(0)).toMatchObject({ outcome: 'status', status: 404 });
  });
});

/** A TCP server that answers each request (one per read, enough here) with `answer(n)`, n counting from 1. */
async function rawServer(answer: (n: number, socket: net.Socket) => void): Promise<{ port: number; sockets: () => number }> {
  let n = 0;
  let sockets = 0;
  const open = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    socket.on('error', () => undefined);
    socket.on('data', () => answer(++n, socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(async () => {
    for (const s of open) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port: (server.address() as AddressInfo).port, sockets: () => sockets };
}

describe('HTTP/1.1 framing', () => {
  it('reads chunked responses, cut anywhere, and keeps the connection', async () => {
    const body = 'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nx-zerodrop-pod: pod-ch\r\n\r\n4\r\nabcd\r\n0\r\n\r\n';
    const server = await rawServer((n, socket) => {
      // Every other response in two writes, cut at a different byte each time.
      if (n % 2 === 0) socket.write(body);
      else {
        const cut = 1 + (n % (body.length - 1));
        socket.write(body.slice(0, cut));
        setTimeout(() => socket.write(body.slice(cut)), 2);
      }
    });
    const recorder = new Recorder();
    const load = track(startHttpLoad('chunked', http11({ keepAlive: true }), { host: '127.0.0.1', port: server.port }, recorder, { maxRequests: 20 }));
    const summary = await load.done;
    expect(summary).toMatchObject({ sent: 20, completed: 20 });
    expect(recorder.timeline.requests.every((r) => r.pod === 'pod-ch' && r.status === 200)).toBe(true);
    expect(server.sockets()).toBe(1);
  });

  it('reads a response without a length to the close, and opens a new connection for the next', async () => {
    const server = await rawServer((_n, socket) => socket.end('HTTP/1.1 200 OK\r\nx-zerodrop-pod: pod-1\r\n\r\nuntil the end'));
    const recorder = new Recorder();
    const load = track(startHttpLoad('close', http11({ keepAlive: true }), { host: '127.0.0.1', port: server.port }, recorder, { maxRequests: 3 }));
    await load.done;
    expect(recorder.timeline.requests.map((r) => [r.outcome, r.newConnection])).toEqual([
      ['ok', true],
      ['ok', true],
      ['ok', true],
    ]);
    expect(server.sockets()).toBe(3);
  });

  it('opens a new connection after a response that says Connection: close, without losing a request', async () => {
    const server = await rawServer((n, socket) => socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 0\r\n${n % 2 === 0 ? 'Connection: close\r\n' : ''}\r\n`));
    const recorder = new Recorder();
    const load = track(startHttpLoad('cc', http11({ keepAlive: true }), { host: '127.0.0.1', port: server.port }, recorder, { maxRequests: 6 }));
    const summary = await load.done;
    expect(summary).toMatchObject({ sent: 6, completed: 6 });
    expect(recorder.timeline.requests.map((r) => r.newConnection)).toEqual([true, false, true, false, true, false]);
  });

  it('records something that is not an HTTP response as error, once', async () => {
    const server = await rawServer((_n, socket) => socket.write('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    const { record } = await one(server.port, '/');
    expect(record).toMatchObject({ outcome: 'error' });
    expect(record.error).toMatch(/invalid response: not an HTTP\/1.x status line/);
  });

  it('refuses a path that would break the request line', () => {
    const recorder = new Recorder();
    expect(() => startHttpLoad('x', single('/a b'), { host: '127.0.0.1', port: 1 }, recorder)).toThrow(/path must not contain spaces/);
    expect(() => startHttpLoad('x', single('/a\r\nHost: evil'), { host: '127.0.0.1', port: 1 }, recorder)).toThrow(/path/);
  });
});

describe('connections', () => {
  it('keep-alive reuses one socket: only the first request opens it', async () => {
    const server = await startServer((_req, res) => reply(res));
    const recorder = new Recorder();
    const load = track(
      startHttpLoad('ka', http11({ keepAlive: true }), { host: '127.0.0.1', port: server.port }, recorder, { maxRequests: 5 }),
    );
    const summary = await load.done;
    expect(summary).toMatchObject({ sent: 5, completed: 5, failed: 0 });
    const records = recorder.timeline.requests;
    expect(records.map((r) => r.newConnection)).toEqual([true, false, false, false, false]);
    expect(new Set(records.map((r) => r.localPort)).size).toBe(1);
    expect(new Set(records.map((r) => r.connectionStart)).size).toBe(1);
    expect(records.at(0).localPort).toBe(server.seen[0]!.remotePort);
    expect(server.sockets).toBe(1);
  });

  it('postBytes: each request is a POST carrying that many bytes, and keep-alive still reuses the socket', async () => {
    const bodies: { method: string; body: string }[] = [];
    const server = await startServer((req, res) => {
      let body = '';
      req.setEncoding('latin1');
      req.on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        bodies.push({ method: req.method ?? '', body });
        reply(res);
      });
    });
    const recorder = new Recorder();
    const load = track(startHttpLoad('post', http11({ keepAlive: true, postBytes: 64 }), { host: '127.0.0.1', port: server.port }, recorder, { maxRequests: 3 }));
    expect(await load.done).toMatchObject({ sent: 3, completed: 3, failed: 0 });
    expect(bodies).toEqual(Array.from({ length: 3 }, () => ({ method: 'POST', body: 'x'.repeat(64) })));
    expect(server.sockets).toBe(1);
  });

  it('keep-alive off opens a fresh socket for every request', async () => {
    const server = await startServer((_req, res) => reply(res));
    const recorder = new Recorder();
    const load = track(
      startHttpLoad('fresh', http11({ keepAlive: false }), { host: '127.0.0.1', port: server.port }, recorder, { maxRequests: 5 }),
    );
    await load.done;
    const records = recorder.timeline.requests;
    expect(records).toHaveLength(5);
    expect(records.every((r) => r.newConnection && r.outcome === 'ok')).toBe(true);
    expect(new Set(records.map((r) => r.localPort)).size).toBe(5);
    expect(records.map((r) => r.localPort)).toEqual(server.seen.map((s) => s.remotePort));
    expect(server.sockets).toBe(5);
  });

  it.each([
    ['asked to close (keep-alive off)', false],
    ['told to close by the server (keep-alive on)', true],
  ])('resets a connection it is done with rather than closing it, so the server keeps no TIME_WAIT socket per request: %s', async (_case, keepAlive) => {
    // The server answers in full and leaves the close to the client: a FIN from the client would
    // show here as 'end', a reset as ECONNRESET.
    const ends: string[] = [];
    const server = net.createServer((socket) => {
      socket.on('data', () => socket.write('HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok'));
      socket.on('end', () => ends.push('fin'));
      socket.on('error', (err: NodeJS.ErrnoException) => ends.push(err.code ?? 'error'));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => server.close(resolve)));
    const recorder = new Recorder();
    const port = (server.address() as AddressInfo).port;
    const load = track(startHttpLoad('fresh', http11({ keepAlive }), { host: '127.0.0.1', port }, recorder, { maxRequests: 3 }));
    expect(await load.done).toMatchObject({ sent: 3, completed: 3, failed: 0 });
    await vi.waitFor(() => expect(ends).toHaveLength(3));
    expect(ends).toEqual(['ECONNRESET', 'ECONNRESET', 'ECONNRESET']);
  });

  it('never retries: a failing request reaches the server exactly once', async () => {
    // Keep-alive, so that the generator's paths for requests on a socket that closes are exercised: every
    // request after the first on a socket fails (reset, close without response, or 503).
    let n = 0;
    const perSocket = new WeakMap<object, number>();
    const server = await startServer((req, res) => {
      const k = (perSocket.get(req.socket) ?? 0) + 1;
      perSocket.set(req.socket, k);
      n++;
      if (k === 1) reply(res);
      else if (n % 3 === 0) req.socket.resetAndDestroy();
      else if (n % 3 === 1) req.socket.end();
      else reply(res, 503);
    });
    const recorder = new Recorder();
    const load = track(
      startHttpLoad('no-retry', http11({ keepAlive: true, connections: 4 }), { host: '127.0.0.1', port: server.port }, recorder),
    );
    await delay(500);
    const summary = await load.stop();
    const records = recorder.timeline.requests;
    const outcomes = new Set(records.map((r) => r.outcome));
    expect(outcomes).toEqual(new Set(['ok', 'reset', 'eof', 'status']));
    expect(summary.sent).toBe(records.length);
    expect(summary.failed).toBe(records.filter((r) => r.outcome !== 'ok').length);
    // One request on the wire per record: a retry would make the server see more.
    expect(server.seen).toHaveLength(records.length);
    expect(countByPort(records.map((r) => r.localPort))).toEqual(countByPort(server.seen.map((s) => s.remotePort)));
  });

  it('never retries when the server closes idle keep-alive sockets under the client', async () => {
    // Closing a socket right after a response races the client's next request on it: that request
    // fails (it may never reach the server's parser), and it must not be sent again elsewhere.
    let n = 0;
    const server = await startServer((req, res) => {
      reply(res);
      if (++n % 2 === 0) setImmediate(() => req.socket.destroy());
    });
    const recorder = new Recorder();
    const load = track(
      startHttpLoad('race', http11({ keepAlive: true, connections: 4 }), { host: '127.0.0.1', port: server.port }, recorder),
    );
    await delay(500);
    const summary = await load.stop();
    const records = recorder.timeline.requests;
    expect(records.length).toBeGreaterThan(50);
    expect(summary.sent).toBe(records.length);
    // Per client socket, the server never saw more requests than were recorded on it.
    const recorded = countByPort(records.map((r) => r.localPort));
    for (const [port, count] of countByPort(server.seen.map((s) => s.remotePort))) {
      expect(count).toBeLessThanOrEqual(recorded.get(port) ?? 0);
    }
    expect(server.seen.length).toBeLessThanOrEqual(records.length);
  });
});

function countByPort(ports: (number | undefined)[]): Map<number | undefined, number> {
  const counts = new Map<number | undefined, number>();
  for (const p of ports) counts.set(p, (counts.get(p) ?? 0) + 1);
  return new Map([...counts].sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0)));
}

describe('rates', () => {
  it('open loop holds 200/s within 5% over 2 s, and is never late while its loop keeps up', async () => {
    const server = await startServer((_req, res) => reply(res));
    const recorder = new Recorder();
    using loop = watchLoop();
    const load = track(
      startHttpLoad('open', http11({ mode: 'open', rate: 200, connections: 20 }), { host: '127.0.0.1', port: server.port }, recorder),
    );
    await delay(2000);
    const summary = await load.stop();
    expect(summary.mode).toBe('open');
    expect(summary.targetRate).toBe(200);
    expect(summary.achievedRate).toBeGreaterThan(190);
    expect(summary.achievedRate).toBeLessThan(210);
    // Half the threshold: the margin watchLoop asks for.
    if (loop.maxDelayMs() < LATE_THRESHOLD_MS / 2) expect(summary.late).toBe(0);
    expect(summary.failed).toBe(0);
    expect(summary.sent).toBe(summary.completed);
    // The starts are spread evenly: every 500 ms quarter holds ~100 of them.
    const starts = recorder.timeline.requests.map((r) => r.start - summary.startedAt);
    for (let q = 0; q < 4; q++) {
      const inQuarter = starts.filter((s) => s >= q * 500 && s < (q + 1) * 500).length;
      expect(inQuarter).toBeGreaterThanOrEqual(90);
      expect(inQuarter).toBeLessThanOrEqual(110);
    }
  });

  it('open loop waits for a free connection instead of dropping, and counts late starts', async () => {
    const server = await startServer((_req, res) => setTimeout(() => reply(res), 100));
    const recorder = new Recorder();
    const load = track(
      startHttpLoad('slow', http11({ mode: 'open', rate: 50, connections: 1 }), { host: '127.0.0.1', port: server.port }, recorder),
    );
    await delay(600);
    const summary = await load.stop();
    // 1 connection at 100 ms per request cannot hold 50/s: the schedule backs up.
    expect(summary.late).toBeGreaterThan(0);
    expect(summary.achievedRate).toBeLessThan(15);
    expect(summary.failed).toBe(0);
    expect(recorder.timeline.requests).toHaveLength(summary.sent);
    expect(server.seen).toHaveLength(summary.sent);
  });

  it('closed loop with ratePerWorker is capped; without it, it is not', async () => {
    const server = await startServer((_req, res) => reply(res));
    const target = { host: '127.0.0.1', port: server.port };
    const recorder = new Recorder();
    using loop = watchLoop();
    const capped = track(startHttpLoad('capped', http11({ connections: 4, ratePerWorker: 10, keepAlive: true }), target, recorder));
    await delay(1500);
    const c = await capped.stop();
    expect(c.targetRate).toBe(40);
    // A start held up by d ms makes its gap to the next one d ms shorter; 15 ms is what the gap check allows.
    const steady = loop.maxDelayMs() < 15;
    if (steady) expect(c.late).toBe(0);
    // Each worker starts at once and then once per 100 ms: 16 in 1.5 s, never more.
    expect(c.sent).toBeLessThanOrEqual(4 * 16);
    expect(c.sent).toBeGreaterThanOrEqual(4 * 14);
    expect(c.achievedRate).toBeGreaterThan(36);
    // Keep-alive: a worker is a socket. Its starts follow a 100 ms ticker: a start delayed by the
    // event loop does not delay the next tick, so single gaps may be a little shorter.
    const byWorker = Map.groupBy(recorder.timeline.requests, (r) => r.localPort);
    expect(byWorker.size).toBe(4);
    for (const rs of byWorker.values()) {
      if (steady) for (let i = 1; i < rs.length; i++) expect(rs[i]!.start - rs[i - 1]!.start).toBeGreaterThanOrEqual(85);
      expect((rs.at(-1)!.start - rs[0]!.start) / (rs.length - 1)).toBeGreaterThanOrEqual(99);
    }

    const free = track(startHttpLoad('free', http11({ connections: 4, keepAlive: true }), target, new Recorder()));
    await delay(500);
    const f = await free.stop();
    expect(f.targetRate).toBeUndefined();
    expect(f.achievedRate).toBeGreaterThan(200);
  });
});

describe('stopping', () => {
  it('stop() waits for the in-flight request', async () => {
    const server = await startServer((_req, res) => setTimeout(() => reply(res), 300));
    const recorder = new Recorder();
    const load = track(startHttpLoad('wait', http11({ connections: 2 }), { host: '127.0.0.1', port: server.port }, recorder));
    await delay(50);
    const stopAt = recorder.now();
    const summary = await load.stop();
    expect(recorder.now() - stopAt).toBeGreaterThanOrEqual(200);
    expect(summary).toMatchObject({ sent: 2, completed: 2, failed: 0 });
    expect(recorder.timeline.requests.every((r) => r.outcome === 'ok')).toBe(true);
    await delay(100);
    expect(server.seen).toHaveLength(2);
  });

  it('aborting the signal aborts in-flight requests as error "aborted"', async () => {
    const server = await startServer(() => {
      // never answers
    });
    const recorder = new Recorder();
    const ac = new AbortController();
    const load = track(
      startHttpLoad('abort', http11({ connections: 3, timeoutMs: 10_000 }), { host: '127.0.0.1', port: server.port }, recorder, {
        signal: ac.signal,
      }),
    );
    await delay(100);
    const abortAt = recorder.now();
    ac.abort();
    const summary = await load.done;
    expect(recorder.now() - abortAt).toBeLessThan(500);
    expect(summary).toMatchObject({ sent: 3, completed: 0, failed: 3 });
    for (const r of recorder.timeline.requests) expect(r).toMatchObject({ outcome: 'error', error: 'aborted' });
  });

  it('stops by itself at maxRequests', async () => {
    const server = await startServer((_req, res) => reply(res));
    const recorder = new Recorder();
    const load = startHttpLoad('max', http11({ connections: 3 }), { host: '127.0.0.1', port: server.port }, recorder, {
      maxRequests: 10,
    });
    const summary = await load.done;
    expect(summary.sent).toBe(10);
    expect(recorder.timeline.requests).toHaveLength(10);
    expect(recorder.timeline.events.map((e) => e.message)).toEqual(['load max stopped by itself at maxRequests 10']);
    expect(await load.stop()).toEqual(summary);
  });

  it('stops by itself at maxDurationMs', async () => {
    const server = await startServer((_req, res) => reply(res));
    const recorder = new Recorder();
    const load = startHttpLoad('dur', http11({ mode: 'open', rate: 100, connections: 2 }), { host: '127.0.0.1', port: server.port }, recorder, {
      maxDurationMs: 300,
    });
    const summary = await load.done;
    expect(summary.sent).toBeGreaterThanOrEqual(28);
    expect(summary.sent).toBeLessThanOrEqual(31);
  });

  it('rejects a spec it cannot run', () => {
    const recorder = new Recorder();
    const target = { host: '127.0.0.1', port: 1 };
    expect(() => startHttpLoad('x', http11({ mode: 'open' }), target, recorder)).toThrow(/rate/);
    expect(() => startHttpLoad('x', http11({ connections: 0 }), target, recorder)).toThrow(/connections/);
    expect(() => startHttpLoad('x', http11({ timeoutMs: 0 }), target, recorder)).toThrow(/timeoutMs/);
    expect(() => startHttpLoad('x', http11({ postBytes: 1.5 }), target, recorder)).toThrow(/postBytes/);
    expect(() => startHttpLoad('x', http11({ postBytes: 70_000 }), target, recorder)).toThrow(/postBytes/);
  });
});

describe('connections recorded by the load itself (a provider without balancer records)', () => {
  it('one record per connection, with the pod its response named, closed when the client dropped it', async () => {
    const server = await startServer((_req, res) => reply(res, 200, 'pod-b'));
    const recorder = new Recorder();
    // keepAlive false: each connection is dropped right after its response, the case where the
    // record must already carry the pod when it is closed.
    const load = track(startHttpLoad('own', http11({ ratePerWorker: 50 }), { host: '127.0.0.1', port: server.port }, recorder, { clientConnections: { service: 'svc' } }));
    await delay(200);
    await load.stop();
    const { connections, requests } = recorder.timeline;
    expect(requests.length).toBeGreaterThan(2);
    expect(connections).toHaveLength(requests.length);
    for (const c of connections) {
      expect(c).toMatchObject({ service: 'svc', pod: 'pod-b', upstream: 'ok' });
      expect(c.close).toBeGreaterThanOrEqual(c.open);
    }
    expect(new Set(connections.map((c) => c.clientPort))).toEqual(new Set(requests.map((r) => r.localPort)));
  });

  it('a refused connect is a record too, from its port and the time the connect started, refused and placed on no pod yet', async () => {
    const recorder = new Recorder();
    const load = track(startHttpLoad('own', single('/'), { host: '127.0.0.1', port: await freePort() }, recorder, { clientConnections: { service: 'svc' } }));
    await load.done;
    const request = recorder.timeline.requests.at(0);
    expect(request.outcome).toBe('refused');
    expect(recorder.timeline.connections).toHaveLength(1);
    const [c] = recorder.timeline.connections;
    expect(c).toMatchObject({ service: 'svc', clientPort: request.localPort, upstream: 'refused' });
    expect(c!.pod).toBeUndefined();
    expect(c!.open).toBeGreaterThanOrEqual(request.start);
    expect(c!.close).toBeLessThanOrEqual(request.end);
  });

  it('records nothing unless asked (the local balancer keeps its own)', async () => {
    const server = await startServer((_req, res) => reply(res));
    const { recorder } = await one(server.port, '/');
    expect(recorder.timeline.connections).toHaveLength(0);
  });
});
