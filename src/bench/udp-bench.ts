// Packet rates with per-packet accounting: zerodrop's UDP flow generator (src/load/udp.ts, every
// packet sequence-numbered and its echo matched) straight to the reference UDP echo and through the
// local Service balancer, next to `iperf3 -u` at the same datagram size. Each climbs the same ladder
// of rates, a few seconds a step, until a step loses a packet or cannot be held; the figure is the
// highest step with zero loss. The target (docs/benchmarks.md): 100,000 packets/s with zero false loss.
//
// Not the same work: iperf3 sends one way and its server counts what arrived; zerodrop's packets
// are echoed, so every packet is two datagrams and a round trip, on the same cores.

import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

import { startUdpLoad, type PacketLoadSummary } from '../load/udp.ts';
import { Recorder } from '../observe/recorder.ts';
import { runUdpEchoSoak } from '../runner/udp-soak.ts';
import { REFERENCE_UDP_ECHO } from '../scenarios/udp-echo-backend.ts';
import { freePort } from './nginx.ts';
import { startServerProcess } from './server-process.ts';
import { ratioTo, type BenchRow } from './table.ts';
import { runTool, which } from './tools.ts';
import { netnsUdpLadder, netnsBenchMissing } from './netns-udp.ts';

export interface UdpBenchOptions {
  host: string;
  flows: number;
  payloadBytes: number;
  stepMs: number;
  /** Packets per second, all flows together, ascending. */
  rates: readonly number[];
  cwd: string;
  /** Stops the benchmark (Ctrl-C): the running step's load and the servers end. */
  signal: AbortSignal;
}

export interface LadderStep {
  rate: number;
  sent: number;
  lost: number;
  /** Sent rate as a fraction of the step's rate. */
  held: number;
  /** Datagrams the kernel dropped at full receive buffers on the load's and the target's sockets. */
  socketDrops?: number;
}

export interface Ladder {
  steps: LadderStep[];
  /** The highest step with zero loss that was held; undefined when even the first lost packets. */
  best?: LadderStep;
  /** The first step that lost packets or was not held. */
  failed?: LadderStep;
  /**
   * zerodrop's ladder only: the highest step held where every lost packet is one the kernel counted
   * as dropped at a full socket buffer, that is, the highest rate at which the generator reported no
   * loss that did not happen. The climb goes on past the first loss up to the first step where that
   * is not so (`inexact`).
   */
  exact?: LadderStep;
  inexact?: LadderStep;
}

/** A step counts when nothing was lost and at least this fraction of the rate was sent. */
const HELD_FRACTION = 0.95;

export function passes(s: LadderStep): boolean {
  return s.lost === 0 && s.held >= HELD_FRACTION;
}

/** Lost packets the kernel's drop counters do not account for; undefined where they could not be read. */
export function unexplainedLoss(s: LadderStep): number | undefined {
  return s.socketDrops === undefined ? undefined : Math.max(0, s.lost - s.socketDrops);
}

function exact(s: LadderStep): boolean {
  return s.held >= HELD_FRACTION && (s.lost === 0 || unexplainedLoss(s) === 0);
}

/**
 * Climbs `rates` with `measure` until a step fails. With `untilInexact`, it climbs on past the first
 * loss while every loss is a kernel drop (see Ladder.exact).
 */
export async function climb(rates: readonly number[], measure: (rate: number) => Promise<LadderStep>, signal?: AbortSignal, untilInexact = false): Promise<Ladder> {
  const ladder: Ladder = { steps: [] };
  for (const rate of rates) {
    signal?.throwIfAborted();
    const step = await measure(rate);
    // An interrupted step stopped early: it measured nothing.
    signal?.throwIfAborted();
    ladder.steps.push(step);
    const clean = ladder.failed === undefined && passes(step);
    if (clean) ladder.best = step;
    else ladder.failed ??= step;
    if (untilInexact && ladder.inexact === undefined) {
      if (exact(step)) ladder.exact = step;
      else ladder.inexact = step;
    }
    if (!clean && (!untilInexact || ladder.inexact !== undefined)) break;
  }
  return ladder;
}

function stepOf(rate: number, s: PacketLoadSummary): LadderStep {
  const step: LadderStep = { rate, sent: s.sent, lost: s.lost, held: (s.achievedRate ?? 0) / rate };
  if (s.socketDrops !== undefined) step.socketDrops = s.socketDrops;
  return step;
}

