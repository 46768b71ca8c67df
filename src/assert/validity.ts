// Validity checks the runner adds to every scenario (docs/architecture.md): when the
// generator could not hold its target rate, or the harness's own event loop lagged, what was measured
// is not the system under test, so the verdict is inconclusive, never pass.

import type { RequestTable } from '../model/request-table.ts';
import type { HarnessSample, Timeline } from '../model/timeline.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { at, count, plural } from './common.ts';

/** What a load generator reports about itself when it stops. */
export interface LoadSummary {
  load: string;
  /** Requests per second it was asked for (open mode); undefined for closed loops. */
  targetRate?: number;
  achievedRate?: number;
  /** Requests that started late because the generator fell behind. */
  late: number;
}

/** A load as loadHeld's details list it: its summary, and its slow connects where it had any. */
export type HeldLoad = LoadSummary & { slowConnects?: number };

/**
 * A connect that took this long waited out the client kernel's retransmission timeout for its SYN
 * (Linux's initial one is 1 s, RFC 6298): the SYN, or the answer to it, was dropped on the way.
 */
export const SYN_RETRANSMIT_MS = 1000;

/**
 * Per load, the connections its requests opened that took SYN_RETRANSMIT_MS or more to connect. A
 * closed loop waits out each such connect, so a few of them can keep it from its rate, and they are
 * the system's (or its path's) doing: loadHeld says so beside the rate.
 */
export function slowConnects(requests: RequestTable): Map<string, number> {
  const slow = new Map<string, number>();
  requests.scan((r) => {
    if (r.newConnection && r.connectionStart !== undefined && r.connectionStart - r.start >= SYN_RETRANSMIT_MS) slow.set(r.load, (slow.get(r.load) ?? 0) + 1);
  });
  return slow;
}

export function loadHeld(summaries: readonly LoadSummary[], options: { minRatio?: number; slowConnects?: ReadonlyMap<string, number> } = {}): AssertionResult {
  const name = 'loadHeld';
  const { minRatio = 0.95 } = options;
  if (summaries.length === 0) return { name, verdict: 'pass', message: 'no load ran: nothing to hold' };
  const problems: string[] = [];
  const fine: string[] = [];
  for (const s of summaries) {
    const rate =
      s.targetRate !== undefined && s.targetRate > 0 && s.achievedRate !== undefined
        ? { achieved: s.achievedRate, target: s.targetRate, ratio: s.achievedRate / s.targetRate }
        : undefined;
    // The target is the rate the load must hold at least (a closed loop with a think time may go
    // above it): said so, so that 145% does not read like a miscount.
    const rateText = rate ? `${rate.achieved.toFixed(1)}/s, ${(rate.ratio * 100).toFixed(1)}% of the ${rate.target}/s it must hold` : '';
    const own: string[] = [];
    if (rate && rate.ratio < minRatio) {
      const slow = options.slowConnects?.get(s.load) ?? 0;
      const why = slow > 0 ? ` (${count(slow)} of its connections took ${SYN_RETRANSMIT_MS / 1000} s or more to open: a SYN or its answer was dropped and the client's kernel waited to send it again: a wait in the system or on its path)` : '';
      own.push(`achieved ${rateText}, below ${(minRatio * 100).toFixed(0)}%${why}`);
    }
    if (s.late > 0) own.push(`had ${plural(s.late, 'late start')}`);
    if (own.length > 0) problems.push(`load "${s.load}" ${own.join(' and ')}`);
    else fine.push(`load "${s.load}" held${rate ? ` ${rateText},` : ''} with no late starts`);
  }
  const loads: HeldLoad[] = summaries.map((s) => {
    const slow = options.slowConnects?.get(s.load);
    return slow === undefined ? { ...s } : { ...s, slowConnects: slow };
  });
  const details = { loads };
  if (problems.length > 0) return { name, verdict: 'inconclusive', message: problems.join('; '), details };
  return { name, verdict: 'pass', message: fine.join('; '), details };
}

