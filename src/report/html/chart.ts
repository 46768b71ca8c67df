// The timeline chart of one scenario, drawn as SVG on the server so the page needs no chart library:
// every row on one time axis, pod lanes at the bottom, the deleted pods' drain events as guide lines
// through every row. Elements with `data-tip` get a tooltip from the page script; the inlined JSON
// next to the SVG lets the script show exact values under the mouse.

import { esc, type RenderContext } from './context.ts';
import type { BarsRow, ChartRow, LanesRow, LinesRow, MarkerKind, SegmentKind } from './rows.ts';

const W = 1200;
const LEFT = 168;
const RIGHT = 14;
const PW = W - LEFT - RIGHT;
const HEADER = 20;
const BARS_UP = 84;
const BARS_DOWN = 34;
const LINES_H = 58;
const LANE_H = 18;
const LANE_GAP = 8;
const ROW_GAP = 14;
const AXIS_H = 26;

export const SEGMENT_COLORS: Record<SegmentKind, string> = {
  starting: '#bfdbfe',
  ready: '#86efac',
  terminating: '#fde68a',
  prestop: '#fbbf24',
  sigterm: '#fb923c',
  exited: '#d4d4d8',
  killed: '#f87171',
};

export const SEGMENT_NAMES: Record<SegmentKind, string> = {
  starting: 'starting',
  ready: 'ready',
  terminating: 'terminating, serving',
  prestop: 'preStop',
  sigterm: 'after SIGTERM',
  exited: 'exited',
  killed: 'killed (SIGKILL)',
};

export const MARKER_COLORS: Record<MarkerKind, string> = {
  delete: '#111827',
  endpoint: '#7c3aed',
  programmed: '#0284c7',
  deprogrammed: '#0284c7',
  'prestop-start': '#92400e',
  'prestop-end': '#92400e',
  sigterm: '#c2410c',
  exit: '#111827',
  sigkill: '#dc2626',
  other: '#64748b',
};

export const MARKER_NAMES: Partial<Record<MarkerKind, string>> = {
  delete: 'delete issued',
  endpoint: 'endpoint change',
  deprogrammed: 'LB deprogrammed',
  sigterm: 'SIGTERM',
  exit: 'exit',
  sigkill: 'SIGKILL',
};

/** Drawing order of lane markers, bottom first. */
const DRAW_ORDER: MarkerKind[] = ['other', 'endpoint', 'programmed', 'prestop-start', 'prestop-end', 'deprogrammed', 'delete', 'exit', 'sigkill', 'sigterm'];

/** Drain events that also draw a guide line through every row. */
const GUIDES: ReadonlySet<MarkerKind> = new Set<MarkerKind>(['delete', 'deprogrammed', 'sigterm', 'exit', 'sigkill']);

const f1 = (n: number) => (Math.round(n * 10) / 10).toString();

/** A marker glyph centred on (x, y), in the lane's height. */
export function glyph(kind: MarkerKind, x: number, y: number, tip: string): string {
  const c = MARKER_COLORS[kind];
  const t = tip === '' ? '' : ` data-tip="${esc(tip)}"`;
  const h = LANE_H / 2;
  switch (kind) {
    case 'delete':
      return `<path class="mk"${t} d="M${f1(x - 5)} ${f1(y - h - 2)}h10l-5 8z" fill="${c}"/>`;
    case 'endpoint':
      return `<path class="mk"${t} d="M${f1(x)} ${f1(y - 4)}l4 4-4 4-4-4z" fill="${c}" stroke="#fff" stroke-width=".8"/>`;
    case 'programmed':
      return `<circle class="mk"${t} cx="${f1(x)}" cy="${f1(y)}" r="3.2" fill="#fff" stroke="${c}" stroke-width="1.6"/>`;
    case 'deprogrammed':
      return `<rect class="mk"${t} x="${f1(x - 3.5)}" y="${f1(y - 3.5)}" width="7" height="7" fill="${c}" stroke="#fff" stroke-width=".8"/>`;
    case 'prestop-start':
    case 'prestop-end':
      return `<rect class="mk"${t} x="${f1(x - 1)}" y="${f1(y - h)}" width="2" height="${LANE_H}" fill="${c}"/>`;
    case 'sigterm':
      return `<rect class="mk"${t} x="${f1(x - 1.5)}" y="${f1(y - h - 3)}" width="3" height="${LANE_H + 6}" fill="${c}"/>`;
    case 'exit':
      return `<circle class="mk"${t} cx="${f1(x)}" cy="${f1(y)}" r="4" fill="${c}" stroke="#fff" stroke-width="1"/>`;
    case 'sigkill':
      return `<path class="mk"${t} d="M${f1(x - 4.5)} ${f1(y - 4.5)}l9 9m0-9l-9 9" stroke="${c}" stroke-width="3" stroke-linecap="round"/>`;
    default:
      return `<circle class="mk"${t} cx="${f1(x)}" cy="${f1(y)}" r="2.5" fill="${c}"/>`;
  }
}

