// The WebSocket stream generator against the reference stream app (fixtures/reference-stream-app.mjs)
// as a real process: the close code and the messages outstanding are what happened on the wire.

import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import type { WebSocketLoadSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import { killFixtureApps, startFixtureApp, streamsAcross } from '../../test-support/fixture-app.ts';
import { startWebSocketLoad } from './websocket.ts';

afterEach(killFixtureApps);

const startApp = (mode: string) => startFixtureApp('reference-stream-app.mjs', mode, { STREAM_CLOSE_AFTER_MS: '100', DRAIN_IDLE_MS: '50' });
const SPEC: WebSocketLoadSpec = { kind: 'websocket', service: 'app', streams: 2, ratePerStream: 100, stallMs: 500, reopen: false };

describe('startWebSocketLoad', () => {
  it('records streams stopped by the load (1000) with every message echoed, and the serving pod', async () => {
    const app = await startApp('graceful');
    const recorder = new Recorder();
    const load = startWebSocketLoad('ws', SPEC, { host: '127.0.0.1', port: app.port }, recorder);
    await delay(300);
    const summary = await load.stop();
    const streams = recorder.timeline.streams ?? [];
    expect(streams).toHaveLength(2);
    for (const s of streams) expect(s).toMatchObject({ kind: 'websocket', ending: 'stopped', closeCode: 1000, pod: 'app-graceful', unanswered: 0, mismatched: 0 });
    expect(summary.sent).toBe(summary.completed);
    expect(summary.sent).toBeGreaterThan(40);
  });

  it('where no balancer records connections (a cluster), records each stream as a connection of its pod, open from its start to its end', async () => {
    const app = await startApp('graceful');
    const recorder = new Recorder();
    const load = startWebSocketLoad('ws', SPEC, { host: '127.0.0.1', port: app.port }, recorder, { clientConnections: { service: 'app' } });
    await delay(300);
    await load.stop();
    const streams = recorder.timeline.streams ?? [];
    expect(streams).toHaveLength(2);
    expect(recorder.timeline.connections.map((c) => ({ service: c.service, pod: c.pod, open: c.open, close: c.close, upstream: c.upstream, clientPort: c.clientPort }))).toEqual(
      streams.map((s) => ({ service: 'app', pod: 'app-graceful', open: s.start, close: s.end, upstream: 'ok', clientPort: s.localPort })),
    );
    // Where a balancer records them (the local provider), the load adds none of its own.
    const alone = new Recorder();
    await startWebSocketLoad('ws', SPEC, { host: '127.0.0.1', port: app.port }, alone).stop();
    expect(alone.timeline.connections).toEqual([]);
  });

  it('bounded streams: each closes itself (1000) after its messages are echoed, a new one takes its place, and the first ones start spread over one stream length', async () => {
    const app = await startApp('graceful');
    const recorder = new Recorder();
    // 10 messages at 100/s: each stream lasts about 100 ms, the second starts about 50 ms after the first.
    const load = startWebSocketLoad('ws', { ...SPEC, messagesPerStream: 10 }, { host: '127.0.0.1', port: app.port }, recorder);
    await delay(450);
    await load.stop();
    const streams = recorder.timeline.streams ?? [];
    const complete = streams.filter((s) => s.sent === 10);
    expect(complete.length).toBeGreaterThanOrEqual(4);
    for (const s of complete) expect(s).toMatchObject({ ending: 'stopped', closeCode: 1000, echoed: 10, unanswered: 0, service: 'app' });
    const [first, second] = [...streams].sort((a, b) => a.start - b.start);
    expect(second!.start - first!.start).toBeGreaterThan(30);
  });

  it('records the drain close (1001) after every message was echoed, and reopens the stream', async () => {
    const app = await startApp('graceful');
    const streams = await streamsAcross(app, (target, recorder) => startWebSocketLoad('ws', { ...SPEC, reopen: true }, target, recorder), 'SIGTERM', { beforeMs: 200, afterMs: 0 });
    const first = streams.filter((s) => s.stream <= 2);
    expect(first).toHaveLength(2);
    for (const s of first) {
      expect(s).toMatchObject({ ending: 'closed', closeCode: 1001, unanswered: 0 });
      expect(s.byeAt).toBeDefined();
      expect(s.echoed).toBe(s.sent);
    }
    // The replacements found the app closing (a new stream is closed after its first echo) or gone.
    expect(streams.length).toBeGreaterThan(2);
  });

  it('records 1006 (eof) when the app dies at SIGTERM, and opens no replacement for a broken stream', async () => {
    const app = await startApp('exit-on-sigterm');
    const streams = await streamsAcross(app, (target, recorder) => startWebSocketLoad('ws', { ...SPEC, reopen: true }, target, recorder), 'SIGTERM', { beforeMs: 200, afterMs: 50 });
    expect(streams).toHaveLength(2);
    for (const s of streams) {
      expect(['eof', 'reset']).toContain(s.ending);
      expect(s.closeCode).toBe(1006);
      expect(s.byeAt).toBeUndefined();
    }
  });

  it('stops replacing streams at its cap against a server that closes each after its first echo (1001), and notes when', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    server.on('connection', (ws) =>
      ws.once('message', (data) => {
        ws.send(data, { binary: false });
        ws.close(1001);
      }),
    );
    try {
      const recorder = new Recorder();
      const load = startWebSocketLoad('ws', { ...SPEC, streams: 1, reopen: true }, { host: '127.0.0.1', port: (server.address() as AddressInfo).port }, recorder);
      await vi.waitFor(() => expect(recorder.timeline.events.some((e) => e.detail?.['streamCap'] !== undefined)).toBe(true), { timeout: 5000 });
      await load.stop();
      expect(recorder.timeline.streams).toHaveLength(20);
      expect(recorder.timeline.events.filter((e) => e.kind === 'note' && e.detail?.['load'] === 'ws').map((e) => e.detail)).toEqual([{ load: 'ws', streamCap: 20 }]);
    } finally {
      server.close();
    }
  });

  it('records a close 1001 sent with the handshake as the drain close, not a stall', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await once(server, 'listening');
    server.on('connection', (ws) => ws.close(1001));
    try {
      const recorder = new Recorder();
      const load = startWebSocketLoad('ws', { ...SPEC, streams: 1 }, { host: '127.0.0.1', port: (server.address() as AddressInfo).port }, recorder);
      await vi.waitFor(() => expect(recorder.timeline.streams).toHaveLength(1), { timeout: 2000 });
      await load.stop();
      expect(recorder.timeline.streams![0]).toMatchObject({ ending: 'closed', closeCode: 1001 });
      expect(recorder.timeline.streams![0]!.byeAt).toBeDefined();
    } finally {
      server.close();
    }
  });

  it('records a stall when the app stops echoing', async () => {
    const app = await startApp('hang-until-killed');
    const [stream] = await streamsAcross(app, (target, recorder) => startWebSocketLoad('ws', { ...SPEC, streams: 1, stallMs: 200 }, target, recorder), 'SIGSTOP', { beforeMs: 150, afterMs: 400 });
    expect(stream).toMatchObject({ ending: 'stall' });
    expect(stream!.unanswered).toBeGreaterThan(0);
  });

  it('counts a message the backend held past every round trip and then closed on with 1001 as unanswered, not crossed', async () => {
    // A backend that stops echoing, then closes 1001 well after the last message reached it.
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    let received = 0;
    server.on('connection', (ws) => {
      ws.on('message', (data) => {
        if (++received <= 10) ws.send(data, { binary: false });
        else if (received === 11) setTimeout(() => ws.close(1001), 400);
      });
    });
    try {
      const recorder = new Recorder();
      const load = startWebSocketLoad('ws', { ...SPEC, streams: 1, ratePerStream: 100, stallMs: 2000 }, { host: '127.0.0.1', port: (server.address() as AddressInfo).port }, recorder);
      await delay(800);
      await load.stop();
      const [stream] = recorder.timeline.streams ?? [];
      expect(stream).toMatchObject({ ending: 'closed', closeCode: 1001, echoed: 10 });
      // Sent within one round trip of the close: those crossed it; the rest the backend had and dropped.
      expect(stream!.unanswered).toBeGreaterThan(0);
      expect(stream!.unanswered + (stream!.crossed ?? 0)).toBe(stream!.sent - 10);
    } finally {
      server.close();
    }
  });

  it('lets a stream still connecting when the load stops finish its handshake and close with 1000 (stopped), and fails one whose handshake never finishes', async () => {
    // A gateway that answers the upgrade late, and one that never answers it.
    for (const [answerAfterMs, ending] of [[150, 'stopped'], [undefined, 'eof']] as const) {
      const server = new WebSocketServer({ noServer: true });
      const http = createServer();
      http.on('upgrade', (req, socket, head) => {
        if (answerAfterMs === undefined) return;
        setTimeout(() => server.handleUpgrade(req, socket, head, (ws) => ws.on('message', (d) => ws.send(d, { binary: false }))), answerAfterMs);
      });
      http.listen(0, '127.0.0.1');
      await once(http, 'listening');
      try {
        const recorder = new Recorder();
        const load = startWebSocketLoad('ws', { ...SPEC, streams: 1, stallMs: 400 }, { host: '127.0.0.1', port: (http.address() as AddressInfo).port }, recorder);
        await delay(50);
        await load.stop();
        const [stream] = recorder.timeline.streams ?? [];
        expect(stream, `upgrade answered after ${answerAfterMs} ms`).toMatchObject({ ending, sent: 0, unanswered: 0 });
        if (ending === 'stopped') expect(stream!.closeCode).toBe(1000);
        else expect(stream!.error).toMatch(/handshake/i);
      } finally {
        http.closeAllConnections();
        http.close();
        server.close();
      }
    }
  });

  it('talks to a reference app that echoes every frame length unchanged, fragmented or not, and answers a ping', async () => {
    const app = await startApp('graceful');
    const ws = new WebSocket(`ws://127.0.0.1:${app.port}/echo`, { perMessageDeflate: false });
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const echoes: Buffer[] = [];
    ws.on('message', (data) => echoes.push(Buffer.from(data as Buffer)));
    const pong = new Promise((resolve) => ws.once('pong', resolve));
    const messages = [Buffer.alloc(5, 'a'), Buffer.alloc(300, 'b'), Buffer.alloc(70_000, 'c')];
    for (const m of messages) ws.send(m, { binary: true });
    ws.send('fr', { fin: false });
    ws.send('agment', { fin: true });
    ws.ping();
    await pong;
    await vi.waitFor(() => expect(echoes).toHaveLength(4));
    expect(echoes.map((e) => e.length)).toEqual([5, 300, 70_000, 8]);
    expect(echoes[3]!.toString()).toBe('fragment');
    ws.close(1000);
    const [code] = (await once(ws, 'close')) as [number];
    expect(code).toBe(1000);
  });
});
