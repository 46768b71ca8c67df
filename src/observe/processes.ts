// The processes of a pod's container over time (process-started / process-exited, recorded for pods
// that reload): which processes a reload retired and which it started, and which of them were alive
// at a moment, so that a failure is placed on the process that met it, as on the pod. Pure
// functions over the Timeline.

import type { Timeline, TimelineEvent } from '../model/timeline.ts';

export interface ProcessLifetime {
  pid: number;
  command: string;
  /** Undefined when it ran before the watch's first look (the first look is at the pod's start). */
  started: number;
  exited?: number;
}

/** Every process of `pod` the Timeline saw, in order of appearance. */
export function processLifetimes(timeline: Timeline, pod: string): ProcessLifetime[] {
  const byPid = new Map<number, ProcessLifetime>();
  const all: ProcessLifetime[] = [];
  for (const e of timeline.events) {
    if (e.pod !== pod || (e.kind !== 'process-started' && e.kind !== 'process-exited')) continue;
    const pid = Number(e.detail?.['pid']);
    const command = String(e.detail?.['command'] ?? '');
    if (e.kind === 'process-started') {
      const p: ProcessLifetime = { pid, command, started: e.t };
      byPid.set(pid, p);
      all.push(p);
    } else {
      const p = byPid.get(pid);
      if (p) {
        p.exited = e.t;
        // The last title it had: nginx's old workers say "is shutting down".
        if (command !== '') p.command = command;
      }
      byPid.delete(pid);
    }
  }
  return all;
}

/** What a reload of a pod did to its processes: those it retired (alive at the reload, gone after) and those it started. */
export interface ReloadEffect {
  pod: string;
  at: number;
  /** When the reload ended (its command exited, its signal was sent). */
  ended?: number;
  retired: ProcessLifetime[];
  started: ProcessLifetime[];
}

/** The pod's reloads, each with the processes it retired and started before the next one. */
export function reloadEffects(timeline: Timeline, pod: string): ReloadEffect[] {
  const reloads = timeline.events.filter((e) => e.pod === pod && e.kind === 'reload-start');
  const ends = timeline.events.filter((e) => e.pod === pod && e.kind === 'reload-end');
  const processes = processLifetimes(timeline, pod);
  return reloads.map((r, i) => {
    const next = reloads[i + 1]?.t ?? Infinity;
    const ended = ends.find((e) => e.t >= r.t)?.t;
    return {
      pod,
      at: r.t,
      ...(ended !== undefined ? { ended } : {}),
      retired: processes.filter((p) => p.started <= r.t && p.exited !== undefined && p.exited > r.t && p.exited <= next),
      started: processes.filter((p) => p.started > r.t && p.started <= next),
    };
  });
}

/** As phase.ts's formatSeconds (not imported: phase.ts imports this module). */
const formatSeconds = (ms: number): string => (ms / 1000).toFixed(3);

const describeProcess = (p: ProcessLifetime) => `${p.pid} (${p.command})`;

/**
 * Where a moment `t` stood in the pod's last reload before it, for a failure's phase: how long after
 * the reload, and which processes were retiring (alive since before it) or new then. Undefined
 * when the pod had not been reloaded by `t`.
 */
export function reloadPhase(timeline: Timeline, pod: string, t: number): string | undefined {
  let last: TimelineEvent | undefined;
  let n = 0;
  for (const e of timeline.events) {
    if (e.pod === pod && e.kind === 'reload-start' && e.t <= t) {
      last = e;
      n++;
    }
  }
  if (!last) return undefined;
  const effect = reloadEffects(timeline, pod)[n - 1];
  const parts: string[] = [];
  const retiring = (effect?.retired ?? []).filter((p) => p.exited === undefined || p.exited >= t);
  const retired = (effect?.retired ?? []).filter((p) => p.exited !== undefined && p.exited < t);
  const fresh = (effect?.started ?? []).filter((p) => p.started <= t && (p.exited === undefined || p.exited >= t));
  if (retiring.length > 0) parts.push(`old ${retiring.map(describeProcess).join(', ')} retiring`);
  if (retired.length > 0) parts.push(`old ${retired.map(describeProcess).join(', ')} gone`);
  if (fresh.length > 0) parts.push(`new ${fresh.map(describeProcess).join(', ')} up`);
  if (effect && effect.started.length > 0 && fresh.length === 0 && effect.started.every((p) => p.started > t)) parts.push('no new process up yet');
  return `${formatSeconds(t - last.t)} s after reload${n > 1 ? ` #${n}` : ''} of ${pod}${parts.length > 0 ? ` (${parts.join('; ')})` : ''}`;
}