function niceStep(spanMs: number): number {
  const target = spanMs / 10;
  for (const step of [50, 100, 200, 250, 500, 1000, 2000, 2500, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000]) if (step >= target) return step;
  return 600_000;
}

function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

interface Drawn {
  svg: string;
  height: number;
}

export function renderChart(ctx: RenderContext, rows: readonly ChartRow[], chartId: string): string {
  const x = (t: number) => LEFT + ((t - ctx.start) / (ctx.end - ctx.start)) * PW;
  const bw = PW / ctx.buckets;
  let y = HEADER;
  const parts: string[] = [];
  const hover: { label: string; unit: string; series: { name: string; values: (number | null)[] }[] }[] = [];
  const lanesHover: { name: string; segs: [number, number, string][] }[] = [];
  const guidesTop = HEADER;
  let guidesBottom = HEADER;
  let lanes: LanesRow | undefined;

  const label = (text: string, unit: string, top: number, height: number) =>
    `<text class="rl" x="${LEFT - 10}" y="${f1(top + height / 2 - 2)}" text-anchor="end">${esc(text)}</text>` +
    `<text class="ru" x="${LEFT - 10}" y="${f1(top + height / 2 + 11)}" text-anchor="end">${esc(unit)}</text>`;

  const bars = (row: BarsRow): Drawn => {
    const top = y;
    const upH = row.up.length > 0 ? BARS_UP : 0;
    const downH = row.down.length === 0 ? 0 : upH > 0 ? BARS_DOWN : BARS_UP / 2;
    const base = top + upH;
    const stackUp = new Array<number>(ctx.buckets).fill(0);
    const upMax = niceMax(sums(row.up.map((s) => s.values)).reduce((a, b) => Math.max(a, b), 0));
    const downTotals = sums(row.down.map((s) => s.values));
    const downMaxRaw = downTotals.reduce((a, b) => Math.max(a, b), 0);
    const downMax = niceMax(downMaxRaw);
    let svg = `<rect x="${LEFT}" y="${top}" width="${PW}" height="${upH + downH}" class="bg"/>`;
    svg += `<line x1="${LEFT}" x2="${LEFT + PW}" y1="${f1(top)}" y2="${f1(top)}" class="grid"/>`;
    for (const s of row.up) {
      let d = '';
      s.values.forEach((v, b) => {
        if (v <= 0) return;
        const h = (v / upMax) * upH;
        const y0 = base - stackUp[b]! - h;
        stackUp[b]! += h;
        d += `M${f1(LEFT + b * bw)} ${f1(y0)}h${f1(Math.max(bw - (bw > 3 ? 0.6 : 0), 0.6))}v${f1(h)}h${f1(-Math.max(bw - (bw > 3 ? 0.6 : 0), 0.6))}z`;
      });
      svg += `<path d="${d}" fill="${s.color}"/>`;
    }
    const stackDown = new Array<number>(ctx.buckets).fill(0);
    for (const s of row.down) {
      let d = '';
      s.values.forEach((v, b) => {
        if (v <= 0) return;
        // At least 3 px: a single failure must be visible.
        const h = Math.max(3, (v / downMax) * downH);
        const y0 = base + stackDown[b]!;
        stackDown[b]! += h;
        const w = Math.max(bw - (bw > 3 ? 0.6 : 0), 1.5);
        d += `M${f1(LEFT + b * bw)} ${f1(y0)}h${f1(w)}v${f1(h)}h${f1(-w)}z`;
      });
      svg += `<path d="${d}" fill="${s.color}"/>`;
    }
    svg += `<line x1="${LEFT}" x2="${LEFT + PW}" y1="${f1(base)}" y2="${f1(base)}" class="base"/>`;
    svg += label(row.label, row.unit, top, Math.max(upH, downH));
    if (upH > 0) {
      svg += `<text class="tick" x="${LEFT - 4}" y="${top + 8}" text-anchor="end">${upMax}</text>`;
      svg += `<text class="tick ok" x="${LEFT + 4}" y="${top + 10}">${row.up.map((s) => esc(s.name)).join(' + ')} ↑</text>`;
    }
    if (downH > 0) {
      svg += `<text class="tick bad" x="${LEFT + 4}" y="${f1(base + downH - 3)}">${row.down.map((s) => esc(s.name)).join(' + ')} ↓${downMaxRaw > 0 ? ` (max ${downMaxRaw})` : ' (none)'}</text>`;
    }
    if (downMaxRaw > 0) svg += `<text class="tick bad" x="${LEFT - 4}" y="${f1(base + downH)}" text-anchor="end">${downMax}</text>`;
    hover.push({ label: row.label, unit: row.unit, series: [...row.up, ...row.down].map((s) => ({ name: s.name, values: s.values })) });
    return { svg, height: upH + downH };
  };

  const lines = (row: LinesRow): Drawn => {
    const top = y;
    const max = niceMax(row.series.reduce((m, s) => s.values.reduce((a, v) => (Number.isNaN(v) ? a : Math.max(a, v)), m), 0));
    const yOf = (v: number) => top + LINES_H - (v / max) * (LINES_H - 4);
    let svg = `<rect x="${LEFT}" y="${top}" width="${PW}" height="${LINES_H}" class="bg"/>`;
    row.series.forEach((s, index) => {
      // Series with equal values would hide each other: each is lifted a little above the previous.
      const lift = Math.min(index * 1.6, 8);
      let d = '';
      let pen = false;
      s.values.forEach((v, b) => {
        if (Number.isNaN(v)) {
          pen = false;
          return;
        }
        const x0 = LEFT + b * bw;
        const y0 = yOf(v) - lift;
        d += pen ? `V${f1(y0)}H${f1(x0 + bw)}` : `M${f1(x0)} ${f1(y0)}H${f1(x0 + bw)}`;
        pen = true;
      });
      svg += `<path d="${d}" fill="none" stroke="${s.color}" stroke-width="1.6"/>`;
    });
    svg += label(row.label, row.unit, top, LINES_H);
    svg += `<text class="tick" x="${LEFT - 4}" y="${top + 8}" text-anchor="end">${max}</text>`;
    if (row.series.length > 1 || row.series[0]?.name !== row.label) {
      let lx = LEFT + 6;
      for (const s of row.series) {
        svg += `<text class="tick" x="${f1(lx)}" y="${top + 10}" fill="${s.color}">— ${esc(s.name)}</text>`;
        lx += 22 + s.name.length * 6.6;
      }
    }
    hover.push({ label: row.label, unit: row.unit, series: row.series.map((s) => ({ name: s.name, values: s.values.map((v) => (Number.isNaN(v) ? null : v)) })) });
    return { svg, height: LINES_H };
  };

  const lanesDraw = (row: LanesRow): Drawn => {
    const top = y;
    let svg = '';
    row.lanes.forEach((lane, i) => {
      const ly = top + i * (LANE_H + LANE_GAP);
      const cy = ly + LANE_H / 2;
      svg += `<circle cx="${LEFT - 12}" cy="${f1(cy)}" r="4" fill="${lane.color}"/>`;
      svg += `<text class="rl lane" x="${LEFT - 20}" y="${f1(cy + 4)}" text-anchor="end">${esc(lane.name)}</text>`;
      svg += `<rect x="${LEFT}" y="${f1(ly)}" width="${PW}" height="${LANE_H}" class="lanebg"/>`;
      for (const s of lane.segments) {
        const x0 = x(Math.max(s.start, ctx.start));
        const w = Math.max(1, x(Math.min(s.end, ctx.end)) - x0);
        svg += `<rect class="seg" data-tip="${esc(s.label)}" x="${f1(x0)}" y="${f1(ly)}" width="${f1(w)}" height="${LANE_H}" fill="${SEGMENT_COLORS[s.kind]}"/>`;
        if (w > 60) {
          svg += `<text class="segl" x="${f1(x0 + 4)}" y="${f1(cy + 3.5)}">${esc(SEGMENT_NAMES[s.kind])}</text>`;
        }
      }
      for (const [t, tip] of lane.failures) {
        svg += `<rect class="fk" data-tip="${esc(tip)}" x="${f1(x(t))}" y="${f1(ly + LANE_H - 5)}" width="${f1(Math.max(bw, 2))}" height="5" fill="#dc2626"/>`;
      }
      // Markers a few pixels apart overlap; each one's tooltip lists its neighbours too, in time order,
      // and the drain steps are drawn last so they stay on top.
      const placed = lane.markers.map((m) => ({ m, px: x(m.t) }));
      placed.sort((a, b) => DRAW_ORDER.indexOf(a.m.kind) - DRAW_ORDER.indexOf(b.m.kind));
      for (const { m, px } of placed) {
        const near = placed.filter((o) => Math.abs(o.px - px) <= 6).sort((a, b) => a.m.t - b.m.t || (a.m === m ? -1 : 1));
        const tip = [m.label, ...near.filter((o) => o.m !== m).map((o) => o.m.label)].join('\n');
        svg += glyph(m.kind, px, cy, tip);
      }
      lanesHover.push({ name: lane.name, segs: lane.segments.map((s) => [s.start, s.end, s.label]) });
    });
    svg = `<text class="rl" x="8" y="${top - 4}">pods</text>` + svg;
    return { svg, height: row.lanes.length * (LANE_H + LANE_GAP) - LANE_GAP };
  };

  for (const row of rows) {
    let drawn: Drawn;
    if (row.type === 'bars') drawn = bars(row);
    else if (row.type === 'lines') drawn = lines(row);
    else {
      lanes = row;
      guidesBottom = y - ROW_GAP / 2;
      y += 8;
      drawn = lanesDraw(row);
    }
    parts.push(`<g class="row" data-row="${esc(row.id)}">${drawn.svg}</g>`);
    y += drawn.height + ROW_GAP;
  }
  if (!lanes) guidesBottom = y - ROW_GAP;
  const plotBottom = y - ROW_GAP + 4;

  // Guide lines: the drain events of each pod that was deleted, through the rows above the lanes.
  let guides = '';
  if (lanes) {
    for (const lane of lanes.lanes) {
      if (!lane.markers.some((m) => m.kind === 'delete')) continue;
      for (const m of lane.markers) {
        if (!GUIDES.has(m.kind)) continue;
        const gx = f1(x(m.t));
        guides += `<line class="guide" x1="${gx}" x2="${gx}" y1="${guidesTop}" y2="${f1(guidesBottom)}" stroke="${MARKER_COLORS[m.kind]}"/>`;
        guides += `<line class="guidehit" data-tip="${esc(m.label)}" x1="${gx}" x2="${gx}" y1="${guidesTop}" y2="${f1(guidesBottom)}"/>`;
      }
    }
    // Labels of events close together would overprint: only the first of them is labelled (every
    // line keeps its tooltip).
    let labelledUpTo = -Infinity;
    for (const g of [...lanes.globals].sort((a, b) => a.t - b.t)) {
      const px = x(g.t);
      const gx = f1(px);
      guides += `<line class="global" x1="${gx}" x2="${gx}" y1="${HEADER - 6}" y2="${f1(plotBottom)}"/>`;
      guides += `<line class="guidehit" data-tip="${esc(g.label)}" x1="${gx}" x2="${gx}" y1="${HEADER - 6}" y2="${f1(plotBottom)}"/>`;
      const text = g.label.split(' at t=')[0]?.split(':')[0] ?? '';
      const half = text.length * 2.9;
      if (px - half < labelledUpTo + 6) continue;
      const anchor = px + half > W - 4 ? 'end' : 'middle';
      guides += `<text class="gl" x="${gx}" y="${HEADER - 8}" text-anchor="${anchor}">${esc(text)}</text>`;
      labelledUpTo = anchor === 'end' ? px : px + half;
    }
  }

  // Time axis.
  const step = niceStep(ctx.end - ctx.start);
  let axis = `<line x1="${LEFT}" x2="${LEFT + PW}" y1="${f1(plotBottom)}" y2="${f1(plotBottom)}" class="axis"/>`;
  for (let t = Math.ceil(ctx.start / step) * step; t <= ctx.end; t += step) {
    const tx = f1(x(t));
    axis += `<line x1="${tx}" x2="${tx}" y1="${HEADER}" y2="${f1(plotBottom + 4)}" class="vgrid"/>`;
    axis += `<text class="tick" x="${tx}" y="${f1(plotBottom + 16)}" text-anchor="middle">${(t / 1000).toFixed(step % 1000 === 0 ? 0 : step % 100 === 0 ? 1 : 2)} s</text>`;
  }
  const height = plotBottom + AXIS_H;
  const hit = `<rect class="hit" x="${LEFT}" y="${HEADER}" width="${PW}" height="${f1(plotBottom - HEADER)}"/>`;
  const cross = `<line class="cross" x1="0" x2="0" y1="${HEADER}" y2="${f1(plotBottom)}" visibility="hidden"/>`;
  const data = { start: ctx.start, end: ctx.end, bucketMs: ctx.bucketMs, left: LEFT, width: PW, rows: hover, lanes: lanesHover };
  return (
    `<div class="chart" id="${esc(chartId)}">` +
    `<svg viewBox="0 0 ${W} ${f1(height)}" width="100%" role="img" aria-label="timeline of ${esc(ctx.result.id)} on ${esc(ctx.result.profile)}" xmlns="http://www.w3.org/2000/svg">` +
    `${axis}${hit}${parts.join('')}${guides}${cross}</svg>` +
    `<script type="application/json" class="chart-data">${jsonForScript(data)}</script></div>`
  );
}

function sums(arrays: readonly number[][]): number[] {
  const first = arrays[0];
  if (!first) return [0];
  return first.map((_, i) => arrays.reduce((a, arr) => a + (arr[i] ?? 0), 0));
}

/** JSON safe inside a <script> element. */
export function jsonForScript(data: unknown): string {
  return JSON.stringify(data).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029');
}

export function legendHtml(): string {
  const segs = (Object.keys(SEGMENT_NAMES) as SegmentKind[])
    .map((k) => `<span class="lg"><i class="sw" style="background:${SEGMENT_COLORS[k]}"></i>${esc(SEGMENT_NAMES[k])}</span>`)
    .join('');
  const marks = (Object.entries(MARKER_NAMES) as [MarkerKind, string][])
    .map(([k, name]) => `<span class="lg"><svg width="14" height="20" viewBox="-7 -10 14 20">${glyph(k, 0, 0, '')}</svg>${esc(name)}</span>`)
    .join('');
  return `<div class="legend">${segs}<span class="sep"></span>${marks}<span class="lg"><i class="sw" style="background:#dc2626;height:5px"></i>failed request</span></div>`;
}

