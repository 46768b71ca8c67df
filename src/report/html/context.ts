// What every part of the HTML report is computed from: one scenario's result and Timeline, the time
// window the chart shows, and the buckets the chart aggregates into. The report keeps only
// aggregates (per-bucket counts) and the failed requests individually, so that a run of tens of
// thousands of requests still makes a small, fast page.

import { runEnd } from '../../assert/common.ts';
import type { Timeline } from '../../model/timeline.ts';
import { podLifecycle, type PodLifecycle } from '../../observe/phase.ts';
import type { ScenarioResult } from '../results.ts';

/** Bucket widths the chart may use: 100 ms unless the run is so long that buckets would be too many. */
const BUCKET_STEPS_MS = [100, 200, 250, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000];
const MAX_BUCKETS = 3000;

export interface RenderContext {
  result: ScenarioResult;
  timeline: Timeline;
  /** The chart's window on the run clock, ms. */
  start: number;
  end: number;
  bucketMs: number;
  buckets: number;
  /** Pods in order of first appearance, each with its lifecycle (src/observe/phase.ts). */
  pods: PodLifecycle[];
  /** Index of the bucket holding t, clamped to the window. */
  bucketOf(t: number): number;
  /** A stable colour per pod. */
  colorOf(pod: string): string;
}

const POD_COLORS = ['#2563eb', '#9333ea', '#0d9488', '#c2410c', '#be185d', '#4d7c0f', '#0369a1', '#a16207', '#7c3aed', '#15803d'];

/** A part of the run to draw, with its own bucket width (the drain window is drawn with finer buckets). */
export interface Window {
  start: number;
  end: number;
  bucketMs: number;
}

export function renderContext(result: ScenarioResult, timeline: Timeline, window?: Window): RenderContext {
  let start = Infinity;
  for (const e of timeline.events) start = Math.min(start, e.t);
  timeline.requests.scan((r) => {
    start = Math.min(start, r.start);
  });
  if (!Number.isFinite(start)) start = 0;
  // Start at a round 100 ms so bucket edges read as whole tenths.
  start = Math.max(0, Math.floor(start / 100) * 100);
  let last = Math.max(runEnd(timeline), start + 100);
  if (window) {
    start = window.start;
    last = window.end;
  }
  const span = last - start;
  const bucketMs = window?.bucketMs ?? BUCKET_STEPS_MS.find((b) => span / b <= MAX_BUCKETS) ?? Math.ceil(span / MAX_BUCKETS / 1000) * 1000;
  const buckets = Math.max(1, Math.ceil(span / bucketMs));
  const end = start + buckets * bucketMs;

  const names: string[] = [];
  for (const e of timeline.events) if (e.pod !== undefined && !names.includes(e.pod)) names.push(e.pod);
  const pods = names.map((pod) => podLifecycle(timeline, pod));
  const colors = new Map(names.map((pod, i) => [pod, POD_COLORS[i % POD_COLORS.length] ?? '#334155']));

  return {
    result,
    timeline,
    start,
    end,
    bucketMs,
    buckets,
    pods,
    bucketOf: (t) => Math.min(buckets - 1, Math.max(0, Math.floor((t - start) / bucketMs))),
    colorOf: (pod) => colors.get(pod) ?? '#334155',
  };
}

/**
 * The stretch of the run where the drains happened: from the first delete to the last deleted pod's
 * exit (or the last failure, if later), with a margin; undefined when there was no delete or the
 * window would be most of the run anyway. Buckets are as fine as keeps the window within ~100.
 */
export function drainWindow(timeline: Timeline, full: Pick<RenderContext, 'start' | 'end'>): Window | undefined {
  const deletes = timeline.events.filter((e) => e.kind === 'delete-issued' && e.pod !== undefined);
  if (deletes.length === 0) return undefined;
  let from = Infinity;
  let to = -Infinity;
  for (const d of deletes) {
    const lc = podLifecycle(timeline, d.pod as string);
    from = Math.min(from, d.t);
    to = Math.max(to, lc.killed ?? lc.exit ?? lc.removed ?? lc.sigterm ?? d.t);
  }
  timeline.requests.scan((r) => {
    if (!r.ok) to = Math.max(to, r.end);
  });
  const margin = Math.max(100, (to - from) * 0.15);
  // No finer than 100 ms: load generators send in rounds (hey-like clients every 100 ms), and finer
  // buckets would show the rounds rather than the drain.
  const step = [100, 200, 250, 500].find((b) => (to - from + 2 * margin) / b <= 100) ?? 1000;
  const start = Math.max(full.start, Math.floor((from - margin) / step) * step);
  const end = Math.min(full.end, Math.ceil((to + margin) / step) * step);
  if (end - start > 0.6 * (full.end - full.start)) return undefined;
  return { start, end, bucketMs: step };
}

/** Escapes text for HTML element content and attribute values. */
export function esc(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** `4.812 s` from ms; `—` when unknown. */
export function sec(ms: number | undefined, digits = 3): string {
  return ms === undefined || !Number.isFinite(ms) ? '—' : `${(ms / 1000).toFixed(digits)} s`;
}

/** `+0.250 s` / `−0.100 s`: a signed offset. */
export function signedSec(ms: number): string {
  return `${ms < 0 ? '−' : '+'}${(Math.abs(ms) / 1000).toFixed(3)} s`;
}

export function num(n: number): string {
  return n.toLocaleString('en-US');
}
