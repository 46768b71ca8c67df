// streamsIntact: every long-lived TCP stream of a load stays intact until the backend closes it
// gracefully (it announced its drain, echoed every message, then closed) or the load itself ends it
// with every message echoed (seeds 000, 003: a long-lived flow must survive its backend's shutdown
// until the backend lets it go). A reset, a stall, or a close the backend did not announce (the
// kernel closing the sockets of a process that died at SIGTERM or at SIGKILL) fails, with the phase
// of the stream's pod at the moment it broke. At least one stream must have been open on a pod the
// PodRef names when that pod was deleted, or nothing was tested.

import type { Expectation } from '../model/scenario.ts';
import type { StreamRecord } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { phaseAt } from '../observe/phase.ts';
import { allOf, at, count, describeRef, FIRST_FAILURES, plural, resolvePods, tally, type AssertContext } from './common.ts';

export type StreamsIntact = Extract<Expectation, { assert: 'streamsIntact' }>;

const INTACT = new Set<StreamRecord['ending']>(['closed', 'stopped']);

function intact(s: StreamRecord): boolean {
  return INTACT.has(s.ending) && s.unanswered === 0 && s.mismatched === 0;
}

/** What went wrong with a stream, for the tally: its ending, or `unanswered` / `mismatched` when it ended well otherwise. */
function fault(s: StreamRecord): string {
  if (!INTACT.has(s.ending)) return s.ending === 'eof' && s.byeAt === undefined ? 'eof (unannounced close)' : s.ending;
  return s.unanswered > 0 ? 'unanswered' : 'mismatched';
}

/**
 * The load's streams, when each pod the PodRef names was deleted, and the streams that were open on
 * one of them at that moment (the ones its drain was tested on).
 */
export function streamsAtDelete(expectation: { load: string; pod: StreamsIntact['pod'] }, ctx: AssertContext): { streams: StreamRecord[]; deleted: Map<string, number>; onDeleted: StreamRecord[] } {
  const streams = (ctx.timeline.streams ?? []).filter((s) => s.load === expectation.load);
  const deleted = new Map<string, number>();
  for (const pod of resolvePods(expectation.pod, ctx.timeline)) {
    const del = ctx.timeline.events.find((e) => e.kind === 'delete-issued' && e.pod === pod);
    if (del) deleted.set(pod, del.t);
  }
  const onDeleted = streams.filter((s) => {
    const t = s.pod !== undefined ? deleted.get(s.pod) : undefined;
    return t !== undefined && s.start <= t && s.end >= t;
  });
  return { streams, deleted, onDeleted };
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
    message: `no stream of load "${expectation.load}" was open on ${[...deleted.keys()].join(', ')} when it was deleted: nothing was tested`,
    details,
  };
}

export function streamsIntact(expectation: StreamsIntact, ctx: AssertContext): AssertionResult {
  const name = 'streamsIntact';
  const { load } = expectation;
  const { streams, deleted, onDeleted } = streamsAtDelete(expectation, ctx);
  const broken = streams.filter((s) => !intact(s)).sort((a, b) => a.end - b.end);
  const details: Record<string, unknown> = {
    streams: streams.length,
    onDeletedPods: onDeleted.length,
    deletedPods: Object.fromEntries(deleted),
    messages: streams.reduce((n, s) => n + s.sent, 0),
  };

  if (broken.length > 0) {
    const first = broken[0]!;
    const phase = phaseAt(ctx.timeline, first.pod, first.end);
    const faults = tally(broken.map(fault));
    const unanswered = broken.reduce((n, s) => n + s.unanswered, 0);
    const firstWhat = `stream ${first.stream}${first.pod !== undefined ? ` on ${first.pod}` : ''} ended ${fault(first)} at ${at(first.end)} after ${plural(first.echoed, 'echoed message')}`;
    return {
      name,
      verdict: 'fail',
      message:
        `${count(broken.length)} of ${count(streams.length)} streams of load "${load}" broke (${faults.text}; ${plural(unanswered, 'message')} unanswered); ` +
        `first: ${firstWhat}, phase "${phase.label}"`,
      details: {
        ...details,
        byFault: faults.byKey,
        unanswered,
        firstFailures: broken.slice(0, FIRST_FAILURES).map((s) => ({ ...s, phase: phaseAt(ctx.timeline, s.pod, s.end).label })),
      },
    };
  }
  const untested = untestedStreams(name, expectation, { deleted, onDeleted }, details);
  if (untested) return untested;
  const closed = onDeleted.filter((s) => s.ending === 'closed');
  const echoed = onDeleted.reduce((n, s) => n + s.echoed, 0);
  const closedText =
    closed.length > 0
      ? `${closed.length === onDeleted.length ? 'each' : `${count(closed.length)} of them`} closed gracefully by its backend (last at ${at(Math.max(...closed.map((s) => s.end)))}) after echoing every message`
      : 'each ran until the load ended, every message echoed';
  return {
    name,
    verdict: 'pass',
    message: `${allOf(streams.length, 'stream')} of load "${load}" stayed intact; ${plural(onDeleted.length, 'stream was', 'streams were')} open on a deleted pod (${count(echoed)} messages echoed): ${closedText}`,
    details: { ...details, closedGracefully: closed.length },
  };
}
