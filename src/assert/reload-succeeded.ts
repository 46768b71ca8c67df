// reloadSucceeded: each configuration reload of the run took. A reload whose command failed leaves
// the old configuration serving, and the scenario would have tested nothing; one whose old workers
// never leave holds their connections, sockets and memory for good. The message is the measurement
// the reload scenarios report: per reload, how long it took and which processes it retired and
// started, when.

import type { Expectation } from '../model/scenario.ts';
import type { AssertionResult } from '../model/verdict.ts';
import { reloadEffects, type ProcessLifetime } from '../observe/processes.ts';
import { at, secs, type AssertContext } from './common.ts';

export type ReloadSucceeded = Extract<Expectation, { assert: 'reloadSucceeded' }>;

export function reloadSucceeded(expectation: ReloadSucceeded, ctx: AssertContext): AssertionResult {
  const name = 'reloadSucceeded';
  const { timeline } = ctx;
  const ends = timeline.events.filter((e) => e.kind === 'reload-end');
  const pods = [...new Set(timeline.events.filter((e) => e.kind === 'reload-start' && e.pod !== undefined).map((e) => e.pod as string))];
  if (pods.length === 0) return { name, verdict: 'inconclusive', message: 'no pod was reloaded: nothing was tested' };
  const problems: string[] = [];
  const lines: string[] = [];
  const reloads: Record<string, unknown>[] = [];
  for (const pod of pods) {
    for (const effect of reloadEffects(timeline, pod)) {
      const end = ends.find((e) => e.pod === pod && e.t >= effect.at);
      const code = end?.detail?.['exitCode'];
      const ok = end !== undefined && (end.detail?.['sent'] === true || code === 0);
      const head = `${pod} reloaded at ${at(effect.at)}`;
      if (!end) problems.push(`${head}: the reload did not end`);
      else if (!ok) problems.push(`${head}: the reload failed (${end.detail?.['stage'] === 'render' ? 'rendering its templates, ' : ''}${code !== undefined ? `exit code ${String(code)}` : JSON.stringify(end.detail)})`);
      const late = effect.retired.filter((p) => (p.exited ?? Infinity) - effect.at > expectation.retireWithinMs);
      const lingering = timeline.events.some((e) => e.pod === pod && e.kind === 'exit')
        ? []
        : processesAliveSince(timeline.events, pod, effect.at).filter((pid) => !effect.retired.some((p) => p.pid === pid) && !effect.started.some((p) => p.pid === pid));
      if (late.length > 0) problems.push(`${head}: old ${late.map((p) => p.pid).join(', ')} still there ${secs(expectation.retireWithinMs)} after it`);
      if (lingering.length > 0) problems.push(`${head}: old ${lingering.join(', ')} never left`);
      const took = end ? ` in ${secs(end.t - effect.at)}` : '';
      const retired = effect.retired.map((p) => `${p.pid} left after ${secs((p.exited ?? effect.at) - effect.at)}`);
      const started = effect.started.map((p: ProcessLifetime) => `${p.pid} up after ${secs(p.started - effect.at)}`);
      lines.push(`${head}${took}${retired.length + started.length > 0 ? `: ${[...retired, ...started].join(', ')}` : ': no process replaced'}`);
      reloads.push({
        pod,
        at: effect.at,
        ...(end ? { tookMs: end.t - effect.at } : {}),
        retired: effect.retired.map((p) => ({ pid: p.pid, command: p.command, afterMs: (p.exited ?? effect.at) - effect.at })),
        started: effect.started.map((p) => ({ pid: p.pid, command: p.command, afterMs: p.started - effect.at })),
      });
    }
  }
  if (problems.length > 0) return { name, verdict: 'fail', message: problems.join('; '), details: { reloads } };
  return { name, verdict: 'pass', message: lines.join('; '), details: { reloads } };
}

/** Processes of `pod` that started at or before `t` and never exited during the run. */
function processesAliveSince(events: readonly { kind: string; pod?: string; t: number; detail?: Record<string, unknown> }[], pod: string, t: number): number[] {
  const alive = new Set<number>();
  for (const e of events) {
    if (e.pod !== pod) continue;
    const pid = Number(e.detail?.['pid']);
    if (e.kind === 'process-started' && e.t <= t) alive.add(pid);
    else if (e.kind === 'process-exited') alive.delete(pid);
  }
  return [...alive];
}
