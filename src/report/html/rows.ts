// The pieces a timeline chart is made of. Record renderers (records.ts) produce them from the
// Timeline; chart.ts draws them, one under the other, on one time axis.

export interface Series {
  name: string;
  color: string;
  /** One value per bucket of the RenderContext. */
  values: number[];
}

/** Counts per bucket as bars: `up` stacked above the baseline, `down` below it on its own scale, so one failure stays visible next to thousands of successes. */
export interface BarsRow {
  type: 'bars';
  id: string;
  label: string;
  unit: string;
  up: Series[];
  down: Series[];
}

/** A value per bucket per series as step lines (active connections, loop delay). */
export interface LinesRow {
  type: 'lines';
  id: string;
  label: string;
  unit: string;
  series: Series[];
  /** Draw a dashed threshold line at this value. */
  threshold?: number;
}

/** Lane kinds, in the order of a pod's life; the legend names them. */
export type SegmentKind = 'starting' | 'ready' | 'terminating' | 'prestop' | 'sigterm' | 'exited' | 'killed';

export interface Segment {
  start: number;
  end: number;
  kind: SegmentKind;
  /** The phase label (src/observe/phase.ts) for the tooltip. */
  label: string;
}

export type MarkerKind =
  | 'delete'
  | 'endpoint'
  | 'programmed'
  | 'deprogrammed'
  | 'prestop-start'
  | 'prestop-end'
  | 'sigterm'
  | 'exit'
  | 'sigkill'
  | 'other';

export interface Marker {
  t: number;
  kind: MarkerKind;
  /** Tooltip text with the exact time. */
  label: string;
}

export interface Lane {
  name: string;
  color: string;
  segments: Segment[];
  markers: Marker[];
  /** Failed requests attributed to this lane: [t, tooltip]. */
  failures: [number, string][];
}

/** One lane per pod with its phases and events; the pods' drain events also draw guide lines across every row. */
export interface LanesRow {
  type: 'lanes';
  id: string;
  label: string;
  lanes: Lane[];
  /** Events without a pod (chaos steps, load start/stop, rollouts): lines across the chart. */
  globals: Marker[];
}

export type ChartRow = BarsRow | LinesRow | LanesRow;

/** A block of the scenario's details below the chart. */
export interface ReportSection {
  id: string;
  title: string;
  /** Ready HTML (escaped by the renderer that made it). */
  html: string;
  /** Sections sort by this, then by registry order. */
  order: number;
}
