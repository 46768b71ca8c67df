// The `iperf3` driver: a UDP packet load sent by iperf3 (Debian's iperf3) instead of the built-in
// flow generator, its loss read from the JSON report and written as FlowRecords, so that
// noLostPackets judges it like any packet load.
//
// What it needs and covers: iperf3 has a TCP control connection beside its UDP data, to the same
// address and port, and the far side must be an iperf3 server (`iperf3 -s`), which receives and
// counts but echoes nothing. So the target Service must carry the same port for TCP and UDP to
// iperf3 server pods (the local Service load balancer does both). What is compared with the
// built-in generator is the per-stream count of packets that did not arrive, as iperf3's server
// saw it (`end.sum.lost_packets` of `end.sum.packets`, per stream `end.streams[].udp`): not
// which packets, nor when. The driver spreads a stream's losses over its whole send time, so the
// phase a loss is told against is rough. When iperf3 reports an error instead (the server went
// away, the control connection broke), the server's count never arrived: every packet of the test
// is counted as unconfirmed, which fails the verdict, and the error is noted on the Timeline.
//
// Report fields as iperf 3.12 prints them with --json (captured in testdata/).

import type { UdpLoadSpec } from '../../model/load.ts';
import type { FlowRecord } from '../../model/timeline.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { LeftoverTracker } from '../../state/run-record.ts';
import type { LoadTarget } from '../http.ts';
import type { PacketLoadSummary } from '../udp.ts';
import { startClientGroup } from './client-group.ts';

export function iperf3Args(spec: UdpLoadSpec, target: LoadTarget): string[] {
  return [
    '-u',
    '-c', target.host,
    '-p', String(target.port),
    // -b is per stream (-P), in bits per second of UDP payload.
    '-b', String(spec.ratePerFlow * spec.payloadBytes * 8),
    '-l', String(spec.payloadBytes),
    // -t takes whole seconds.
    '-t', String(Math.max(1, Math.ceil(spec.durationMs / 1000))),
    '-P', String(spec.flows),
    '--connect-timeout', '3000',
    '--json',
  ];
}

export interface Iperf3Stream {
  localPort?: number;
  packets: number;
  lost: number;
  outOfOrder: number;
  seconds: number;
}

export interface Iperf3Report {
  streams: Iperf3Stream[];
  /** end.sum: packets sent, and lost as the server counted. */
  packets: number;
  lost: number;
  /** iperf3's own error, when the test did not complete. */
  error?: string;
}

type Json = Record<string, unknown>;
const obj = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {});
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** Parses iperf3 --json output of a UDP client. Throws when it is not JSON. */
export function parseIperf3Json(text: string): Iperf3Report {
  const doc = obj(JSON.parse(text));
  const end = obj(doc['end']);
  const sum = obj(end['sum']);
  const connected = Array.isArray(obj(doc['start'])['connected']) ? (obj(doc['start'])['connected'] as unknown[]).map(obj) : [];
  const ports = new Map(connected.map((c) => [num(c['socket']), num(c['local_port'])]));
  const streams = (Array.isArray(end['streams']) ? (end['streams'] as unknown[]) : []).map((s) => {
    const udp = obj(obj(s)['udp']);
    const port = ports.get(num(udp['socket']));
    return {
      ...(port ? { localPort: port } : {}),
      packets: num(udp['packets']),
      lost: num(udp['lost_packets']),
      outOfOrder: num(udp['out_of_order']),
      seconds: num(udp['seconds']),
    };
  });
  const error = typeof doc['error'] === 'string' ? doc['error'] : undefined;
  return { streams, packets: num(sum['packets']), lost: num(sum['lost_packets']), ...(error !== undefined ? { error } : {}) };
}

export interface Iperf3LoadHandle {
  readonly id: string;
  stop(): Promise<PacketLoadSummary>;
}

/** Past its -t, how long iperf3 gets to exchange results before it is interrupted. */
const OVERRUN_MS = 10_000;

export function startIperf3Load(
  id: string,
  spec: UdpLoadSpec,
  target: LoadTarget,
  recorder: Recorder,
  /** tracker: the run's state record, where the client's process group is listed while it runs (client-group.ts). */
  opts: { signal?: AbortSignal; binary?: string; tracker?: LeftoverTracker } = {},
): Iperf3LoadHandle {
  const args = iperf3Args(spec, target);
  const binary = opts.binary ?? 'iperf3';
  recorder.event('note', {
    message: `load ${id} driven by ${[binary, ...args].join(' ')}; loss is iperf3's per-stream count, not per packet, and an iperf3 error counts every packet of the test as unconfirmed`,
    detail: { load: id, driver: 'iperf3', command: [binary, ...args] },
  });
  const startedAt = recorder.now();
  const group = startClientGroup([binary, ...args], {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.tracker ? { tracker: opts.tracker } : {}),
    interruptSignal: 'SIGINT',
    forceKillAfterMs: 3_000,
  });
  const deadline = setTimeout(() => group.interrupt(), Math.ceil(spec.durationMs / 1000) * 1000 + OVERRUN_MS);
  let summary: Promise<PacketLoadSummary> | undefined;

  const account = async (): Promise<PacketLoadSummary> => {
    const result = await group.result;
    clearTimeout(deadline);
    const stoppedAt = recorder.now();
    let report: Iperf3Report;
    try {
      report = parseIperf3Json(result.stdout);
    } catch {
      report = { streams: [], packets: 0, lost: 0, error: `no JSON report (exit ${result.exitCode ?? result.signal ?? '?'}): ${result.stderr.slice(0, 300)}` };
    }
    const failed = report.error !== undefined;
    if (failed) recorder.event('note', { message: `load ${id}: iperf3 reported "${report.error}"; the server's count never arrived, every packet sent is unconfirmed`, detail: { load: id } });
    // An error with no stream at all (refused at once) is still one flow that lost what it meant to send.
    const streams: Iperf3Stream[] = report.streams.length > 0 ? report.streams : [{ packets: failed ? Math.max(1, report.packets) : 0, lost: 0, outOfOrder: 0, seconds: 0 }];
    const flows: FlowRecord[] = streams.map((s, i) => {
      const lost = failed ? Math.max(s.packets, 1) : s.lost;
      const end = s.seconds > 0 ? startedAt + s.seconds * 1000 : stoppedAt;
      return {
        load: id,
        flow: i + 1,
        ...(s.localPort ? { localPort: s.localPort } : {}),
        start: startedAt,
        end,
        sent: Math.max(s.packets, lost),
        received: Math.max(0, s.packets - lost),
        lost,
        duplicated: 0,
        reordered: s.outOfOrder,
        late: 0,
        pods: [],
        losses: lost > 0 ? [{ from: 0, to: lost - 1, firstSentAt: startedAt, lastSentAt: end }] : [],
      };
    });
    for (const f of flows) recorder.flow(f);
    const sent = flows.reduce((n, f) => n + f.sent, 0);
    const sendMs = Math.max(...streams.map((s) => s.seconds * 1000), 0);
    return {
      load: id,
      mode: 'udp',
      flows: flows.length,
      sent,
      received: flows.reduce((n, f) => n + f.received, 0),
      lost: flows.reduce((n, f) => n + f.lost, 0),
      duplicated: 0,
      reordered: flows.reduce((n, f) => n + f.reordered, 0),
      late: 0,
      startedAt,
      stoppedAt,
      targetRate: spec.flows * spec.ratePerFlow,
      ...(sendMs > 0 ? { achievedRate: (sent * 1000) / sendMs } : {}),
    };
  };

  return {
    id,
    stop() {
      summary ??= account();
      return summary;
    },
  };
}
