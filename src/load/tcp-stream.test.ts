// The TCP stream generator against the reference stream echo (fixtures/reference-stream-echo.mjs) as
// a real process: how a stream ends is recorded as what happened on the wire.

import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { TcpStreamLoadSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import { killFixtureApps, startFixtureApp, streamsAcross } from '../../test-support/fixture-app.ts';
import { startTcpStreamLoad } from './tcp-stream.ts';

afterEach(killFixtureApps);

const startEcho = (mode: string) => startFixtureApp('reference-stream-echo.mjs', mode, { STREAM_CLOSE_AFTER_MS: '100', DRAIN_IDLE_MS: '50' });

const SPEC: TcpStreamLoadSpec = { kind: 'tcp-stream', service: 'echo', streams: 2, ratePerStream: 100, stallMs: 500, reopen: false };

describe('startTcpStreamLoad', () => {
  it('records a stream stopped by the load with every message echoed, and the serving pod', async () => {
    const echo = await startEcho('graceful');
    const recorder = new Recorder();
    const load = startTcpStreamLoad('s', SPEC, { host: '127.0.0.1', port: echo.port }, recorder);
    await delay(300);
    const summary = await load.stop();
    const streams = recorder.timeline.streams ?? [];
    expect(streams).toHaveLength(2);
    for (const s of streams) expect(s).toMatchObject({ ending: 'stopped', pod: 'app-graceful', unanswered: 0, mismatched: 0 });
    expect(summary.sent).toBe(summary.completed);
    expect(summary.sent).toBeGreaterThan(40);
  });

  it('records a graceful close when the echo drains: bye, every message echoed, then FIN', async () => {
    const echo = await startEcho('graceful');
    const streams = await streamsAcross(echo, (target, recorder) => startTcpStreamLoad('s', SPEC, target, recorder), 'SIGTERM', { beforeMs: 200, afterMs: 0 });
    expect(streams).toHaveLength(2);
    for (const s of streams) {
      expect(s).toMatchObject({ ending: 'closed', unanswered: 0 });
      expect(s.byeAt).toBeDefined();
      expect(s.echoed).toBe(s.sent);
    }
  });

  it('records an unannounced close when the echo dies at SIGTERM, and opens no replacement for a broken stream', async () => {
    const echo = await startEcho('exit-on-sigterm');
    const streams = await streamsAcross(echo, (target, recorder) => startTcpStreamLoad('s', { ...SPEC, reopen: true }, target, recorder), 'SIGTERM', { beforeMs: 200, afterMs: 50 });
    // FIN, or RST when the kernel closed the socket with a message still unread in its buffer.
    expect(streams).toHaveLength(2);
    for (const s of streams) {
      expect(['eof', 'reset']).toContain(s.ending);
      expect(s.byeAt).toBeUndefined();
    }
  });

  it('records a stall when the peer stops echoing', async () => {
    const echo = await startEcho('hang-until-killed');
    const [stream] = await streamsAcross(echo, (target, recorder) => startTcpStreamLoad('s', { ...SPEC, streams: 1, stallMs: 200 }, target, recorder), 'SIGSTOP', { beforeMs: 150, afterMs: 400 });
    expect(stream).toMatchObject({ ending: 'stall' });
    expect(stream!.unanswered).toBeGreaterThan(0);
  });
});
