// The rows every benchmark returns and the table `npm run bench` prints: one row per tool and
// target, its rate, its ratio to zerodrop's own figure measured in the same run, and what it lost.

export type BenchName = 'http' | 'udp' | 'provider' | 'soak' | 'scale' | 'model';
export const BENCH_NAMES: readonly BenchName[] = ['http', 'udp', 'provider', 'soak', 'scale', 'model'];
/**
 * What runs without --only: not `model`, which measures Kubernetes rather than zerodrop (a netns
 * cluster per release, minutes each) and is asked for by name.
 */
export const DEFAULT_BENCHES: readonly BenchName[] = BENCH_NAMES.filter((n) => n !== 'model');

export interface BenchRow {
  bench: BenchName;
  /** zerodrop, autocannon, hey, wrk, iperf3, ... */
  tool: string;
  /** What was measured against: "nginx 1 worker", "udp echo (direct)", ... */
  target: string;
  /** Connections (HTTP) or flows (UDP); absent where it does not apply. */
  connections?: number;
  value?: number;
  unit: 'req/s' | 'pkt/s' | 'ms' | 's' | 'runs' | 'MB';
  /** value / zerodrop's value for the same comparison (a tool's rate over zerodrop's). */
  ratio?: number;
  /** Lost packets or failed requests, as text ("0 lost", "12 errors"). */
  loss?: string;
  status: 'ok' | 'not installed' | 'failed';
  note?: string;
}

function formatNumber(v: number | undefined, unit: BenchRow['unit']): string {
  if (v === undefined || !Number.isFinite(v)) return '-';
  if (unit === 'ms') return v.toFixed(1);
  if (unit === 's') return v.toFixed(2);
  if (unit === 'MB') return v.toFixed(1);
  return Math.round(v).toLocaleString('en-US');
}

const HEADER = ['bench', 'tool', 'target', 'conns/flows', 'value', 'unit', 'ratio', 'loss/errors', 'note'];

function cellsOf(r: BenchRow): string[] {
  return [
    r.bench,
    r.tool,
    r.target,
    r.connections === undefined ? '-' : String(r.connections),
    r.status === 'ok' ? formatNumber(r.value, r.unit) : r.status,
    r.unit,
    r.ratio === undefined ? '-' : `${r.ratio.toFixed(2)}x`,
    r.loss ?? '-',
    r.note ?? '',
  ];
}

/** The table as fixed-width text, one line per row, with a header. */
export function formatTable(rows: readonly BenchRow[]): string {
  const cells = rows.map(cellsOf);
  const widths = HEADER.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) => c.map((s, i) => (i === c.length - 1 ? s : s.padEnd(widths[i] ?? 0))).join('  ').trimEnd();
  return [line(HEADER), line(widths.map((w) => '-'.repeat(w))), ...cells.map(line)].join('\n');
}

/** The same table in Markdown, as the README quotes it (written beside bench.json as bench.md). */
export function formatMarkdown(rows: readonly BenchRow[]): string {
  const line = (c: string[]) => `| ${c.map((s) => s.replaceAll('|', '\\|')).join(' | ')} |`;
  return [line(HEADER), line(HEADER.map(() => '---')), ...rows.map((r) => line(cellsOf(r)))].join('\n');
}

/** The tool's rate over zerodrop's, when both were measured. */
export function ratioTo(value: number | undefined, zerodrop: number | undefined): number | undefined {
  if (value === undefined || zerodrop === undefined || zerodrop <= 0) return undefined;
  return value / zerodrop;
}
