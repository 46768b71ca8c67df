// The Server-Sent Events generator against the reference stream app (fixtures/reference-stream-app.mjs)
// as a real process: how a body ended, the retry hint and resuming from Last-Event-ID.

import { setTimeout as delay } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import type { SseLoadSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import { killFixtureApps, startFixtureApp, streamsAcross } from '../../test-support/fixture-app.ts';
import { startSseLoad } from './sse.ts';

afterEach(killFixtureApps);

const startApp = (mode: string, env: Record<string, string> = {}) =>
  startFixtureApp('reference-stream-app.mjs', mode, { STREAM_CLOSE_AFTER_MS: '100', DRAIN_IDLE_MS: '50', ...env });
const SPEC: SseLoadSpec = { kind: 'sse', service: 'app', streams: 2, ratePerStream: 100, stallMs: 500, reopen: false };

describe('startSseLoad', () => {
  it('records streams stopped by the load with every event in order, and the serving pod', async () => {
    const app = await startApp('graceful');
    const recorder = new Recorder();
    const load = startSseLoad('sse', SPEC, { host: '127.0.0.1', port: app.port }, recorder);
    await delay(300);
    const summary = await load.stop();
    const streams = recorder.timeline.streams ?? [];
    expect(streams).toHaveLength(2);
    for (const s of streams) expect(s).toMatchObject({ kind: 'sse', ending: 'stopped', pod: 'app-graceful', lost: 0, duplicated: 0, mismatched: 0 });
    expect(summary.completed).toBeGreaterThan(40);
    expect(summary.achievedRate).toBeGreaterThan(100);
  });

  it('bounded streams: the client closes each once its events have arrived, and a new one, from the first event, takes its place', async () => {
    const app = await startApp('graceful');
    const recorder = new Recorder();
    const load = startSseLoad('sse', { ...SPEC, messagesPerStream: 10 }, { host: '127.0.0.1', port: app.port }, recorder);
    await delay(450);
    await load.stop();
    const complete = (recorder.timeline.streams ?? []).filter((s) => s.echoed === 10);
    expect(complete.length).toBeGreaterThanOrEqual(4);
    for (const s of complete) expect(s).toMatchObject({ ending: 'stopped', sent: 10, lost: 0, duplicated: 0, service: 'app' });
    expect(complete.every((s) => s.resumedFrom === undefined)).toBe(true);
  });

  it('records a clean end with its retry hint, and resumes from Last-Event-ID on another pod without a gap', async () => {
    const first = await startApp('graceful', { SSE_RETRY_MS: '150' });
    const second = await startApp('graceful');
    // The balancer in miniature: the first pod until it drains, then the second.
    const target = { host: '127.0.0.1', port: first.port };
    const recorder = new Recorder();
    const load = startSseLoad('sse', { ...SPEC, streams: 1, reopen: true }, target, recorder);
    await delay(200);
    first.child.kill('SIGTERM');
    target.port = second.port;
    await first.exited;
    await delay(300);
    await load.stop();
    const [closed, resumed] = recorder.timeline.streams ?? [];
    expect(closed).toMatchObject({ ending: 'closed', retryMs: 150, pod: 'app-graceful', lost: 0, duplicated: 0 });
    expect(resumed).toMatchObject({ ending: 'stopped', resumedFrom: String(closed!.echoed), lost: 0, duplicated: 0 });
    expect(resumed!.start - closed!.end).toBeGreaterThanOrEqual(140);
    expect(resumed!.echoed).toBeGreaterThan(10);
  });

  it('records a body cut short (eof) when the app dies at SIGTERM, and opens no replacement', async () => {
    const app = await startApp('exit-on-sigterm');
    const streams = await streamsAcross(app, (target, recorder) => startSseLoad('sse', { ...SPEC, reopen: true }, target, recorder), 'SIGTERM', { beforeMs: 200, afterMs: 50 });
    expect(streams).toHaveLength(2);
    for (const s of streams) {
      expect(['eof', 'reset']).toContain(s.ending);
      expect(s.byeAt).toBeUndefined();
    }
  });

  it('records a stall when events stop coming', async () => {
    const app = await startApp('hang-until-killed');
    const [stream] = await streamsAcross(app, (target, recorder) => startSseLoad('sse', { ...SPEC, streams: 1, stallMs: 200 }, target, recorder), 'SIGSTOP', { beforeMs: 150, afterMs: 400 });
    expect(stream).toMatchObject({ ending: 'stall' });
  });
});
