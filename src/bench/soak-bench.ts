// The full zero-false-loss figure (docs/benchmarks.md): UDP flows through the local Service balancer to the reference echo,
// no chaos, run after run; every run must report zero lost packets. A run whose load could not be
// held or whose harness lagged is inconclusive (counted apart), never a pass.

import { runUdpEchoSoak, type UdpSoakResult } from '../runner/udp-soak.ts';
import type { BenchRow } from './table.ts';

export interface SoakBenchOptions {
  runs: number;
  flows: number;
  /** Packets per second, all flows together. */
  rate: number;
  durationMs: number;
  /** Stops the soak (Ctrl-C): the running run tears down, no further run starts. */
  signal: AbortSignal;
  /** Called after each run (progress on stderr). */
  onRun?: (run: number, r: UdpSoakResult) => void;
}

export interface SoakRun {
  run: number;
  verdict: string;
  sent: number;
  lost: number;
  socketDrops?: number;
  achievedRate?: number;
  /** Assertions that did not pass, with their messages. */
  why: string[];
}

export async function soakBench(o: SoakBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const runs: SoakRun[] = [];
  for (let run = 1; run <= o.runs; run++) {
    const r = await runUdpEchoSoak({ flows: o.flows, ratePerFlow: o.rate / o.flows, durationMs: o.durationMs, signal: o.signal });
    o.signal.throwIfAborted();
    const s = r.summary;
    const entry: SoakRun = {
      run,
      verdict: r.verdict,
      sent: s.sent,
      lost: s.lost,
      why: r.assertions.filter((a) => a.verdict !== 'pass').map((a) => `${a.name}: ${a.message}`),
    };
    if (s.socketDrops !== undefined) entry.socketDrops = s.socketDrops;
    if (s.achievedRate !== undefined) entry.achievedRate = Math.round(s.achievedRate);
    runs.push(entry);
    o.onRun?.(run, r);
  }
  const zeroLoss = runs.filter((r) => r.lost === 0).length;
  const passed = runs.filter((r) => r.verdict === 'pass').length;
  const inconclusive = runs.filter((r) => r.verdict === 'inconclusive').length;
  const row: BenchRow = {
    bench: 'soak',
    tool: 'zerodrop',
    target: 'udp echo via Service balancer',
    connections: o.flows,
    value: zeroLoss,
    unit: 'runs',
    loss: `lost per run: ${runs.map((r) => r.lost).join(',')}`,
    status: 'ok',
    note: `${zeroLoss}/${o.runs} runs with zero loss (${passed} pass, ${inconclusive} inconclusive) at ${o.rate.toLocaleString('en-US')} pkt/s for ${o.durationMs / 1000} s`,
  };
  return { rows: [row], detail: { flows: o.flows, rate: o.rate, durationMs: o.durationMs, runs } };
}
