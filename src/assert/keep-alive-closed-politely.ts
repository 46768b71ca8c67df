// keepAliveClosedPolitely: a server ends an HTTP/1.1 keep-alive connection only after saying so
// (`Connection: close` on a response, RFC 9112 section 9.6), never between two requests: such a
// close races the client's next request, which fails when it is already on the wire. Whether
// a request did cross a close is luck (how late the close reaches the client); that the server closed
// unannounced is not, so each one counts here, with the phase of the pod that closed it. A
// connection idle longer than `idleTimeoutMs` may be closed: that is a keep-alive timeout, which a
// client expects.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { phaseAt } from '../observe/phase.ts';
import { at, plural, tally, type AssertContext } from './common.ts';

export type KeepAliveClosedPolitely = Extract<Expectation, { assert: 'keepAliveClosedPolitely' }>;

export function keepAliveClosedPolitely(expectation: KeepAliveClosedPolitely, ctx: AssertContext): AssertionResult {
  const name = 'keepAliveClosedPolitely';
  const { idleTimeoutMs } = expectation;
  const closes = ctx.timeline.events.filter((e) => e.kind === 'unannounced-close');
  const racing = closes.filter((e) => !(typeof e.detail?.['idleMs'] === 'number' && e.detail['idleMs'] >= idleTimeoutMs));
  const timeouts = closes.length - racing.length;
  const timeoutText = timeouts > 0 ? `; ${plural(timeouts, 'connection')} closed after ${idleTimeoutMs} ms idle or more (a keep-alive timeout)` : '';
  if (racing.length === 0) {
    return { name, verdict: 'pass', message: `no keep-alive connection was closed between two requests without Connection: close${timeoutText}`, details: { unannounced: 0, timeouts } };
  }
  const phases = tally(racing.map((e) => `${e.pod ?? 'unknown pod'}: ${phaseAt(ctx.timeline, e.pod, e.t).label}`));
  const first = racing[0]!;
  return {
    name,
    verdict: 'fail',
    message: `${plural(racing.length, 'keep-alive connection')} closed by the server between two requests without Connection: close, each a race with the client's next request (${phases.text}); first at ${at(first.t)}${timeoutText}`,
    details: { unannounced: racing.length, timeouts, byPhase: phases.byKey },
  };
}
