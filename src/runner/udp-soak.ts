// Zero false loss, measured: UDP flows through the local provider's Service load balancer to the
// reference UDP echo with no chaos at all. Every packet must come back; a loss here would be the
// harness's own (balancer, generator, socket buffers), and would make every UDP verdict suspect.
// The test suite runs it small (suites/udp/zero-false-loss.test.ts); `npm run bench` runs the full
// figure (docs/benchmarks.md: 20,000 packets/s across 50 flows for 30 s, 20 runs in a row).

import { noLostPackets } from '../assert/no-lost-packets.ts';
import { harnessResponsive, loadHeld } from '../assert/validity.ts';
import { startUdpLoad, type PacketLoadSummary } from '../load/udp.ts';
import type { Timeline } from '../model/timeline.ts';
import { combineVerdicts, type AssertionResult, type Verdict } from '../model/verdict.ts';
import type { Topology } from '../model/workload.ts';
import { startLoopMonitor } from '../observe/loop-monitor.ts';
import { Recorder } from '../observe/recorder.ts';
import { LocalProvider } from '../providers/local/local-provider.ts';
import { udpEchoService, udpEchoWorkload } from '../scenarios/udp-echo-backend.ts';
import { packageRoot } from '../paths.ts';

export interface UdpSoakOptions {
  flows: number;
  ratePerFlow: number;
  durationMs: number;
  /** Datagram size (default 100 bytes). */
  payloadBytes?: number;
  /** Echo replicas behind the Service (default 1). */
  replicas?: number;
  replyTimeoutMs?: number;
  signal?: AbortSignal;
}

export interface UdpSoakResult {
  verdict: Exclude<Verdict, 'skipped'>;
  /** noLostPackets, loadHeld and harnessResponsive. */
  assertions: AssertionResult[];
  summary: PacketLoadSummary;
  timeline: Timeline;
}


export function udpEchoTopology(replicas: number): Topology {
  return { workloads: [udpEchoWorkload({ name: 'echo', replicas, graceSeconds: 2 })], services: [udpEchoService('echo', 0)] };
}

export async function runUdpEchoSoak(o: UdpSoakOptions): Promise<UdpSoakResult> {
  const recorder = new Recorder();
  await using provider = new LocalProvider({ recorder, runId: 'udp-soak', cwd: packageRoot });
  await provider.deploy(udpEchoTopology(o.replicas ?? 1), { timeoutMs: 30_000, ...(o.signal ? { signal: o.signal } : {}) });
  const monitor = startLoopMonitor(recorder, { intervalMs: 100 });
  const load = startUdpLoad(
    'udp',
    {
      kind: 'udp',
      service: 'echo',
      flows: o.flows,
      ratePerFlow: o.ratePerFlow,
      durationMs: o.durationMs,
      payloadBytes: o.payloadBytes ?? 100,
      replyTimeoutMs: o.replyTimeoutMs ?? 1000,
    },
    provider.serviceAddress('echo', 'udp'),
    recorder,
    o.signal ? { signal: o.signal } : {},
  );
  const summary = await load.done;
  monitor.stop();
  const assertions = [noLostPackets({ assert: 'noLostPackets', load: 'udp' }, { timeline: recorder.timeline }), loadHeld([summary]), harnessResponsive(recorder.timeline)];
  return { verdict: combineVerdicts(assertions), assertions, summary, timeline: recorder.timeline };
}