/**
 * What the harness did while its loop lagged, from the sample's CPU time, GC pauses, the main
 * thread's wait for a core and the hypervisor's steal. A loop kept busy by the harness's own work for
 * L ms costs at least L ms of CPU; less than that means it was off the CPU for the rest: waiting for a
 * core (other processes held them, or the hypervisor did), or not runnable at all (a blocking call).
 */
function lagCause(s: HarnessSample): string | undefined {
  if (s.cpuMs === undefined || s.windowMs === undefined) return undefined;
  const lag = s.loopDelayMaxMs;
  const gc = s.gcMs ?? 0;
  const ms = (n: number): string => `${n.toFixed(0)} ms`;
  const facts = [`the harness used ${ms(s.cpuMs)} of CPU in that ${ms(s.windowMs)} window`, `${ms(gc)} of it garbage collection`];
  if (s.waitMs !== undefined) facts.push(`its main thread waited ${ms(s.waitMs)} for a core`);
  if (s.stealMs !== undefined) facts.push(`the hypervisor took ${ms(s.stealMs)} of the machine's CPU`);
  // The process's CPU time counts all its threads; the wait is the main thread's own, so it comes first.
  const because = ((): string => {
    if (gc >= lag / 2) return 'mostly its own garbage collection';
    if (s.stealMs !== undefined && s.stealMs >= lag / 2) return 'off the CPU: the hypervisor ran something else on this machine\'s CPUs';
    if (s.waitMs !== undefined && s.waitMs >= lag / 2) return 'runnable but off the CPU, waiting for a core (other processes, or the kernel, held them)';
    const offCpu = lag - s.cpuMs;
    if (s.longestCall !== undefined && s.longestCall.ms >= lag / 2) return `blocked ${ms(s.longestCall.ms)} in one call: ${s.longestCall.what}`;
    if (offCpu < lag / 2) return 'busy with its own work';
    if (s.waitMs !== undefined) return `off the CPU for at least ${ms(offCpu)} of the lag without waiting for a core: blocked (a blocking call)`;
    return `off the CPU for at least ${ms(offCpu)} of the lag (the cores busy with other processes, or a blocking call)`;
  })();
  return `${facts.join(', ')}: ${because}`;
}

export function harnessResponsive(timeline: Timeline, options: { maxLoopDelayMs?: number } = {}): AssertionResult {
  const name = 'harnessResponsive';
  const { maxLoopDelayMs = 100 } = options;
  const samples = timeline.harness;
  if (samples.length === 0) {
    return { name, verdict: 'pass', message: 'no harness samples were recorded (no load ran)', details: { samples: 0 } };
  }
  const worst = samples.reduce((a, b) => (b.loopDelayMaxMs > a.loopDelayMaxMs ? b : a));
  const over = samples.filter((s) => s.loopDelayMaxMs > maxLoopDelayMs).length;
  const spent = worst.cpuMs !== undefined ? { worstCpuMs: worst.cpuMs, worstGcMs: worst.gcMs ?? 0, worstWindowMs: worst.windowMs, worstWaitMs: worst.waitMs, worstStealMs: worst.stealMs, ...(worst.longestCall ? { worstCall: worst.longestCall } : {}) } : {};
  const details = { samples: samples.length, over, worstMs: worst.loopDelayMaxMs, worstAt: worst.t, maxLoopDelayMs, ...spent };
  if (over > 0) {
    const cause = lagCause(worst);
    return {
      name,
      verdict: 'inconclusive',
      message: `the harness event loop lagged ${worst.loopDelayMaxMs.toFixed(0)} ms at ${at(worst.t)} (limit ${maxLoopDelayMs} ms; ${plural(over, 'sample')} of ${samples.length} over)${cause === undefined ? '' : `; ${cause}`}: measurements are not trustworthy`,
      details,
    };
  }
  return {
    name,
    verdict: 'pass',
    message: `the harness event loop lagged at most ${worst.loopDelayMaxMs.toFixed(0)} ms (limit ${maxLoopDelayMs} ms, ${plural(samples.length, 'sample')})`,
    details,
  };
}