function udpSpec(o: UdpBenchOptions, rate: number) {
  return { kind: 'udp' as const, service: 'echo', flows: o.flows, ratePerFlow: rate / o.flows, durationMs: o.stepMs, payloadBytes: o.payloadBytes, replyTimeoutMs: 1000 };
}

/** The reference UDP echo as a plain process on `host`, as the local provider would start it. */
async function startEcho(host: string, cwd: string): Promise<{ port: number } & AsyncDisposable> {
  const server = startServerProcess(['node', REFERENCE_UDP_ECHO], {
    cwd,
    env: { ...process.env, POD_IP: host, PORT: '0', HEALTH_PORT: '0', POD_NAME: 'bench-echo', DRAIN_IDLE_MS: '0' },
    stopSignal: 'SIGKILL',
    readStdout: true,
  });
  const port = await new Promise<number | undefined>((resolve) => {
    const stdout = server.child.stdout;
    if (!stdout) return resolve(undefined);
    const lines = createInterface({ input: stdout });
    lines.on('line', (line) => {
      const ev = JSON.parse(line) as { ev: string; port?: number };
      if (ev.ev === 'listening') resolve(ev.port);
    });
    void server.exited.then(() => resolve(undefined));
  });
  if (port === undefined) {
    await server[Symbol.asyncDispose]();
    throw new Error('the UDP echo exited before listening');
  }
  return { port, [Symbol.asyncDispose]: () => server[Symbol.asyncDispose]() };
}

async function zerodropDirect(o: UdpBenchOptions): Promise<Ladder> {
  await using echo = await startEcho(o.host, o.cwd);
  // Awaited here: the echo is disposed when this function returns.
  return await climb(
    o.rates,
    async (rate) => {
      const recorder = new Recorder();
      const load = startUdpLoad('bench', udpSpec(o, rate), { host: o.host, port: echo.port }, recorder, { signal: o.signal });
      return stepOf(rate, await load.done);
    },
    o.signal,
    true,
  );
}

async function zerodropBalancer(o: UdpBenchOptions): Promise<Ladder> {
  return climb(
    o.rates,
    async (rate) => {
      const r = await runUdpEchoSoak({ flows: o.flows, ratePerFlow: rate / o.flows, durationMs: o.stepMs, payloadBytes: o.payloadBytes, signal: o.signal });
      return stepOf(rate, r.summary);
    },
    o.signal,
  );
}

interface IperfEnd {
  end?: { sum?: { packets?: number; lost_packets?: number; seconds?: number } };
  error?: string;
}

async function iperf3(o: UdpBenchOptions): Promise<Ladder> {
  const port = await freePort(o.host);
  await using _server = startServerProcess(['iperf3', '-s', '-B', o.host, '-p', String(port)], { cwd: o.cwd, stopSignal: 'SIGTERM' });
  await sleep(300, undefined, { signal: o.signal });
  const seconds = Math.max(1, Math.round(o.stepMs / 1000));
  // Awaited here: the server is disposed when this function returns.
  return await climb(
    o.rates,
    async (rate) => {
      const bits = rate * o.payloadBytes * 8;
      const r = await runTool('iperf3', ['-u', '-c', o.host, '-p', String(port), '-l', String(o.payloadBytes), '-w', '4M', '-b', String(bits), '-t', String(seconds), '--json'], o.stepMs + 20_000, o.signal);
      const json = JSON.parse(r.stdout) as IperfEnd;
      if (json.error !== undefined) throw new Error(`iperf3: ${json.error}`);
      const sent = json.end?.sum?.packets ?? 0;
      const lost = json.end?.sum?.lost_packets ?? sent;
      const secs = json.end?.sum?.seconds ?? seconds;
      return { rate, sent, lost, held: sent / secs / rate };
    },
    o.signal,
  );
}

function ladderRow(tool: string, target: string, flows: number, ladder: Ladder | undefined, status: BenchRow['status'], note?: string): BenchRow {
  const row: BenchRow = { bench: 'udp', tool, target, connections: flows, unit: 'pkt/s', status };
  if (ladder?.best) row.value = ladder.best.rate;
  if (ladder) {
    const f = ladder.failed;
    row.loss = f ? `${ladder.best ? '0 lost; ' : ''}${f.lost.toLocaleString('en-US')} lost at ${f.rate.toLocaleString('en-US')}/s${f.held < HELD_FRACTION ? ' (not held)' : ''}` : '0 lost at every step';
  }
  if (note !== undefined) row.note = note;
  return row;
}

