import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { HttpLoadSpec } from '../../model/load.ts';
import { Recorder } from '../../observe/recorder.ts';
import { onPath } from '../../profiles/requirements.ts';
import { groupAlive } from '../../providers/local/processes.ts';
import { readProcStat } from '../../state/proc-stat.ts';
import { readRunRecords, RunRecordFile } from '../../state/run-record.ts';
import { heyArgs, heyPlan, parseHeyCsv, placeMissing, startHeyLoad } from './hey.ts';

const capture = (name: string) => readFileSync(new URL(`testdata/${name}`, import.meta.url), 'utf8');

const spec: HttpLoadSpec = { kind: 'http', service: 'gateway', path: '/', keepAlive: true, mode: 'closed', connections: 2, ratePerWorker: 20, timeoutMs: 5_000 };

describe('heyPlan and heyArgs', () => {
  it('map a paced closed load to a fixed count covering the planned time', () => {
    const plan = heyPlan(spec, { host: '127.1.2.3', port: 8080 }, 3_000);
    expect(plan).toMatchObject({ workers: 2, qps: 20, perWorker: 60, timeoutS: 5, url: 'http://127.1.2.3:8080/' });
    expect(heyArgs(plan)).toEqual(['-n', '120', '-c', '2', '-q', '20', '-t', '5', '-o', 'csv', '-disable-redirects', 'http://127.1.2.3:8080/']);
  });

  it('split an open load evenly over its connections, and disable keep-alive when the spec does', () => {
    const plan = heyPlan({ ...spec, mode: 'open', rate: 100, connections: 10, keepAlive: false }, { host: '127.0.0.1', port: 1 }, 1_000);
    expect(plan).toMatchObject({ workers: 10, qps: 10, perWorker: 10 });
    expect(heyArgs(plan)).toContain('-disable-keepalive');
  });

  it('send a POST of postBytes with -m POST -d', () => {
    const args = heyArgs(heyPlan({ ...spec, postBytes: 8 }, { host: '127.0.0.1', port: 1 }, 1_000));
    expect(args.slice(-7)).toEqual(['-m', 'POST', '-T', 'text/plain', '-d', 'xxxxxxxx', 'http://127.0.0.1:1/']);
  });
});

describe('parseHeyCsv on captured hey 0.1.4 output', () => {
  it('reads one row per answered request, with status and offset', () => {
    const rows = parseHeyCsv(capture('hey-n20-no-keepalive-eof.csv'));
    expect(rows).toHaveLength(16);
    expect(rows.filter((r) => r.status === 503)).toHaveLength(2);
    expect(rows.every((r) => r.offsetS > 0 && r.responseTimeS > 0 && r.dialS > 0)).toBe(true);
  });

  it('has no row for a failed request: 20 sent, 16 rows, and the summary of the same run counts 4 EOF', () => {
    // The missing rows are exactly the failures hey only summarises in its error distribution.
    expect(capture('hey-n20-no-keepalive-eof-summary.txt')).toMatch(/Error distribution:\s+\[4\]\s+Get "http:\/\/127\.0\.0\.1:\d+\/": EOF/);
    expect(20 - parseHeyCsv(capture('hey-n20-no-keepalive-eof.csv')).length).toBe(4);
  });

  it("shows Go's resend on a reused keep-alive connection: 20 rows, although 4 sockets were destroyed", () => {
    expect(parseHeyCsv(capture('hey-n20-keepalive-retried.csv'))).toHaveLength(20);
  });

  it('rejects output that is not hey CSV', () => {
    expect(() => parseHeyCsv('Summary:\n  Total: 1 secs')).toThrow(/unexpected header/);
    expect(() => parseHeyCsv(`${capture('hey-n20-no-keepalive-eof.csv')}\n1,2,3`)).toThrow(/not 8 numbers/);
  });
});

