// streamsIntact: every long-lived stream of a load stays intact until the backend closes it with its
// protocol's proper close, every message answered, or the load itself ends it (seeds 000, 003, 005:
// a long-lived stream must survive its backend's shutdown until the backend lets it go). The proper
// close: TCP, `bye` then FIN after echoing everything; WebSocket, a close frame with 1001 (going
// away) with no message left unechoed but those it crossed on the wire (StreamRecord.crossed); SSE, the body ended cleanly, and every stream resumed from
// Last-Event-ID continues with the next event: none lost, none repeated. A reset, a stall, a close
// the backend did not announce (the kernel closing the sockets of a process that died at SIGTERM or
// at SIGKILL: WebSocket 1006, an SSE body cut short), another close code, or a reconnect that failed
// fails, with the phase of the stream's pod at the moment it broke. With `toEnd` (bounded streams
// over backends that are never disturbed) a proper close before the stream's end is a fault too:
// only what stands in front of the backends can have sent it. Behind a gateway, the pod a failure
// is placed on is the gateway pod the stream went through (join.ts frontPods): its drain is the
// one the client meets. At
// least one stream must have been open on a pod the PodRef names when that pod was deleted, or
// nothing was tested; and a load that stopped replacing its streams (its cap on reconnects, against
// a pod that closes each new stream at once) left the reconnects after it untried: no pass either.

import type { Expectation } from '../model/scenario.ts';
import type { StreamRecord } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { frontPods, type FrontPod } from '../observe/join.ts';
import { phaseAt } from '../observe/phase.ts';
import { allOf, at, count, describeRef, FIRST_FAILURES, plural, resolvePods, tally, whenDeleted, type AssertContext } from './common.ts';

export type StreamsIntact = Extract<Expectation, { assert: 'streamsIntact' }>;

const INTACT = new Set<StreamRecord['ending']>(['closed', 'stopped']);

/** Whether a stream lost nothing: it ended properly or was stopped by the load, every message answered, every event once. */
export function streamIntact(s: StreamRecord, toEnd = false): boolean {
  return INTACT.has(s.ending) && !(toEnd && s.ending === 'closed') && s.unanswered === 0 && s.mismatched === 0 && !s.lost && !s.duplicated;
}

/** When a stream broke: a close before its end at the close frame (the client saw the rest of the handshake later), else at its end. */
function brokeAt(s: StreamRecord): number {
  return s.ending === 'closed' && s.byeAt !== undefined ? s.byeAt : s.end;
}

/** What went wrong with a stream, for the tally: its ending, or what it lost when it ended well otherwise. */
function fault(s: StreamRecord, toEnd = false, refused = false): string {
  if (refused) return 'refused';
  if (toEnd && s.ending === 'closed') return s.kind === 'websocket' ? 'close 1001 before its end' : 'closed before its end';
  if (!INTACT.has(s.ending)) {
    if (s.closeCode !== undefined && s.closeCode !== 1000 && s.closeCode !== 1001) return `close ${s.closeCode}${s.closeCode === 1006 ? ` (${s.ending}, no close frame)` : ''}`;
    if (s.ending !== 'eof' || s.byeAt !== undefined) return s.ending;
    return s.kind === 'sse' ? 'eof (body cut short)' : 'eof (unannounced close)';
  }
  if (s.unanswered > 0) return 'unanswered';
  if (s.lost) return 'lost events';
  if (s.duplicated) return 'duplicated events';
  return 'mismatched';
}

/** How a protocol's messages and proper close are put in the messages. */
function protocolWords(kind: StreamRecord['kind']): { message: string; delivered: (n: number) => string; close: string; every: string } {
  if (kind === 'sse') {
    return { message: 'event', delivered: (n) => `${plural(n, 'event')} received`, close: 'clean end of body, ', every: 'every event delivered once, resuming from Last-Event-ID' };
  }
  return { message: 'echoed message', delivered: (n) => `${count(n)} messages echoed`, close: kind === 'websocket' ? 'close 1001, ' : '', every: 'every message echoed' };
}

/**
 * The load's streams, when each pod the PodRef names was deleted, and the streams that were open on
 * one of them at that moment (the ones its drain was tested on).
 */
export function streamsAtDelete(
  expectation: { load: string; pod: StreamsIntact['pod'] },
  ctx: AssertContext,
): { streams: StreamRecord[]; deleted: Map<string, number>; onDeleted: StreamRecord[]; front: Map<StreamRecord, FrontPod> } {
  const streams = (ctx.timeline.streams ?? []).filter((s) => s.load === expectation.load);
  const front = frontPods(ctx.timeline, streams);
  const deleted = new Map<string, number>();
  for (const pod of resolvePods(expectation.pod, ctx.timeline)) {
    const del = ctx.timeline.events.find((e) => e.kind === 'delete-issued' && e.pod === pod);
    if (del) deleted.set(pod, del.t);
  }
  const onDeleted = streams.filter((s) => {
    const pod = front.get(s)?.pod;
    const t = pod !== undefined ? deleted.get(pod) : undefined;
    return t !== undefined && s.start <= t && s.end >= t;
  });
  return { streams, deleted, onDeleted, front };
}

/** Where a stream ran, for a message: its front pod, and the backend behind it when that is another. */
export function whereRan(s: StreamRecord, front: string | undefined): string {
  if (front === undefined) return '';
  return s.pod !== undefined && s.pod !== front ? ` through ${front} (backend ${s.pod})` : ` on ${front}`;
}

