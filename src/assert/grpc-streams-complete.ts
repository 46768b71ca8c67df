// grpcStreamsComplete: every gRPC server stream of a load (src/load/grpc.ts) either runs to its end
// (every message it asked for, then OK) or is ended early with OK by a pod that is being deleted
// (seed 005, kubernetes-sigs/gateway-api#5014: a draining backend may end a stream, but at a message boundary
// and with a status the client can tell from a failure); within a stream no message is lost,
// duplicated or reordered. A stream cut with UNAVAILABLE, INTERNAL or any other status fails, with
// the phase of its pod when it broke, as does a stream that a pod not being deleted cut short. A
// stream the load itself cancelled at its end is intact if its messages were in sequence. At least
// one stream must have been open on a pod the PodRef names when that pod was deleted, or nothing
// was tested. With `toEnd` (a gateway scenario: the backends are never disturbed) a stream ended
// early is a fault even on the deleted pod, and each stream is placed on the gateway pod it went
// through (join.ts frontPods), as streamsIntact places them.

import type { Expectation } from '../model/scenario.ts';
import type { StreamRecord } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { phaseAt } from '../observe/phase.ts';
import { allOf, at, count, FIRST_FAILURES, plural, tally, whenDeleted, type AssertContext } from './common.ts';
import { streamsAtDelete, untestedStreams, whereRan } from './streams-intact.ts';

export type GrpcStreamsComplete = Extract<Expectation, { assert: 'grpcStreamsComplete' }>;

/** Whether the stream ended before its last message, with OK, on a pod after that pod's delete. */
function endedByDrain(s: StreamRecord, deleted: ReadonlyMap<string, number>): boolean {
  const t = s.pod !== undefined ? deleted.get(s.pod) : undefined;
  return t !== undefined && s.end >= t;
}

/** What went wrong with the stream, or undefined when it is complete. */
function fault(s: StreamRecord, deleted: ReadonlyMap<string, number>, toEnd: boolean): string | undefined {
  if (s.mismatched > 0 || s.echoed !== s.sent) return 'messages out of sequence';
  if (s.ending === 'stopped') return undefined;
  if (s.ending !== 'closed') return s.status ?? s.ending;
  if (s.expected === undefined || s.sent === s.expected) return undefined;
  if (s.sent > s.expected) return 'more messages than asked for';
  if (toEnd) return 'ended early with OK';
  return endedByDrain(s, deleted) ? undefined : 'ended early by a pod not being deleted';
}

export function grpcStreamsComplete(expectation: GrpcStreamsComplete, ctx: AssertContext): AssertionResult {
  const name = 'grpcStreamsComplete';
  const { load } = expectation;
  const { streams, deleted, onDeleted, front } = streamsAtDelete(expectation, ctx);
  const toEnd = expectation.toEnd === true;
  const broken = streams
    .map((s) => ({ s, fault: fault(s, deleted, toEnd) }))
    .filter((b): b is { s: StreamRecord; fault: string } => b.fault !== undefined)
    .sort((a, b) => a.s.end - b.s.end);
  const details: Record<string, unknown> = {
    streams: streams.length,
    onDeletedPods: onDeleted.length,
    deletedPods: Object.fromEntries(deleted),
    messages: streams.reduce((n, s) => n + s.sent, 0),
  };

  if (broken.length > 0) {
    const { s: first, fault: firstFault } = broken[0]!;
    const frontOf = (s: StreamRecord) => front.get(s)?.pod;
    const phase = phaseAt(ctx.timeline, frontOf(first), first.end);
    const faults = tally(broken.map((b) => b.fault));
    const owed = broken.reduce((n, b) => n + b.s.unanswered, 0);
    const where = whereRan(first, frontOf(first));
    return {
      name,
      verdict: 'fail',
      message:
        `${count(broken.length)} of ${count(streams.length)} streams of load "${load}" did not complete (${faults.text}; ${plural(owed, 'message')} owed); ` +
        `first: stream ${first.stream}${where} ended ${firstFault} at ${at(first.end)} after ${plural(first.sent, 'message')}` +
        `${first.error !== undefined ? ` (${first.error})` : ''}, phase "${phase.label}"`,
      details: {
        ...details,
        byFault: faults.byKey,
        owed,
        firstFailures: broken.slice(0, FIRST_FAILURES).map((b) => ({ ...b.s, fault: b.fault, front: frontOf(b.s), phase: phaseAt(ctx.timeline, frontOf(b.s), b.s.end).label })),
      },
    };
  }
  const untested = untestedStreams(name, expectation, { deleted, onDeleted }, details);
  if (untested) return untested;
  const early = streams.filter((s) => s.ending === 'closed' && s.expected !== undefined && s.sent < s.expected);
  const ranToEnd = onDeleted.filter((s) => !early.includes(s) && s.ending === 'closed').length;
  const earlyText = early.length > 0 ? `${plural(early.length, 'stream was', 'streams were')} ended early by the draining pod with OK at a message boundary` : 'no stream was ended early';
  return {
    name,
    verdict: 'pass',
    message:
      `${allOf(streams.length, 'stream')} of load "${load}" completed, every message in sequence; ` +
      `${plural(onDeleted.length, 'stream was', 'streams were')} open on ${whenDeleted(deleted.keys())} (${count(ranToEnd)} ran to their end); ${earlyText}`,
    details: { ...details, endedEarly: early.length, ranToEnd },
  };
}
