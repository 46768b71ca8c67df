// noLostPackets: every packet of a packet load (src/load/udp.ts) was echoed while the pod serving
// its flow was alive. Each lost packet is attributed to a phase of that pod (when, see below):
//   before delete             - nothing was being drained: a loss here is a plain bug
//   terminating, serving      - deleted, still running and serving (STUNner #138's failure)
//   terminating, not serving  - deleted and running, its readiness already failing
//   after exit                - its process had exited: counted separately, never a drain loss,
//                               since no drain can save a packet sent to a process that is gone
// The serving pod of a flow at time t is the pod that echoed the flow's packets around t (the echo
// names it); for a flow never echoed, the pod the Service's balancer pinned it to, if any; with no
// pod known its losses still count against the drain.
// A packet is attributed by when it reached the serving side, estimated as its send time plus the
// flow's p99 RTT (capped at 100 ms): a packet sent a moment before the delete that was still in
// flight when the relay dropped the pod belongs to "terminating", one in flight when the process
// exited to "after exit". Loss ranges are split at the pod's delete and exit on that estimate,
// interpolating between the first and last send time of a range (the flow is paced, so sequence
// numbers grow with time).
// When the kernel dropped at least as many datagrams at full socket receive buffers on the run's
// sockets as were lost (the load's `udpSocketDrops` note, src/observe/udp-drops.ts), the machine
// could not keep up and the verdict is inconclusive, not fail: locally a starved process and a slow
// system under test look the same. Likewise for echoes that arrived after the reply timeout.

import type { Expectation } from '../model/scenario.ts';
import type { FlowRecord, LossRange, Timeline } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { phaseAt, podLifecycle } from '../observe/phase.ts';
import { at, count, plural, type AssertContext } from './common.ts';

export type NoLostPackets = Extract<Expectation, { assert: 'noLostPackets' }>;

export type PacketPhase = 'before delete' | 'terminating, serving' | 'terminating, not serving' | 'after exit';

export interface LostPackets {
  flow: number;
  from: number;
  to: number;
  count: number;
  firstSentAt: number;
  pod: string | undefined;
  phase: PacketPhase | 'no pod known';
  /** The finer phase label of src/observe/phase.ts at the first lost packet. */
  detail: string;
}

const FIRST_LOSSES = 20;

/**
 * The pod serving `flow` at `t`: the last one to echo a packet sent at or before t, else the first
 * to echo at all; for a flow never echoed, the pod the Service's balancer pinned its socket to.
 */
export function servingPod(flow: FlowRecord, t: number, timeline?: Timeline): string | undefined {
  let best: { pod: string; last: number } | undefined;
  for (const p of flow.pods) if (p.first <= t && (!best || p.last > best.last)) best = p;
  const echoed = best?.pod ?? flow.pods[0]?.pod;
  if (echoed !== undefined || flow.localPort === undefined) return echoed;
  const pinned = (timeline?.udpFlows ?? []).filter((f) => f.clientPort === flow.localPort && f.pod !== undefined && f.open <= t + 1);
  return pinned.at(-1)?.pod;
}

function servingAt(timeline: Timeline, pod: string, t: number): boolean {
  let serving = true;
  for (const e of timeline.events) {
    if (e.t > t) break;
    if (e.kind === 'endpoint-changed' && e.pod === pod && typeof e.detail?.['serving'] === 'boolean') serving = e.detail['serving'];
  }
  return serving;
}

/** The phase of `pod` at `t`, as far as a packet sent then is concerned. */
export function packetPhase(timeline: Timeline, pod: string, t: number): PacketPhase {
  const lc = podLifecycle(timeline, pod);
  if (lc.exit !== undefined && t >= lc.exit) return 'after exit';
  if (lc.deleteIssued === undefined || t < lc.deleteIssued) return 'before delete';
  return servingAt(timeline, pod, t) ? 'terminating, serving' : 'terminating, not serving';
}

/** Splits a loss range at the pod's delete and exit (by interpolated send time) and labels each piece. */
/** How long after its send a packet may still have been on its way: the flow's p99 RTT, at most 100 ms. */
export function inFlightMs(flow: FlowRecord): number {
  return Math.min(100, flow.rttMs?.p99 ?? 0);
}

function splitRange(timeline: Timeline, flow: FlowRecord, range: LossRange): LostPackets[] {
  const pod = servingPod(flow, range.firstSentAt, timeline);
  const shift = inFlightMs(flow);
  const piece = (from: number, to: number, firstSentAt: number): LostPackets => ({
    flow: flow.flow,
    from,
    to,
    count: to - from + 1,
    firstSentAt,
    pod,
    phase: pod === undefined ? 'no pod known' : packetPhase(timeline, pod, firstSentAt + shift),
    detail: phaseAt(timeline, pod, firstSentAt + shift).label,
  });
  if (pod === undefined || range.from === range.to) return [piece(range.from, range.to, range.firstSentAt)];
  const lc = podLifecycle(timeline, pod);
  const span = range.lastSentAt - range.firstSentAt;
  const seqAt = (t: number) => range.from + Math.ceil(((t - range.firstSentAt) / (span || 1)) * (range.to - range.from));
  const timeOf = (seq: number) => range.firstSentAt + ((seq - range.from) / (range.to - range.from)) * span;
  // A boundary b splits the range where packets start arriving after it: sent at or after b - shift.
  const cuts = [lc.deleteIssued, lc.exit]
    .map((t) => (t === undefined ? undefined : t - shift))
    .filter((t): t is number => t !== undefined && t > range.firstSentAt && t <= range.lastSentAt)
    .map(seqAt)
    .filter((s) => s > range.from && s <= range.to);
  const pieces: LostPackets[] = [];
  let start = range.from;
  for (const cut of [...new Set(cuts)].sort((a, b) => a - b)) {
    pieces.push(piece(start, cut - 1, timeOf(start)));
    start = cut;
  }
  pieces.push(piece(start, range.to, timeOf(start)));
  return pieces;
}

