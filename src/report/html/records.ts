// One renderer per kind of record on the Timeline (its property name): what it adds to the chart
// (rows) and below it (sections). To show a new kind of record (UDP packets, TCP streams, TURN
// allocations, per-pod connection samples), add a renderer to `recordRenderers`. Timeline arrays no
// renderer claims are still counted in the report, so nothing recorded is silently invisible.

import { failureTime } from '../../assert/common.ts';
import type { Timeline } from '../../model/timeline.ts';
import { sec, type RenderContext } from './context.ts';
import { drainTimings } from './drains.ts';
import { analyzeFailures, gatewayOf, type FailureAnalysis } from './failures.ts';
import { lanesRow } from './lanes.ts';
import type { ChartRow, ReportSection, Series } from './rows.ts';
import { drainsHtml, failuresHtml, podOutputHtml } from './sections.ts';

export interface RecordRenderer {
  /** The Timeline property this renderer reads. */
  key: string;
  /** What one record is, for counts: "request", "connection". */
  noun: string;
  rows?(ctx: RenderContext): ChartRow[];
  sections?(ctx: RenderContext): ReportSection[];
}

const analyses = new WeakMap<RenderContext, FailureAnalysis>();
export function failuresOf(ctx: RenderContext): FailureAnalysis {
  let f = analyses.get(ctx);
  if (!f) {
    f = analyzeFailures(ctx.timeline);
    analyses.set(ctx, f);
  }
  return f;
}

const zeros = (ctx: RenderContext) => new Array<number>(ctx.buckets).fill(0);
const inc = (values: number[], i: number) => {
  values[i] = (values[i] ?? 0) + 1;
};

const requests: RecordRenderer = {
  key: 'requests',
  noun: 'request',
  rows(ctx) {
    if (ctx.timeline.requests.length === 0) return [];
    const ok = zeros(ctx);
    const failed = zeros(ctx);
    const lost = zeros(ctx);
    ctx.timeline.requests.scan((r) => {
      if (r.ok) inc(ok, ctx.bucketOf(r.end));
      else if (r.outcome === 'lost') inc(lost, ctx.bucketOf(failureTime(r)));
      else inc(failed, ctx.bucketOf(failureTime(r)));
    });
    const down: Series[] = [{ name: 'failed', color: '#dc2626', values: failed }];
    if (lost.some((n) => n > 0)) down.push({ name: 'lost', color: '#7c3aed', values: lost });
    return [{ type: 'bars', id: 'throughput', label: 'requests', unit: `per ${ctx.bucketMs} ms`, up: [{ name: 'ok', color: '#16a34a', values: ok }], down }];
  },
  sections(ctx) {
    if (ctx.timeline.requests.length === 0) return [];
    return [{ id: 'failures', title: 'Failed requests', html: failuresHtml(failuresOf(ctx)), order: 20 }];
  },
};

const connections: RecordRenderer = {
  key: 'connections',
  noun: 'connection',
  rows(ctx) {
    // Most connections open at once in each bucket, per pod, from the balancer's records.
    const deltas = new Map<string, [number, number][]>();
    for (const c of ctx.timeline.connections) {
      if (c.pod === undefined) continue;
      const list = deltas.get(c.pod) ?? [];
      list.push([c.open, 1], [c.close ?? ctx.end, -1]);
      deltas.set(c.pod, list);
    }
    if (deltas.size === 0) return [];
    const series: Series[] = [];
    for (const lc of ctx.pods) {
      const list = deltas.get(lc.pod);
      if (!list) continue;
      list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      const values = zeros(ctx);
      let open = 0;
      let i = 0;
      for (let b = 0; b < ctx.buckets; b++) {
        const bucketEnd = ctx.start + (b + 1) * ctx.bucketMs;
        let max = open;
        while (i < list.length && (list[i] as [number, number])[0] < bucketEnd) {
          open += (list[i] as [number, number])[1];
          max = Math.max(max, open);
          i++;
        }
        values[b] = max;
      }
      series.push({ name: lc.pod, color: ctx.colorOf(lc.pod), values });
    }
    return [{ type: 'lines', id: 'connections', label: 'connections', unit: 'open, per pod', series }];
  },
};

const harness: RecordRenderer = {
  key: 'harness',
  noun: 'harness sample',
  rows(ctx) {
    if (ctx.timeline.harness.length === 0) return [];
    const values = new Array<number>(ctx.buckets).fill(Number.NaN);
    for (const s of ctx.timeline.harness) {
      const b = ctx.bucketOf(s.t);
      values[b] = Math.max(Number.isNaN(values[b] as number) ? 0 : (values[b] as number), Math.round(s.loopDelayMaxMs * 10) / 10);
    }
    return [{ type: 'lines', id: 'harness', label: 'harness lag', unit: 'event loop delay, ms', series: [{ name: 'loop delay', color: '#64748b', values }] }];
  },
};

