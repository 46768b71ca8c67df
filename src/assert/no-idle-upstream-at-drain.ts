// noIdleUpstreamAtDrain: no connection a client (here a gateway) kept using after the backend was
// deprogrammed was still idle when that backend's drain closed it. A backend may close an idle
// connection at any time (RFC 9112 section 9.6), and a draining one does; a request the gateway is
// sending over it at that moment is lost, and whether one was is luck (the window is the path's
// latency). That the gateway left the connection to be closed under it is not luck: counted here
// from the reference backend's own `idle-close` lines, every run. A gateway avoids it by opening a
// connection per request, or by closing its pooled connections to an endpoint once the endpoint is
// removed, before the backend's SIGTERM. A connection last used before the deprogramming (idle longer
// than usedWithinMs at its close) is one a gateway balancing over endpoints no longer sends on: let
// through.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, perPod, plural, type AssertContext } from './common.ts';

export type NoIdleUpstreamAtDrain = Extract<Expectation, { assert: 'noIdleUpstreamAtDrain' }>;

interface PodLine {
  t: number;
  ev?: unknown;
  idleMs?: unknown;
}

function events(lines: readonly { t: number; stream: string; line: string }[]): PodLine[] {
  const out: PodLine[] = [];
  for (const l of lines) {
    if (l.stream !== 'stdout' || !l.line.startsWith('{')) continue;
    try {
      out.push({ t: l.t, ...(JSON.parse(l.line) as object) });
    } catch {
      // Not one of the backend's JSON lines.
    }
  }
  return out;
}

export function noIdleUpstreamAtDrain(expectation: NoIdleUpstreamAtDrain, ctx: AssertContext): AssertionResult {
  return perPod('noIdleUpstreamAtDrain', expectation.pod, ctx, (pod) => {
    const lines = events(ctx.timeline.podOutput[pod] ?? []);
    // Only a backend that says when it drains says what its drain closed (fixtures/reference-backend.mjs).
    if (!lines.some((l) => l.ev === 'sigterm')) {
      return { verdict: 'inconclusive', message: `${pod} reported no SIGTERM on stdout: its idle closes are unknown` };
    }
    const closes = lines.filter((l) => l.ev === 'idle-close' && Array.isArray(l.idleMs));
    const idle = closes.flatMap((l) => (l.idleMs as unknown[]).filter((ms): ms is number => typeof ms === 'number'));
    const used = idle.filter((ms) => ms <= expectation.usedWithinMs);
    const older = idle.length - used.length;
    const letThrough = older > 0 ? ` (${plural(older, 'connection')} idle longer than ${expectation.usedWithinMs} ms, last used before the deprogramming, let through)` : '';
    if (used.length === 0) return { verdict: 'pass', message: `${pod}'s drain closed no connection still in use after its deprogramming${letThrough}`, details: { closed: 0, older } };
    const first = closes.find((l) => (l.idleMs as unknown[]).some((ms) => typeof ms === 'number' && ms <= expectation.usedWithinMs))!;
    return {
      verdict: 'fail',
      message: `${pod}'s drain closed ${plural(used.length, 'connection')} its client had left idle between requests after its deprogramming, first at ${at(first.t)}: a request sent on one as it closed was lost${letThrough}`,
      details: { closed: used.length, older, at: closes.map((l) => l.t) },
    };
  });
}
