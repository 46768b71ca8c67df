import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { UdpLoadSpec } from '../../model/load.ts';
import { Recorder } from '../../observe/recorder.ts';
import { onPath } from '../../profiles/requirements.ts';
import { groupAlive } from '../../providers/local/processes.ts';
import { readProcStat } from '../../state/proc-stat.ts';
import { readRunRecords, RunRecordFile } from '../../state/run-record.ts';
import { iperf3Args, parseIperf3Json, startIperf3Load } from './iperf3.ts';

const capture = (name: string) => readFileSync(new URL(`testdata/${name}`, import.meta.url), 'utf8');

const spec: UdpLoadSpec = { kind: 'udp', service: 'backend', port: 'udp', flows: 2, ratePerFlow: 400, durationMs: 1000, payloadBytes: 64, replyTimeoutMs: 1000 };

describe('iperf3Args', () => {
  it('asks for the spec per stream: bitrate of rate x payload, datagram size, whole seconds', () => {
    expect(iperf3Args({ ...spec, durationMs: 1500 }, { host: '127.9.9.1', port: 5201 })).toEqual([
      '-u', '-c', '127.9.9.1', '-p', '5201', '-b', '204800', '-l', '64', '-t', '2', '-P', '2', '--connect-timeout', '3000', '--json',
    ]);
  });
});

describe('parseIperf3Json on captured iperf 3.12 output', () => {
  it('reads per-stream packets and loss, and the stream sockets local ports', () => {
    const report = parseIperf3Json(capture('iperf3-udp-ok.json'));
    expect(report).toMatchObject({ packets: 800, lost: 0 });
    expect(report.error).toBeUndefined();
    expect(report.streams).toHaveLength(2);
    expect(report.streams.map((s) => s.packets)).toEqual([400, 400]);
    expect(report.streams.every((s) => s.localPort !== undefined && s.seconds > 0.9)).toBe(true);
  });

  it('reads the error of a refused test', () => {
    expect(parseIperf3Json(capture('iperf3-refused.json'))).toMatchObject({ streams: [], error: 'unable to connect to server: Connection refused' });
  });

  it('reads the error of a test whose server went away, with what was sent before', () => {
    const report = parseIperf3Json(capture('iperf3-server-terminated.json'));
    expect(report.error).toBe('the server has terminated');
    expect(report.packets).toBeGreaterThan(0);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe.skipIf(!onPath('iperf3'))('startIperf3Load', () => {
  it('records one flow per stream with no loss against a local iperf3 server', async () => {
    const port = await freePort();
    const server = spawn('iperf3', ['-s', '-1', '-B', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const recorder = new Recorder();
      const summary = await startIperf3Load('udp', spec, { host: '127.0.0.1', port }, recorder).stop();
      expect(summary).toMatchObject({ mode: 'udp', flows: 2, lost: 0, targetRate: 800 });
      expect(summary.sent).toBeGreaterThanOrEqual(780);
      expect(recorder.timeline.flows?.map((f) => f.lost)).toEqual([0, 0]);
    } finally {
      server.kill('SIGTERM');
    }
  });

  it('leads its own group, listed in the run record while it runs; an abort ends the group and takes it off', async () => {
    const port = await freePort();
    const server = spawn('iperf3', ['-s', '-1', '-B', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    const dir = mkdtempSync(join(tmpdir(), 'zerodrop-iperf3-record-test-'));
    const file = RunRecordFile.create(dir);
    const groups = () => readRunRecords(dir).records.flatMap((r) => r.record.groups.map((g) => g.pid));
    try {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const controller = new AbortController();
      // 30 s of flows: only the abort can end it within the test's bounds.
      const load = startIperf3Load('udp', { ...spec, durationMs: 30_000 }, { host: '127.0.0.1', port }, new Recorder(), { signal: controller.signal, tracker: file });
      const [pid] = groups();
      expect(pid).toBeDefined();
      expect(readProcStat(pid as number)).toMatchObject({ comm: 'iperf3', pgrp: pid });
      await new Promise((resolve) => setTimeout(resolve, 500));
      const aborted = performance.now();
      controller.abort();
      await load.stop();
      expect(performance.now() - aborted).toBeLessThan(4_000);
      expect(groupAlive(pid as number)).toBe(false);
      expect(groups()).toEqual([]);
    } finally {
      file.close();
      rmSync(dir, { recursive: true, force: true });
      server.kill('SIGKILL');
    }
  });

  it('counts every packet of a failed test as lost, so the verdict cannot pass', async () => {
    const port = await freePort();
    const recorder = new Recorder();
    const summary = await startIperf3Load('udp', spec, { host: '127.0.0.1', port }, recorder).stop();
    expect(summary.lost).toBeGreaterThan(0);
    expect(recorder.timeline.flows?.[0]?.losses.length).toBe(1);
    expect(recorder.timeline.events.some((e) => e.kind === 'note' && /Connection refused/.test(e.message ?? ''))).toBe(true);
  });
});