function seqs(l: LostPackets): string {
  return l.from === l.to ? `seq ${count(l.from)}` : `seq ${count(l.from)}-${count(l.to)}`;
}

export function noLostPackets(expectation: NoLostPackets, ctx: AssertContext): AssertionResult {
  const name = 'noLostPackets';
  const { load } = expectation;
  const of = load !== undefined ? ` of load "${load}"` : '';
  const flows = (ctx.timeline.flows ?? []).filter((f) => load === undefined || f.load === load);
  const sent = flows.reduce((n, f) => n + f.sent, 0);
  if (sent === 0) {
    return { name, verdict: 'inconclusive', message: `no packets${of} were sent: nothing was tested`, details: { flows: flows.length, sent: 0 } };
  }
  const pieces = flows.flatMap((f) => f.losses.flatMap((r) => splitRange(ctx.timeline, f, r)));
  const afterExit = pieces.filter((p) => p.phase === 'after exit');
  const drain = pieces.filter((p) => p.phase !== 'after exit').sort((a, b) => a.firstSentAt - b.firstSentAt || a.flow - b.flow);
  const lost = drain.reduce((n, p) => n + p.count, 0);
  const lostAfterExit = afterExit.reduce((n, p) => n + p.count, 0);
  const byPhase: Record<string, number> = {};
  for (const p of pieces) {
    const key = `${p.phase}${p.pod !== undefined ? ` of ${p.pod}` : ''}`;
    byPhase[key] = (byPhase[key] ?? 0) + p.count;
  }
  const duplicated = flows.reduce((n, f) => n + f.duplicated, 0);
  const reordered = flows.reduce((n, f) => n + f.reordered, 0);
  const p99 = Math.max(...flows.map((f) => f.rttMs?.p99 ?? 0));
  const details = {
    flows: flows.length,
    sent,
    lost,
    lostAfterExit,
    duplicated,
    reordered,
    rttP99MaxMs: p99,
    byPhase,
    firstLosses: drain.slice(0, FIRST_LOSSES),
  };
  const exitNote =
    lostAfterExit > 0
      ? `; ${plural(lostAfterExit, 'packet')} sent after the serving pod's process exited ${lostAfterExit === 1 ? 'is' : 'are'} counted separately`
      : '';
  if (lost === 0) {
    return {
      name,
      verdict: 'pass',
      message: `no packet${of} was lost while its pod was alive: ${count(sent - lostAfterExit)} of ${plural(sent, 'packet')} across ${plural(flows.length, 'flow')} echoed (${count(duplicated)} duplicated, ${count(reordered)} reordered, RTT p99 at most ${p99.toFixed(1)} ms)${exitNote}`,
      details,
    };
  }
  // Datagrams the kernel dropped at full receive buffers on the run's sockets: the machine could not
  // keep up, and losses it explains are not the drain's doing.
  const drops = ctx.timeline.events
    .filter((e) => e.kind === 'note' && typeof e.detail?.['udpSocketDrops'] === 'number' && (load === undefined || e.detail['load'] === load))
    .reduce((n, e) => n + (e.detail?.['udpSocketDrops'] as number), 0);
  const first = drain[0];
  const flowsHit = new Set(drain.map((p) => p.flow)).size;
  const firsts = drain
    .filter((p, i, all) => all.findIndex((q) => q.flow === p.flow) === i)
    .slice(0, 3)
    .map((p) => `flow ${p.flow} ${seqs(p)}`)
    .join(', ');
  const phases = Object.entries(byPhase)
    .filter(([k]) => !k.startsWith('after exit'))
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${count(n)} ${k}`)
    .join(', ');
  let message = `${count(lost)} of ${plural(sent, 'packet')}${of} lost while the serving pod was alive, in ${plural(flowsHit, 'flow')} (${phases})`;
  if (first) {
    message += `; first lost: ${firsts}, sent at ${at(first.firstSentAt)}${first.pod !== undefined ? ` to ${first.pod}` : ''}, phase "${first.phase}" (${first.detail})`;
  }
  if (drops >= lost) {
    return {
      name,
      verdict: 'inconclusive',
      message: `${message}${exitNote}; but the kernel dropped ${plural(drops, 'datagram')} at full socket receive buffers during the load (the machine could not keep up), which can explain every loss`,
      details: { ...details, socketDrops: drops },
    };
  }
  // Echoes that came back after replyTimeoutMs count as lost, but were not dropped: queues of an
  // overloaded machine, not the drain, unless the system under test itself held them back.
  const lateEchoes = flows.reduce((n, f) => n + (f.lateEchoes ?? 0), 0);
  if (lateEchoes > 0 && drops + lateEchoes >= lost) {
    return {
      name,
      verdict: 'inconclusive',
      message: `${message}${exitNote}; but ${plural(lateEchoes, 'echo', 'echoes')} arrived after the reply timeout${drops > 0 ? ` and the kernel dropped ${plural(drops, 'datagram')} at full socket buffers` : ''}, which can explain every loss (the machine could not keep up)`,
      details: { ...details, socketDrops: drops, lateEchoes },
    };
  }
  const dropNote = drops > 0 ? `; the kernel dropped ${plural(drops, 'datagram')} at full socket buffers, fewer than the losses` : '';
  return { name, verdict: 'fail', message: message + exitNote + dropNote, details: { ...details, socketDrops: drops } };
}