/** Inconclusive when no pod was deleted or no stream of the load was open on one when it was: the drain was not tested. */
export function untestedStreams(
  name: string,
  expectation: { load: string; pod: StreamsIntact['pod'] },
  { deleted, onDeleted }: { deleted: ReadonlyMap<string, number>; onDeleted: readonly StreamRecord[] },
  details: Record<string, unknown>,
): AssertionResult | undefined {
  if (deleted.size === 0) {
    return { name, verdict: 'inconclusive', message: `${describeRef(expectation.pod)} deleted no pod: no stream was tested against a drain`, details };
  }
  if (onDeleted.length > 0) return undefined;
  return {
    name,
    verdict: 'inconclusive',
    message: `no stream of load "${expectation.load}" was open on ${whenDeleted(deleted.keys())}: nothing was tested`,
    details,
  };
}

export function streamsIntact(expectation: StreamsIntact, ctx: AssertContext): AssertionResult {
  const name = 'streamsIntact';
  const { load } = expectation;
  const { streams, deleted, onDeleted, front } = streamsAtDelete(expectation, ctx);
  const toEnd = expectation.toEnd === true;
  const broken = streams.filter((s) => !streamIntact(s, toEnd)).sort((a, b) => brokeAt(a) - brokeAt(b));
  const details: Record<string, unknown> = {
    streams: streams.length,
    onDeletedPods: onDeleted.length,
    deletedPods: Object.fromEntries(deleted),
    messages: streams.reduce((n, s) => n + s.sent, 0),
  };

  if (broken.length > 0) {
    const first = broken[0]!;
    const phase = phaseAt(ctx.timeline, front.get(first)?.pod, brokeAt(first));
    const faults = tally(broken.map((s) => fault(s, toEnd, front.get(s)?.refused)));
    const unanswered = broken.reduce((n, s) => n + s.unanswered, 0);
    const lost = broken.reduce((n, s) => n + (s.lost ?? 0), 0);
    const duplicated = broken.reduce((n, s) => n + (s.duplicated ?? 0), 0);
    const words = protocolWords(first.kind);
    const firstWhat = `stream ${first.stream}${whereRan(first, front.get(first)?.pod)} ended ${fault(first, toEnd, front.get(first)?.refused)} at ${at(brokeAt(first))} after ${plural(first.echoed, words.message)}`;
    // An event stream has nothing to answer: its losses are events.
    const echoes = broken.some((s) => s.kind !== 'sse');
    const missing = [...(unanswered > 0 || echoes ? [plural(unanswered, 'message') + ' unanswered'] : []), ...(lost > 0 ? [plural(lost, 'event') + ' lost'] : []), ...(duplicated > 0 ? [plural(duplicated, 'event') + ' duplicated'] : [])];
    return {
      name,
      verdict: 'fail',
      message:
        `${count(broken.length)} of ${count(streams.length)} streams of load "${load}" broke (${[faults.text, ...(missing.length > 0 ? [missing.join(', ')] : [])].join('; ')}); ` +
        `first: ${firstWhat}, phase "${phase.label}"`,
      details: {
        ...details,
        byFault: faults.byKey,
        unanswered,
        lost,
        duplicated,
        firstFailures: broken.slice(0, FIRST_FAILURES).map((s) => ({ ...s, front: front.get(s)?.pod, phase: phaseAt(ctx.timeline, front.get(s)?.pod, brokeAt(s)).label })),
      },
    };
  }
  const untested = untestedStreams(name, expectation, { deleted, onDeleted }, details);
  if (untested) return untested;
  const capped = ctx.timeline.events.find((e) => e.kind === 'note' && e.detail?.['load'] === load && e.detail['streamCap'] !== undefined);
  if (capped) {
    return {
      name,
      verdict: 'inconclusive',
      message: `load "${load}" stopped replacing its streams at ${at(capped.t)}, after opening ${count(Number(capped.detail?.['streamCap']))} (a reconnect loop): whether the reconnects after it would have been served was not tested`,
      details: { ...details, streamCapAt: capped.t },
    };
  }
  const closed = onDeleted.filter((s) => s.ending === 'closed');
  const echoed = onDeleted.reduce((n, s) => n + s.echoed, 0);
  const words = protocolWords(onDeleted[0]?.kind);
  const closedText =
    closed.length > 0
      ? `${closed.length === onDeleted.length ? 'each' : `${count(closed.length)} of them`} closed gracefully by its backend (${words.close}last at ${at(Math.max(...closed.map((s) => s.end)))}), ${words.every}`
      : toEnd
        ? `each ran to its end, ${words.every.replace(/, resuming from Last-Event-ID$/, '')}`
        : `each ran until the load ended, ${words.every}`;
  const crossed = streams.reduce((n, s) => n + (s.crossed ?? 0), 0);
  const crossedText = crossed > 0 ? ` (but ${plural(crossed, 'message')} sent as the close frame crossed it, which no backend could answer)` : '';
  return {
    name,
    verdict: 'pass',
    message: `${allOf(streams.length, 'stream')} of load "${load}" stayed intact; ${plural(onDeleted.length, 'stream was', 'streams were')} open on a deleted pod (${words.delivered(echoed)}): ${closedText}${crossedText}`,
    details: { ...details, closedGracefully: closed.length, crossed },
  };
}
