import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { afterEach, beforeEach, describe, expect, it } from 'vitest';

import { ContainerLog, formatNanos, parseTimestamp } from './container-log.ts';
import { handleLogRequest, parseLogQuery } from './log-server.ts';

const S = 1_000_000_000n;
const T0 = parseTimestamp('2026-01-01T00:00:00Z')!;

describe('timestamps', () => {
  it('formats RFC3339Nano with trailing zeros trimmed, and parses it back', () => {
    expect(formatNanos(T0 + 1n * S + 123_456_789n)).toBe('2026-01-01T00:00:01.123456789Z');
    expect(formatNanos(T0 + 500_000_000n)).toBe('2026-01-01T00:00:00.5Z');
    expect(formatNanos(T0)).toBe('2026-01-01T00:00:00Z');
    expect(parseTimestamp('2026-01-01T00:00:01.123456789Z')).toBe(T0 + S + 123_456_789n);
    expect(parseTimestamp('2026-01-01T01:00:00+01:00')).toBe(T0);
  });
});

describe('parseLogQuery', () => {
  it('reads PodLogOptions and refuses bad values', () => {
    const now = T0 + 100n * S;
    expect(parseLogQuery(new URLSearchParams('follow=true&timestamps=1&tailLines=5&limitBytes=10&sinceSeconds=10'), now)).toEqual({
      follow: true,
      timestamps: true,
      previous: false,
      tailLines: 5,
      limitBytes: 10,
      since: T0 + 90n * S,
    });
    expect(parseLogQuery(new URLSearchParams('sinceTime=2026-01-01T00:00:03Z'), now)).toMatchObject({ since: T0 + 3n * S });
    expect(parseLogQuery(new URLSearchParams('tailLines=-1'), now)).toMatch(/tailLines/);
    expect(parseLogQuery(new URLSearchParams('sinceTime=2026-01-01T00:00:03Z&sinceSeconds=3'), now)).toMatch(/at most one/);
  });
});

describe('GET /containerLogs', () => {
  let dir: string;
  let server: http.Server;
  let base: string;
  let log: ContainerLog;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'zd-logs-'));
    log = new ContainerLog(path.join(dir, 'main'));
    server = http.createServer((req, res) => handleLogRequest(req, res, (ns, pod, c) => (ns === 'n' && pod === 'p' && c === 'main' ? log : `pod "${pod}" not found`), () => T0 + 100n * S));
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterEach(() => {
    server.closeAllConnections();
    server.close();
    log.remove();
    rmSync(dir, { recursive: true, force: true });
  });

  const get = async (p: string) => {
    const r = await fetch(base + p);
    return { status: r.status, text: await r.text() };
  };

  it('serves the current log with tailLines, sinceTime, timestamps, limitBytes; previous after a restart', async () => {
    log.begin(0);
    for (let i = 1; i <= 5; i++) log.write(i % 2 ? 'stdout' : 'stderr', `line ${i}`, T0 + BigInt(i) * S);
    expect(await get('/containerLogs/n/p/main')).toEqual({ status: 200, text: 'line 1\nline 2\nline 3\nline 4\nline 5\n' });
    expect((await get('/containerLogs/n/p/main?tailLines=2')).text).toBe('line 4\nline 5\n');
    expect((await get('/containerLogs/n/p/main?sinceTime=2026-01-01T00:00:04Z&timestamps=true')).text).toBe('2026-01-01T00:00:04Z line 4\n2026-01-01T00:00:05Z line 5\n');
    expect((await get('/containerLogs/n/p/main?limitBytes=9')).text).toBe('line 1\nli');
    expect((await get('/containerLogs/n/p/main?previous=true')).status).toBe(400);
    log.end();
    log.begin(1);
    log.write('stdout', 'second run', T0 + 10n * S);
    expect((await get('/containerLogs/n/p/main')).text).toBe('second run\n');
    expect((await get('/containerLogs/n/p/main?previous=true')).text).toContain('line 5\n');
    expect((await get('/containerLogs/n/q/main')).status).toBe(404);
    expect((await get('/healthz')).text).toBe('ok');
  });

  it('follow streams new lines until the container exits', async () => {
    log.begin(0);
    log.write('stdout', 'before', T0 + S);
    const response = await fetch(`${base}/containerLogs/n/p/main?follow=true&timestamps=true`);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const first = await reader.read();
    text += decoder.decode(first.value);
    log.write('stdout', 'after', T0 + 2n * S);
    setTimeout(() => log.end(), 50);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
    }
    expect(text).toBe('2026-01-01T00:00:01Z before\n2026-01-01T00:00:02Z after\n');
  });
});
