import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { Http2LoadSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import { startHttp2Load } from './http2.ts';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** An h2c server on loopback; `onStream` answers (or not) each stream of each session. */
async function h2Server(onStream: (stream: http2.ServerHttp2Stream, session: http2.ServerHttp2Session, n: number, cut: (s: http2.ServerHttp2Session) => void) => void) {
  const server = http2.createServer();
  // The accepted sockets by client port: session.socket is a proxy that cannot be destroyed.
  const raw = new Map<number | undefined, import('node:net').Socket>();
  server.on('connection', (socket: import('node:net').Socket) => raw.set(socket.remotePort, socket));
  const sessions = new Set<http2.ServerHttp2Session>();
  const perSession = new Map<http2.ServerHttp2Session, number>();
  server.on('session', (s) => {
    sessions.add(s);
    s.on('error', () => undefined);
    s.once('close', () => sessions.delete(s));
  });
  server.on('stream', (stream, _headers) => {
    stream.on('error', () => undefined);
    const session = stream.session as http2.ServerHttp2Session;
    const n = (perSession.get(session) ?? 0) + 1;
    perSession.set(session, n);
    onStream(stream, session, n, (s) => raw.get(s.socket.remotePort)?.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  cleanups.push(async () => {
    for (const s of sessions) s.destroy();
    await new Promise((resolve) => server.close(resolve));
  });
  return {
    port,
    sessions: () => perSession.size,
    /** Writes a GOAWAY (last stream id 2^31-1) onto every accepted socket, at once. */
    notice: () => {
      for (const socket of raw.values()) socket.write(Buffer.from([0, 0, 8, 7, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
    },
  };
}

const respond = (stream: http2.ServerHttp2Stream) => stream.respond({ ':status': 200, 'x-zerodrop-gateway': 'gw-1', 'x-zerodrop-pod': 'be-1' }, { endStream: true });

const spec = (o: Partial<Http2LoadSpec> = {}): Http2LoadSpec => ({
  kind: 'http2',
  service: 'gateway',
  path: '/',
  sessions: 2,
  streamsPerSession: 3,
  ratePerStream: 20,
  timeoutMs: 2000,
  ...o,
});

describe('startHttp2Load', () => {
  it('sends many streams over a few pooled connections and attributes each to the gateway and backend pods', async () => {
    const server = await h2Server((stream) => respond(stream));
    const recorder = new Recorder();
    const load = startHttp2Load('h2', spec(), { host: '127.0.0.1', port: server.port }, recorder);
    await delay(400);
    const summary = await load.stop();
    const requests = recorder.timeline.requests;
    expect(summary.sent).toBe(requests.length);
    expect(summary.failed).toBe(0);
    expect(requests.length).toBeGreaterThan(20);
    expect(server.sessions()).toBe(2);
    expect(new Set(requests.map((r) => r.localPort)).size).toBe(2);
    expect(requests.filter((r) => r.newConnection)).toHaveLength(2);
    expect(requests.at(0)).toMatchObject({ outcome: 'ok', status: 200, pod: 'gw-1', gateway: 'gw-1', backendPod: 'be-1', service: 'gateway' });
    expect(requests.every((r) => typeof r.streamId === 'number' && r.streamId % 2 === 1)).toBe(true);
  });

  it('records GOAWAY and moves to a fresh connection, losing no stream', async () => {
    // Each connection answers three streams, then says GOAWAY (close() after the response).
    const server = await h2Server((stream, session, n) => {
      respond(stream);
      if (n === 3) session.close();
    });
    const recorder = new Recorder();
    const load = startHttp2Load('h2', spec({ sessions: 1, streamsPerSession: 1 }), { host: '127.0.0.1', port: server.port }, recorder);
    await delay(500);
    await load.stop();
    const goaways = recorder.timeline.events.filter((e) => e.kind === 'goaway');
    expect(goaways.length).toBeGreaterThanOrEqual(2);
    expect(goaways[0]).toMatchObject({ pod: 'gw-1', detail: { load: 'h2', lastStreamId: 5, errorCode: 0 } });
    const requests = recorder.timeline.requests;
    expect(requests.filter((r) => r.outcome !== 'ok')).toEqual([]);
    expect(server.sessions()).toBeGreaterThanOrEqual(3);
    // Never more than three streams on one connection: none was sent after its GOAWAY.
    const perPort = new Map<number | undefined, number>();
    for (const r of requests) perPort.set(r.localPort, (perPort.get(r.localPort) ?? 0) + 1);
    expect(Math.max(...perPort.values())).toBe(3);
  });

  it('sends a request that GOAWAY overtook before it was written on a fresh connection, with a note, and loses none', async () => {
    const server = await h2Server((stream) => respond(stream));
    const recorder = new Recorder();
    // One slot, paced at 10/s from its start (no random stagger): requests are due at t0 + k x 100 ms.
    vi.spyOn(Math, 'random').mockReturnValue(0);
    const t0 = performance.now();
    const load = startHttp2Load('h2', spec({ sessions: 1, streamsPerSession: 1, ratePerStream: 10 }), { host: '127.0.0.1', port: server.port }, recorder);
    vi.restoreAllMocks();
    // The race of a real drain, made certain: the GOAWAY lands in the client's socket buffer just
    // before its request for t0 + 300 is submitted, and is read before that request is written.
    // The event loop is held past both timers, so they run one after the other in one timers phase.
    setTimeout(() => server.notice(), Math.max(0, t0 + 290 - performance.now()));
    setTimeout(() => {
      while (performance.now() < t0 + 330) {
        // hold the event loop
      }
    }, Math.max(0, t0 + 240 - performance.now()));
    await delay(600);
    await load.stop();
    const requests = recorder.timeline.requests;
    expect(requests.filter((r) => r.outcome !== 'ok')).toEqual([]);
    const notes = recorder.timeline.events.filter((e) => e.kind === 'note' && e.detail?.['unsent'] === true);
    expect(notes).toHaveLength(1);
    expect(notes[0]?.message).toMatch(/^load h2: stream 7 was not written before GOAWAY \(last stream id 2147483647\); sending it on a fresh connection$/);
    // The overtaken request went out on a second connection, as its first stream.
    expect(new Set(requests.map((r) => r.localPort)).size).toBe(2);
    expect(requests.filter((r) => r.newConnection)).toHaveLength(2);
  });

  it('records streams cut by a connection that closes without GOAWAY as failures, and never retries them', async () => {
    const server = await h2Server((stream, session, n, cut) => {
      if (n < 4) respond(stream);
      // The fourth stream never gets an answer: the connection is cut under it, without GOAWAY.
      else cut(session);
    });
    const recorder = new Recorder();
    const load = startHttp2Load('h2', spec({ sessions: 1, streamsPerSession: 1 }), { host: '127.0.0.1', port: server.port }, recorder);
    await delay(400);
    const summary = await load.stop();
    const failed = recorder.timeline.requests.filter((r) => r.outcome !== 'ok');
    expect(failed.length).toBeGreaterThan(0);
    expect(summary.sent).toBe(recorder.timeline.requests.length);
    for (const r of failed) expect(['reset', 'eof']).toContain(r.outcome);
    expect(recorder.timeline.events.filter((e) => e.kind === 'goaway')).toEqual([]);
  });

  it('records its own connections where asked (a provider without balancer records): one per session, named by its first response, closed with it', async () => {
    const server = await h2Server((stream) => respond(stream));
    const recorder = new Recorder();
    const load = startHttp2Load('h2', spec(), { host: '127.0.0.1', port: server.port }, recorder, { clientConnections: { service: 'gateway' } });
    await delay(300);
    await load.stop();
    const { connections, requests } = recorder.timeline;
    expect(requests.length).toBeGreaterThan(4);
    expect(connections).toHaveLength(2);
    for (const c of connections) {
      expect(c).toMatchObject({ service: 'gateway', pod: 'gw-1', upstream: 'ok' });
      expect(c.close).toBeGreaterThanOrEqual(c.open);
    }
    expect(new Set(connections.map((c) => c.clientPort))).toEqual(new Set(requests.map((r) => r.localPort)));
  });

  it('closes the record of a connection cut before any response as answered by no pod', async () => {
    const server = await h2Server((stream, session, _n, cut) => cut(session));
    const recorder = new Recorder();
    const load = startHttp2Load('h2', spec({ sessions: 1, streamsPerSession: 1, ratePerStream: 5 }), { host: '127.0.0.1', port: server.port }, recorder, { clientConnections: { service: 'gateway' } });
    await delay(300);
    await load.stop();
    const { connections } = recorder.timeline;
    expect(connections.length).toBeGreaterThan(0);
    for (const c of connections) {
      expect(c.upstream).toBe('error');
      expect(c.pod).toBeUndefined();
      expect(c.close).toBeDefined();
    }
  });

  it('records no connection unless asked (the local balancer keeps its own)', async () => {
    const server = await h2Server((stream) => respond(stream));
    const recorder = new Recorder();
    const load = startHttp2Load('h2', spec(), { host: '127.0.0.1', port: server.port }, recorder);
    await delay(150);
    await load.stop();
    expect(recorder.timeline.connections).toHaveLength(0);
  });
});
