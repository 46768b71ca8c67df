// Per-pod lanes: the phases of each pod's life from src/observe/phase.ts (podLifecycle for the
// boundaries, phaseAt for what each stretch is called), and a marker for each lifecycle event.

import type { EventKind, TimelineEvent } from '../../model/timeline.ts';
import { phaseAt, type Lifecycle, type PodLifecycle } from '../../observe/phase.ts';
import { processLifetimes } from '../../observe/processes.ts';
import type { RenderContext } from './context.ts';
import { sec } from './context.ts';
import type { Lane, LanesRow, Marker, MarkerKind, Segment, SegmentKind } from './rows.ts';

const SEGMENT_OF: Record<Lifecycle, SegmentKind | undefined> = {
  starting: 'starting',
  ready: 'ready',
  'terminating (preStop)': 'prestop',
  terminating: 'terminating',
  'after SIGTERM': 'sigterm',
  'after exit': 'exited',
  'after SIGKILL': 'killed',
  unknown: undefined,
};

const MARKER_OF: Partial<Record<EventKind, MarkerKind>> = {
  'delete-issued': 'delete',
  'endpoint-changed': 'endpoint',
  'lb-programmed': 'programmed',
  'lb-deprogrammed': 'deprogrammed',
  'prestop-start': 'prestop-start',
  'prestop-end': 'prestop-end',
  sigterm: 'sigterm',
  exit: 'exit',
  sigkill: 'sigkill',
  'reload-start': 'other',
  'reload-end': 'other',
};

/** Events without a pod that frame the run: drawn as labelled lines across the chart. */
const GLOBAL_KINDS: ReadonlySet<EventKind> = new Set<EventKind>(['chaos', 'load-start', 'load-stop', 'rollout-start', 'rollout-complete', 'scale']);

export function describeEvent(e: TimelineEvent): string {
  const d = e.detail ?? {};
  const parts: string[] = [];
  switch (e.kind) {
    case 'delete-issued':
      if (d['gracePeriodSeconds'] !== undefined) parts.push(`grace ${String(d['gracePeriodSeconds'])} s`);
      break;
    case 'endpoint-changed':
      if (d['removed'] === true) parts.push('removed');
      else for (const k of ['ready', 'serving', 'terminating']) if (k in d) parts.push(`${k}:${String(d[k])}`);
      break;
    case 'exit':
      if (d['signal'] !== undefined && d['signal'] !== null) parts.push(`signal ${String(d['signal'])}`);
      else if (d['code'] !== undefined) parts.push(`code ${String(d['code'])}`);
      break;
    case 'prestop-end':
      if (d['timedOut'] === true) parts.push('timed out');
      break;
    case 'reload-start':
      if (d['how'] !== undefined) parts.push(String(d['how']));
      break;
    case 'reload-end':
      if (d['exitCode'] !== undefined) parts.push(`exit code ${String(d['exitCode'])}`);
      break;
    default:
  }
  if (e.service !== undefined && (e.kind === 'lb-programmed' || e.kind === 'lb-deprogrammed' || e.kind === 'endpoint-changed')) parts.push(`service ${e.service}`);
  const what = e.kind === 'lb-deprogrammed' ? 'load balancer deprogrammed' : e.kind === 'lb-programmed' ? 'load balancer programmed' : e.kind === 'sigterm' ? 'SIGTERM' : e.kind === 'sigkill' ? 'SIGKILL' : e.kind.replace(/-/g, ' ');
  const extra = parts.length > 0 ? ` (${parts.join(', ')})` : '';
  const message = e.message !== undefined && e.kind === 'chaos' ? `: ${e.message}` : '';
  return `${what}${extra}${message}${e.pod !== undefined ? ` — ${e.pod}` : ''} at t=${sec(e.t)}`;
}

function segmentsOf(ctx: RenderContext, lc: PodLifecycle): Segment[] {
  const bounds = [lc.created, lc.started, lc.ready, lc.deleteIssued, lc.preStopStart, lc.preStopEnd, lc.sigterm, lc.exit, lc.killed]
    .filter((t): t is number => t !== undefined)
    .sort((a, b) => a - b);
  const until = lc.removed ?? ctx.end;
  const points = [...new Set([...bounds, until])].filter((t) => t <= until);
  const segments: Segment[] = [];
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i] as number;
    const end = points[i + 1] as number;
    if (end <= start) continue;
    const phase = phaseAt(ctx.timeline, lc.pod, (start + end) / 2);
    const kind = SEGMENT_OF[phase.lifecycle];
    if (kind === undefined) continue;
    const previous = segments.at(-1);
    if (previous && previous.kind === kind && previous.label === phase.label && previous.end === start) previous.end = end;
    else segments.push({ start, end, kind, label: `${phase.label} (t=${sec(start)} – ${sec(end)})` });
  }
  return segments;
}

/**
 * A lane under a reloaded pod for each process of its container: alive, then retiring from the
 * reload that replaced it until it is gone, so that the old and new workers' lives read like pods'.
 */
function processLanes(ctx: RenderContext, lc: PodLifecycle): Lane[] {
  const reloads = ctx.timeline.events.filter((e) => e.pod === lc.pod && e.kind === 'reload-start').map((e) => e.t);
  if (reloads.length === 0) return [];
  const until = lc.exit ?? ctx.end;
  return processLifetimes(ctx.timeline, lc.pod).map((p) => {
    const end = p.exited ?? until;
    const retired = reloads.find((t) => t >= p.started && t < end && p.exited !== undefined);
    const life = `${lc.pod} process ${p.pid} (${p.command})`;
    const segments: Segment[] = [{ start: p.started, end: retired ?? end, kind: 'ready', label: `${life} (t=${sec(p.started)} – ${sec(retired ?? end)})` }];
    if (retired !== undefined) segments.push({ start: retired, end, kind: 'sigterm', label: `${life} retiring after the reload (t=${sec(retired)} – ${sec(end)})` });
    return { name: `${lc.pod} ${p.pid}`, color: ctx.colorOf(lc.pod), segments, markers: [], failures: [] };
  });
}

export function lanesRow(ctx: RenderContext, failures: Map<string, [number, string][]>): LanesRow {
  const lanes: Lane[] = ctx.pods.map((lc) => {
    const markers: Marker[] = [];
    for (const e of ctx.timeline.events) {
      if (e.pod !== lc.pod) continue;
      const kind = MARKER_OF[e.kind];
      if (kind !== undefined) markers.push({ t: e.t, kind, label: describeEvent(e) });
    }
    const pod: Lane = { name: lc.pod, color: ctx.colorOf(lc.pod), segments: segmentsOf(ctx, lc), markers, failures: failures.get(lc.pod) ?? [] };
    return [pod, ...processLanes(ctx, lc)];
  }).flat();
  const orphans = failures.get('');
  if (orphans && orphans.length > 0) lanes.push({ name: '(no pod)', color: '#64748b', segments: [], markers: [], failures: orphans });
  const globals: Marker[] = ctx.timeline.events
    .filter((e) => e.pod === undefined && GLOBAL_KINDS.has(e.kind))
    .map((e) => ({ t: e.t, kind: 'other', label: describeEvent(e) }));
  return { type: 'lanes', id: 'pods', label: 'pods', lanes, globals };
}
