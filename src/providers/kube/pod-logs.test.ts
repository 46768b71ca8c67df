// Following a pod's log through quiet stretches: a log stream that says nothing for longer than the
// HTTP client's body timeout (undici's default: 300 s) must stay open, or a long drain's `sigterm`
// line is never seen. The client's pool gets a 1 s body timeout here, so that 3.5 s of silence is enough.

import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { Recorder } from '../../observe/recorder.ts';
import { KubeClient } from './client.ts';
import { PodLogs, timestampNanos } from './pod-logs.ts';

const LOG = '/api/v1/namespaces/ns/pods/backend-1/log';

describe('a followed pod log', () => {
  it('outlives a silence longer than the client body timeout, and still sees the sigterm line', async () => {
    const open: ServerResponse[] = [];
    const server = createServer((req, res) => {
      if (!req.url?.startsWith(LOG)) return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('2026-01-01T00:00:01.000000001Z {"ev":"listening"}\n');
      open.push(res);
      // Silent for 3 body timeouts, as a backend is between its start and its SIGTERM.
      setTimeout(() => res.write("2026-01-01T00:10:00.000000001Z {\"ev\":\"sigterm\"}\n"), 3500);
      setTimeout(() => res.end(), 3600);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      // The client's pool with a 1 s body timeout instead of undici's 300 s.
      const client = KubeClient.forServer(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, { dispatcher: new Agent({ bodyTimeout: 1000 }) });
      const recorder = new Recorder();
      const stop = new AbortController();
      const logs = new PodLogs(client, 'ns', recorder, stop.signal);
      logs.follow('backend-1', 'backend');
      await logs.stopped();
      const events = recorder.timeline.events.map((e) => [e.kind, e.message ?? '']);
      expect(events).toEqual([['sigterm', '']]);
      expect(recorder.timeline.podOutput['backend-1']?.map((l) => l.line)).toEqual(['{"ev":"listening"}', '{"ev":"sigterm"}']);
    } finally {
      for (const res of open) res.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('is resumed from the last timestamp when the stream breaks, without repeating a line, and the Timeline says so', async () => {
    const asked: string[] = [];
    const server = createServer((req, res) => {
      asked.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'text/plain' });
      if (asked.length === 1) {
        res.write('2026-01-01T00:00:01.5Z {"ev":"listening"}\n2026-01-01T00:00:02.25Z one\n');
        // A proxy cutting the long response: the connection dies mid-stream.
        setTimeout(() => res.socket?.destroy(), 50);
        return;
      }
      // A server that keeps only whole seconds of sinceTime repeats what came after 00:00:02.
      res.end('2026-01-01T00:00:02.25Z one\n2026-01-01T00:00:03.000000001Z {"ev":"sigterm"}\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const client = KubeClient.forServer(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
      const recorder = new Recorder();
      const logs = new PodLogs(client, 'ns', recorder, new AbortController().signal);
      logs.follow('backend-1', 'backend');
      await logs.stopped();
      expect(asked).toHaveLength(2);
      expect(new URL(asked[1] ?? '', 'http://x').searchParams.get('sinceTime')).toBe('2026-01-01T00:00:02.25Z');
      expect(recorder.timeline.podOutput['backend-1']?.map((l) => l.line)).toEqual(['{"ev":"listening"}', 'one', '{"ev":"sigterm"}']);
      expect(recorder.timeline.events.map((e) => e.kind)).toEqual(['note', 'sigterm']);
      expect(recorder.timeline.events[0]?.message).toMatch(/^log of backend-1 resumed from 2026-01-01T00:00:02\.25Z after: /);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('orders RFC3339Nano timestamps whose trailing zeros the kubelet trims', () => {
    expect(timestampNanos('2026-01-01T00:00:02.25Z')! > timestampNanos('2026-01-01T00:00:02.125Z')!).toBe(true);
    expect(timestampNanos('2026-01-01T00:00:02Z')).toBe(timestampNanos('2026-01-01T00:00:02.000000000Z'));
    expect(timestampNanos('not a time')).toBeUndefined();
  });
});