describe('placeMissing', () => {
  it('puts each missing request on the first pacing tick that is short of a row', () => {
    const row = (offsetS: number) => ({ responseTimeS: 0.001, dialS: 0, status: 200, offsetS });
    // 2 workers at 10/s: ticks at 0.1, 0.2, 0.3; tick 2 has one row only.
    const rows = [row(0.101), row(0.102), row(0.201), row(0.301), row(0.302)];
    expect(placeMissing(rows, { workers: 2, qps: 10, perWorker: 3 }, 1)).toEqual([0.2]);
  });

  it('leaves the times unknown when short ticks do not account for the missing rows (hey fell behind)', () => {
    const row = (offsetS: number) => ({ responseTimeS: 0.001, dialS: 0, status: 200, offsetS });
    const rows = [row(0.101), row(0.102), row(0.201), row(0.301), row(0.302)];
    expect(placeMissing(rows, { workers: 2, qps: 10, perWorker: 3 }, 2)).toEqual([undefined, undefined]);
    expect(placeMissing([row(0.101), row(0.35)], { workers: 2, qps: 10, perWorker: 3 }, 1)).toEqual([undefined]);
  });
});

describe.skipIf(!onPath('hey'))('startHeyLoad against a server that drops every 5th connection', () => {
  it('records every answered request and counts the requests hey left out of its CSV as failed', async () => {
    let n = 0;
    const server = http.createServer((req, res) => {
      n++;
      if (n % 5 === 0) return req.socket.destroy();
      res.writeHead(n % 7 === 0 ? 503 : 200).end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const recorder = new Recorder();
      const port = (server.address() as AddressInfo).port;
      // 2 workers x 10 requests (0.5 s at 20/s); no keep-alive, so no request is resent by Go.
      const load = startHeyLoad('http', { ...spec, keepAlive: false }, { host: '127.0.0.1', port }, recorder, { plannedMs: 500 });
      const summary = await load.stop();
      const requests = recorder.timeline.requests;
      expect(n).toBe(20);
      expect(summary).toMatchObject({ driver: 'hey', sent: 20, missingRows: 4, failed: 4 + requests.filter((r) => r.status === 503).length });
      expect(requests).toHaveLength(20);
      expect(requests.filter((r) => r.outcome === 'error')).toHaveLength(4);
      for (const r of requests.filter((q) => q.outcome === 'error')) expect(r.error).toMatch(/missing from its CSV \(20 sent, 16 rows\)/);
      // On the harness clock, within the load's lifetime.
      for (const r of requests) {
        expect(r.start).toBeGreaterThanOrEqual(summary.startedAt);
        expect(r.end).toBeLessThanOrEqual(summary.stoppedAt + 1);
      }
      expect(recorder.timeline.events.some((e) => e.kind === 'note' && /hey -n 20 -c 2 -q 20/.test(e.message ?? ''))).toBe(true);
    } finally {
      server.close();
    }
  });
});

describe.skipIf(!onPath('hey'))('startHeyLoad as a process group of the run', () => {
  it('leads its own group, listed in the run record while it runs; an abort ends the group and takes it off', async () => {
    const server = http.createServer((_req, res) => res.end('ok'));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const dir = mkdtempSync(join(tmpdir(), 'zerodrop-hey-record-test-'));
    const file = RunRecordFile.create(dir);
    const groups = () => readRunRecords(dir).records.flatMap((r) => r.record.groups.map((g) => g.pid));
    try {
      const controller = new AbortController();
      const recorder = new Recorder();
      const port = (server.address() as AddressInfo).port;
      // Planned for 30 s: only the abort can end it within the test's bounds.
      const load = startHeyLoad('http', spec, { host: '127.0.0.1', port }, recorder, { plannedMs: 30_000, signal: controller.signal, tracker: file });
      const [pid] = groups();
      expect(pid).toBeDefined();
      // hey is the leader of its own group.
      expect(readProcStat(pid as number)).toMatchObject({ comm: 'hey', pgrp: pid });
      await new Promise((r) => setTimeout(r, 500));
      const aborted = performance.now();
      controller.abort();
      const summary = await load.stop();
      expect(performance.now() - aborted).toBeLessThan(4_000);
      expect(groupAlive(pid as number)).toBe(false);
      expect(groups()).toEqual([]);
      // Interrupted: hey still printed its CSV, and nothing was counted as missing.
      expect(summary.missingRows).toBe(0);
      expect(recorder.timeline.requests.length).toBeGreaterThan(0);
    } finally {
      file.close();
      rmSync(dir, { recursive: true, force: true });
      server.close();
    }
  });
});
