// http2Goaway: a drained HTTP/2 server tells its clients with GOAWAY (RFC 9113 section 6.8), so
// that a pooled client stops opening streams on that connection and moves to another replica
// (seed 003: "HTTP/2 GOAWAY so that clients drop pooled connections"). For every pod it names:
// connections to it carried streams of `load`; at least one of them received GOAWAY; and after the
// first GOAWAY the load's streams were served by another pod. A server that just closes its
// connections fails here (and its cut streams fail noFailedRequests). With `announced`, the first
// GOAWAY on each connection must be the shutdown notice of RFC 9113 section 6.8 (the largest stream
// id, refusing nothing): a single GOAWAY naming the last stream taken refuses the streams its client
// sent meanwhile, a race that a run shows only when a stream happens to cross it, so it is judged
// by the GOAWAY itself, every run.

import type { Expectation } from '../model/scenario.ts';
import type { TimelineEvent } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, count, perPod, plural, type AssertContext } from './common.ts';

export type Http2Goaway = Extract<Expectation, { assert: 'http2Goaway' }>;

/** The largest stream identifier (RFC 9113 section 5.1.1): a GOAWAY naming it refuses nothing. */
const MAX_STREAM_ID = 2 ** 31 - 1;

/** The pod a GOAWAY came from: the event's own pod, else the balancer's record of that client port. */
function goawayPod(e: TimelineEvent, ctx: AssertContext): string | undefined {
  if (e.pod !== undefined) return e.pod;
  const port = e.detail?.['localPort'];
  if (typeof port !== 'number') return undefined;
  const match = ctx.timeline.connections.filter((c) => c.clientPort === port && c.open <= e.t).sort((a, b) => b.open - a.open)[0];
  return match?.pod;
}

export function http2Goaway(expectation: Http2Goaway, ctx: AssertContext): AssertionResult {
  const { load } = expectation;
  const goaways = ctx.timeline.events.filter((e) => e.kind === 'goaway' && e.detail?.['load'] === load);
  return perPod('http2Goaway', expectation.pod, ctx, (pod) => {
    // Passes over the request columns: a pooled load sends hundreds of streams a second.
    const { requests } = ctx.timeline;
    let streams = 0;
    const ports = new Set<number | undefined>();
    requests.scan((r) => {
      if (r.load !== load || r.pod !== pod) return;
      streams++;
      ports.add(r.localPort);
    });
    const sessions = ports.size;
    const fromPod = goaways.filter((e) => goawayPod(e, ctx) === pod).sort((a, b) => a.t - b.t);
    const details: Record<string, unknown> = { streams, connections: sessions, goaways: fromPod.length };
    if (streams === 0) {
      return { verdict: 'inconclusive', message: `no stream of load "${load}" was served by ${pod}: nothing to drain`, details };
    }
    const first = fromPod[0];
    if (!first) {
      return {
        verdict: 'fail',
        message: `${pod} served ${plural(streams, 'stream')} on ${plural(sessions, 'connection')} of load "${load}" and sent no GOAWAY before they ended`,
        details,
      };
    }
    details['firstGoaway'] = first.t;
    details['lastStreamId'] = first.detail?.['lastStreamId'];
    if (expectation.announced === true) {
      const firstOnConnection = new Map<unknown, TimelineEvent>();
      for (const e of fromPod) if (!firstOnConnection.has(e.detail?.['localPort'])) firstOnConnection.set(e.detail?.['localPort'], e);
      const unannounced = [...firstOnConnection.values()].filter((e) => e.detail?.['lastStreamId'] !== MAX_STREAM_ID);
      details['unannounced'] = unannounced.length;
      if (unannounced.length > 0) {
        const u = unannounced[0]!;
        return {
          verdict: 'fail',
          message:
            `${pod} ended ${count(unannounced.length)} of ${plural(firstOnConnection.size, 'connection')} of load "${load}" with a GOAWAY naming the last stream it took ` +
            `(first at ${at(u.t)}, last stream id ${String(u.detail?.['lastStreamId'])}) and no notice before it (RFC 9113 section 6.8: last stream id 2^31-1 first): ` +
            `every stream its client sent before it arrived is refused`,
          details,
        };
      }
    }
    let after = 0;
    let elsewhere = 0;
    const otherPods = new Set<string>();
    requests.scan((r) => {
      if (r.load !== load || r.start <= first.t) return;
      after++;
      const served = r.pod;
      if (r.ok && served !== undefined && served !== pod) {
        elsewhere++;
        otherPods.add(served);
      }
    });
    details['streamsAfterGoaway'] = after;
    details['servedElsewhere'] = elsewhere;
    const got = `${count(fromPod.length)} GOAWAY from ${pod} (first at ${at(first.t)}, last stream id ${String(first.detail?.['lastStreamId'])})`;
    if (after === 0) {
      return { verdict: 'inconclusive', message: `${got}, but the load sent no stream after it: moving on was not tested`, details };
    }
    if (elsewhere === 0) {
      return { verdict: 'fail', message: `${got}, yet none of the ${plural(after, 'stream')} sent after it was served by another pod`, details };
    }
    const others = [...otherPods].sort().join(', ');
    return { verdict: 'pass', message: `${got}; the client moved on: ${plural(elsewhere, 'later stream')} served by ${others}`, details };
  });
}