/** The row of the target (docs/benchmarks.md): the highest rate at which every loss zerodrop reported was real. */
function exactRow(flows: number, ladder: Ladder | undefined): BenchRow {
  const row: BenchRow = { bench: 'udp', tool: 'zerodrop', target: 'udp echo, direct: zero false loss', connections: flows, unit: 'pkt/s', status: ladder ? 'ok' : 'failed' };
  const top = ladder?.exact;
  if (top !== undefined) row.value = top.rate;
  const drops = top && top.lost > 0 ? `; at ${top.rate.toLocaleString('en-US')}/s all ${top.lost.toLocaleString('en-US')} lost were kernel drops at a full receive buffer` : '';
  const stop = ladder?.inexact;
  row.loss = stop ? `${(unexplainedLoss(stop) ?? stop.lost).toLocaleString('en-US')} unexplained at ${stop.rate.toLocaleString('en-US')}/s${stop.held < HELD_FRACTION ? ' (not held)' : ''}` : 'none unexplained';
  row.note = `lost = kernel drops (/proc/net/udp) at every step up to here${drops}`;
  return row;
}

export async function udpBench(o: UdpBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const detail: Record<string, unknown> = { flows: o.flows, payloadBytes: o.payloadBytes, stepMs: o.stepMs, rates: o.rates };
  const attempt = async (f: () => Promise<Ladder>): Promise<{ ladder?: Ladder; error?: string }> => {
    try {
      return { ladder: await f() };
    } catch (error) {
      if (o.signal.aborted) throw error;
      return { error: (error as Error).message.split('\n')[0] ?? 'failed' };
    }
  };
  const direct = await attempt(() => zerodropDirect(o));
  const balanced = await attempt(() => zerodropBalancer(o));
  const netnsMissingWhy = await netnsBenchMissing();
  const kernel = netnsMissingWhy ? undefined : await attempt(() => netnsUdpLadder({ ...o, log: () => {} }));
  const iperf = (await which('iperf3')) ? await attempt(() => iperf3(o)) : undefined;
  detail.zerodropDirect = direct;
  detail.zerodropBalancer = balanced;
  detail.zerodropKubeProxy = kernel ?? netnsMissingWhy;
  detail.iperf3 = iperf ?? 'not installed';
  const best = direct.ladder?.best?.rate;
  const sizeNote = `${o.payloadBytes} B datagrams, ${o.stepMs / 1000} s a step`;
  const rows: BenchRow[] = [
    ladderRow('zerodrop', 'udp echo, direct', o.flows, direct.ladder, direct.error ? 'failed' : 'ok', direct.error ?? `echoed, per-packet accounting; ${sizeNote}`),
    exactRow(o.flows, direct.ladder),
    ladderRow('zerodrop', 'udp echo via Service balancer', o.flows, balanced.ladder, balanced.error ? 'failed' : 'ok', balanced.error ?? 'echoed through src/providers/local/udp-balancer.ts'),
    kernel
      ? ladderRow('zerodrop', 'udp echo via kube-proxy NodePort', o.flows, kernel.ladder, kernel.error ? 'failed' : 'ok', kernel.error ?? 'a pod of a netns cluster: real kube-proxy (nftables), veths, the kernel\'s DNAT')
      : { bench: 'udp', tool: 'zerodrop', target: 'udp echo via kube-proxy NodePort', connections: o.flows, unit: 'pkt/s', status: 'not installed', note: netnsMissingWhy ?? '' },
  ];
  if (!iperf) rows.push({ bench: 'udp', tool: 'iperf3 -u', target: 'iperf3 server', connections: 1, unit: 'pkt/s', status: 'not installed', note: 'apt-get install iperf3' });
  else {
    // The highest step both held with zero loss: the rate at which their loss figures compare.
    const both = best === undefined || iperf.ladder?.best === undefined ? undefined : Math.min(best, iperf.ladder.best.rate);
    detail.bothCleanAt = both;
    const note = iperf.error ?? `-l ${o.payloadBytes}; counts arrivals only${both === undefined ? '' : `; both 0 lost at ${both.toLocaleString('en-US')}/s`}`;
    const row = ladderRow('iperf3 -u', 'iperf3 server (one way)', 1, iperf.ladder, iperf.error ? 'failed' : 'ok', note);
    const ratio = ratioTo(best, iperf.ladder?.best?.rate);
    if (ratio !== undefined) row.ratio = ratio;
    rows.push(row);
  }
  return { rows, detail };
}
