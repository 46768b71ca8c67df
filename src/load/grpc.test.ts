// The gRPC generator against the reference gRPC server (fixtures/reference-grpc.mjs) as a real
// process: each call's status, pod, connection and the GOAWAY it saw are what happened on the wire.

import { setTimeout as delay } from 'node:timers/promises';
import { status } from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { killFixtureApps, startFixtureApp, type FixtureApp } from '../../test-support/fixture-app.ts';
import type { GrpcLoadSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import { grpcOutcome, startGrpcLoad } from './grpc.ts';

afterEach(killFixtureApps);

function startServer(mode: string, env: Record<string, string> = {}): Promise<FixtureApp> {
  return startFixtureApp('reference-grpc.mjs', mode, { POD_NAME: `grpc-${mode}`, STREAM_END_AFTER_MS: '100', DRAIN_IDLE_MS: '50', ...env });
}

const SPEC: GrpcLoadSpec = {
  kind: 'grpc',
  service: 'backend',
  channels: 2,
  unaryRatePerChannel: 20,
  unaryMs: 10,
  streams: 2,
  messagesPerStream: 1000,
  messageIntervalMs: 10,
  timeoutMs: 2000,
};

describe('grpcOutcome', () => {
  it('maps statuses to outcome classes', () => {
    expect(grpcOutcome(status.OK, 'OK', false)).toBe('ok');
    expect(grpcOutcome(status.DEADLINE_EXCEEDED, 'Deadline exceeded', false)).toBe('timeout');
    expect(grpcOutcome(status.UNAVAILABLE, 'No connection established. Last error: connect ECONNREFUSED 127.0.0.1:1', false)).toBe('refused');
    expect(grpcOutcome(status.UNAVAILABLE, 'Stream refused by server', true)).toBe('goaway');
    expect(grpcOutcome(status.UNAVAILABLE, 'Connection dropped', false)).toBe('reset');
    expect(grpcOutcome(status.INTERNAL, 'Failed to start HTTP/2 stream', false)).toBe('error');
  });
});

describe('startGrpcLoad', () => {
  it('records unary calls and streams with their pod and connection, and streams ended by the load as stopped', async () => {
    const server = await startServer('graceful');
    const recorder = new Recorder();
    const load = startGrpcLoad('grpc', SPEC, { host: '127.0.0.1', port: server.port }, recorder);
    await delay(300);
    const summary = await load.stop();
    const requests = recorder.timeline.requests.toArray();
    expect(requests.length).toBeGreaterThan(5);
    for (const r of requests) expect(r).toMatchObject({ outcome: 'ok', pod: 'grpc-graceful', path: '/zerodrop.drain.v1.Drain/Unary' });
    expect(requests.every((r) => r.localPort !== undefined)).toBe(true);
    expect(summary).toMatchObject({ sent: requests.length, completed: requests.length, failed: 0 });
    const streams = recorder.timeline.streams ?? [];
    expect(streams).toHaveLength(2);
    for (const s of streams) {
      expect(s).toMatchObject({ ending: 'stopped', status: 'CANCELLED', pod: 'grpc-graceful', mismatched: 0, expected: 1000 });
      expect(s.echoed).toBe(s.sent);
      expect(s.sent).toBeGreaterThan(5);
    }
  });

  it('records GOAWAY from a draining server, and its streams ended with OK at a message boundary', async () => {
    const server = await startServer('graceful');
    const recorder = new Recorder();
    const load = startGrpcLoad('grpc', SPEC, { host: '127.0.0.1', port: server.port }, recorder);
    await delay(300);
    const sigterm = recorder.now();
    server.child.kill('SIGTERM');
    // The server ends its streams 100 ms after SIGTERM; it exits once idle, so the load stops first.
    await delay(300);
    await load.stop();
    await server.exited;
    const goaways = recorder.timeline.events.filter((e) => e.kind === 'goaway');
    expect(goaways.length).toBeGreaterThan(0);
    // Two per connection: the announcement, which refuses nothing, then the final one.
    expect(goaways[0]).toMatchObject({ pod: 'grpc-graceful', detail: { load: 'grpc', errorCode: 0, lastStreamId: 2 ** 31 - 1 } });
    expect(goaways.some((e) => (e.detail?.['lastStreamId'] as number) < 2 ** 31 - 1)).toBe(true);
    const drained = (recorder.timeline.streams ?? []).filter((s) => s.start < sigterm);
    expect(drained).toHaveLength(2);
    for (const s of drained) {
      expect(s).toMatchObject({ ending: 'closed', status: 'OK', mismatched: 0, unanswered: 0 });
      expect(s.sent).toBeLessThan(1000);
      expect(s.echoed).toBe(s.sent);
      expect(s.byeAt).toBeGreaterThanOrEqual(sigterm);
    }
    expect(recorder.timeline.requests.toArray().filter((r) => r.outcome !== 'ok')).toEqual([]);
  });

  it('fails no call under a graceful drain at a high rate: a call GOAWAY overtook before it was written is sent on a fresh connection', async () => {
    // Nothing but this server to reconnect to: while every channel opens its next connection no call
    // is open, and a 50 ms idle exit would shut the server down under those new connections. A pod
    // behind a Service is past its deprogramming by then; here the idle exit waits past the test.
    const server = await startServer('graceful', { DRAIN_IDLE_MS: '2000' });
    const recorder = new Recorder();
    const spec: GrpcLoadSpec = { ...SPEC, channels: 4, unaryRatePerChannel: 300, unaryMs: 0, streams: 0 };
    const load = startGrpcLoad('grpc', spec, { host: '127.0.0.1', port: server.port }, recorder);
    await delay(300);
    server.child.kill('SIGTERM');
    // Longer than the PING of the shutdown notice takes, shorter than the server's idle exit.
    await delay(30);
    await load.stop();
    const requests = recorder.timeline.requests.toArray();
    expect(requests.length).toBeGreaterThan(100);
    expect(requests.filter((r) => r.outcome !== 'ok')).toEqual([]);
    // Every note of a call sent again names a connection that received GOAWAY.
    const goawayPorts = new Set(recorder.timeline.events.filter((e) => e.kind === 'goaway').map((e) => e.detail?.['localPort']));
    for (const note of recorder.timeline.events.filter((e) => e.kind === 'note' && e.detail?.['unsent'])) expect(goawayPorts).toContain(note.detail?.['localPort']);
  });

  it('records streams cut by a server that dies at SIGTERM as UNAVAILABLE, with the messages they were owed', async () => {
    const server = await startServer('exit-on-sigterm');
    const recorder = new Recorder();
    const load = startGrpcLoad('grpc', SPEC, { host: '127.0.0.1', port: server.port }, recorder);
    await delay(300);
    const sigterm = recorder.now();
    server.child.kill('SIGTERM');
    await server.exited;
    await delay(50);
    await load.stop();
    expect(recorder.timeline.events.filter((e) => e.kind === 'goaway')).toEqual([]);
    const cut = (recorder.timeline.streams ?? []).filter((s) => s.start < sigterm);
    expect(cut).toHaveLength(2);
    for (const s of cut) {
      expect(s).toMatchObject({ ending: 'reset', status: 'UNAVAILABLE' });
      expect(s.unanswered).toBe(1000 - s.sent);
      expect(s.byeAt).toBeUndefined();
    }
  });
});