const events: RecordRenderer = {
  key: 'events',
  noun: 'event',
  rows(ctx) {
    // Failed requests as marks on the lane of the pod they hit (the gateway pod when there is one), per bucket.
    const marks = new Map<string, Map<number, number>>();
    for (const r of ctx.timeline.requests.failed()) {
      const lane = gatewayOf(r) ?? r.pod ?? '';
      const perBucket = marks.get(lane) ?? new Map<number, number>();
      const b = ctx.bucketOf(failureTime(r));
      perBucket.set(b, (perBucket.get(b) ?? 0) + 1);
      marks.set(lane, perBucket);
    }
    const failures = new Map<string, [number, string][]>();
    for (const [lane, perBucket] of marks) {
      failures.set(
        lane,
        [...perBucket].map(([b, n]) => {
          const t = ctx.start + b * ctx.bucketMs;
          return [t, `${n} failed request${n === 1 ? '' : 's'} at t=${sec(t)} – ${sec(t + ctx.bucketMs)}${lane === '' ? ' (no pod known)' : ` on ${lane}`}`];
        }),
      );
    }
    return ctx.pods.length > 0 || failures.size > 0 ? [lanesRow(ctx, failures)] : [];
  },
  sections(ctx) {
    return [{ id: 'drains', title: 'Drain timings', html: drainsHtml(drainTimings(ctx.timeline)), order: 30 }];
  },
};

const activeConnections: RecordRenderer = {
  key: 'activeConnections',
  noun: 'active-connection sample',
  rows(ctx) {
    // Samples are written when a count changes, so a value holds until the next sample.
    const samples = [...(ctx.timeline.activeConnections ?? [])].sort((a, b) => a.t - b.t);
    if (samples.length === 0) return [];
    const pods = new Map<string, number[]>();
    const current = new Map<string, Map<string, number>>();
    for (const s of samples) for (const pod of Object.keys(s.active)) if (!pods.has(pod)) pods.set(pod, new Array<number>(ctx.buckets).fill(Number.NaN));
    let i = 0;
    for (let b = 0; b < ctx.buckets; b++) {
      const bucketEnd = ctx.start + (b + 1) * ctx.bucketMs;
      const max = new Map<string, number>();
      const total = (pod: string) => [...(current.get(pod)?.values() ?? [])].reduce((a, n) => a + n, 0);
      for (const pod of current.keys()) max.set(pod, total(pod));
      while (i < samples.length && (samples[i] as (typeof samples)[number]).t < bucketEnd) {
        const sample = samples[i] as (typeof samples)[number];
        for (const [pod, n] of Object.entries(sample.active)) {
          const byService = current.get(pod) ?? new Map<string, number>();
          byService.set(sample.service, n);
          current.set(pod, byService);
          max.set(pod, Math.max(max.get(pod) ?? 0, total(pod)));
        }
        i++;
      }
      for (const [pod, n] of max) {
        const values = pods.get(pod);
        if (values) values[b] = n;
      }
    }
    const order = ctx.pods.map((p) => p.pod).filter((p) => pods.has(p));
    for (const pod of pods.keys()) if (!order.includes(pod)) order.push(pod);
    const series = order.map((pod) => ({ name: pod, color: ctx.colorOf(pod), values: pods.get(pod) ?? [] }));
    return [{ type: 'lines', id: 'active-connections', label: 'active conns', unit: 'sampled by the provider', series }];
  },
};

const flows: RecordRenderer = {
  key: 'flows',
  noun: 'packet flow',
  rows(ctx) {
    const list = ctx.timeline.flows ?? [];
    if (list.length === 0) return [];
    // Lost packets per bucket by send time; a loss range is spread evenly over the time it was sent in.
    const lost = zeros(ctx);
    for (const flow of list) {
      for (const range of flow.losses) {
        const n = range.to - range.from + 1;
        const span = Math.max(0, range.lastSentAt - range.firstSentAt);
        for (let k = 0; k < n; k++) inc(lost, ctx.bucketOf(range.firstSentAt + (n > 1 ? (span * k) / (n - 1) : 0)));
      }
    }
    const sent = list.reduce((a, f) => a + f.sent, 0);
    return [{ type: 'bars', id: 'packets', label: 'packets', unit: `${sent.toLocaleString('en-US')} sent`, up: [], down: [{ name: 'lost', color: '#7c3aed', values: lost }] }];
  },
};

const podOutput: RecordRenderer = {
  key: 'podOutput',
  noun: 'pod',
  sections(ctx) {
    return [{ id: 'output', title: 'Pod output', html: podOutputHtml(ctx.timeline), order: 50 }];
  },
};

/** In chart order, top to bottom. */
export const recordRenderers: RecordRenderer[] = [requests, flows, connections, activeConnections, harness, events, podOutput];

/** Timeline properties that are not plain metadata. */
const METADATA = new Set(['originEpochMs']);

/** Record kinds on this Timeline that no renderer draws, with how many records each holds. */
export function unrenderedRecords(timeline: Timeline, renderers: readonly RecordRenderer[] = recordRenderers): { key: string; count: number }[] {
  const known = new Set(renderers.map((r) => r.key));
  const out: { key: string; count: number }[] = [];
  for (const [key, value] of Object.entries(timeline)) {
    if (known.has(key) || METADATA.has(key)) continue;
    if (Array.isArray(value)) out.push({ key, count: value.length });
    else if (typeof value === 'object' && value !== null) out.push({ key, count: Object.keys(value).length });
  }
  return out;
}
