// The CLI's live progress: a reporter like any other (src/report/reporters/reporter.ts), drawing the
// pair that runs, its phase and its counts, and printing each result as it comes.

import { describeCounts, droppedOf, type ScenarioResult } from '../report/results.ts';
import type { ScenarioProgress } from '../runner/run-scenario.ts';
import type { PairBegin, Reporter, RunBegin } from '../report/reporters/reporter.ts';

const ICON: Record<ScenarioResult['verdict'], string> = { pass: 'PASS', fail: 'FAIL', inconclusive: 'INCONCLUSIVE', skipped: 'SKIP' };

export function printResult(r: ScenarioResult, out: (line: string) => void = console.log): void {
  const seconds = (r.durationMs / 1000).toFixed(1);
  const counts = describeCounts(r.counts);
  out(`${ICON[r.verdict]} ${r.id} [${r.profile}] ${seconds} s${counts ? `, ${counts}` : ''}`);
  if (r.reason) out(`    ${r.reason}`);
  // The balancers' programming lags are drawn from this seed: --seed replays them for a failing run.
  if (r.seed !== undefined && (r.verdict === 'fail' || r.verdict === 'inconclusive')) out(`    seed ${r.seed} (--seed ${r.seed} replays the load balancers' programming)`);
  for (const a of r.assertions) {
    if (a.verdict !== 'pass') out(`    ${a.verdict}: ${a.name}: ${a.message}`);
  }
}

export function printSummary(results: readonly ScenarioResult[], out: (line: string) => void = console.log): void {
  const by = (v: ScenarioResult['verdict']) => results.filter((r) => r.verdict === v).length;
  out(`\n${by('pass')} passed, ${by('fail')} failed, ${by('inconclusive')} inconclusive, ${by('skipped')} skipped`);
}

/** What the live view writes to: process.stdout, or a fake in tests. */
export interface ProgressStream {
  write(chunk: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** Redraw in place only on a terminal, and never under CI (logs keep every byte written). */
export function wantsLiveView(stream: ProgressStream, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env['CI'] && env['TERM'] !== 'dumb';
}

const CLEAR_LINE = '\r\x1b[2K';
const HIDE_CURSOR = '\x1b[?25l';
const SHOW_CURSOR = '\x1b[?25h';
const SPINNER = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

interface Current {
  scenario: string;
  profile: string;
  phase: string;
  message?: string;
  timeline?: { requests: { readonly length: number; readonly okCount: number } };
  started: number;
}

/**
 * Live progress for `zerodrop run`: the scenario, its phase, requests ok/failed so far and the
 * elapsed time. On a terminal it is one status line redrawn in place (results scroll above it);
 * otherwise plain lines: one per phase change, one per result, and a heartbeat every
 * `heartbeatMs` so a long nightly scenario still shows life in a CI log.
 */
export class ProgressView implements Reporter {
  private readonly stream: ProgressStream;
  readonly live: boolean;
  private readonly heartbeatMs: number;
  private readonly now: () => number;
  private current: Current | undefined;
  private timer: NodeJS.Timeout | undefined;
  private frame = 0;
  private done = 0;
  private total = 0;
  private lastBeat = 0;
  private readonly every: number;

  constructor(opts: { stream?: ProgressStream; live?: boolean; redrawMs?: number; heartbeatMs?: number; now?: () => number } = {}) {
    this.stream = opts.stream ?? process.stdout;
    this.live = opts.live ?? wantsLiveView(this.stream);
    this.heartbeatMs = opts.heartbeatMs ?? 10_000;
    this.now = opts.now ?? (() => performance.now());
    this.every = this.live ? (opts.redrawMs ?? 120) : 1000;
    this.start();
  }

  private start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => this.tick(), this.every);
    this.timer.unref();
    if (this.live) this.stream.write(HIDE_CURSOR);
  }

  /** How many scenario x profile runs to expect, for the [n/N] counter; a run after another (one per Kubernetes version) counts afresh. */
  onBegin(run: RunBegin): void {
    this.start();
    this.total = run.pairs.length;
    this.done = 0;
  }

  onPairBegin(s: Pick<PairBegin, 'scenario' | 'profile'> & { timeline: { requests: { readonly length: number; readonly okCount: number } } }): void {
    this.current = { scenario: s.scenario, profile: s.profile, phase: 'starting', timeline: s.timeline, started: this.now() };
    this.lastBeat = this.now();
    this.draw();
  }

  onProgress(p: ScenarioProgress): void {
    if (!this.current || this.current.scenario !== p.scenario || this.current.profile !== p.profile) {
      this.current = { scenario: p.scenario, profile: p.profile, phase: p.phase, started: this.now() };
    }
    this.current.phase = p.phase;
    if (p.message !== undefined) this.current.message = p.message;
    else delete this.current.message;
    if (this.live) this.draw();
    else this.line(`  ${this.status()}`);
  }

  onPairEnd(r: ScenarioResult): void {
    this.done++;
    this.current = undefined;
    const lines: string[] = [];
    printResult(r, (l) => lines.push(l));
    if (this.live) this.stream.write(CLEAR_LINE);
    for (const l of lines) this.stream.write(`${l}\n`);
  }

  /** Writes a line above the status line. */
  line(text: string): void {
    if (this.live) {
      this.stream.write(`${CLEAR_LINE}${text}\n`);
      this.draw();
    } else this.stream.write(`${text}\n`);
  }

  onEnd(): void {
    this.stop();
  }

  stop(): void {
    if (!this.timer) return;
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.live) this.stream.write(`${CLEAR_LINE}${SHOW_CURSOR}`);
  }

  [Symbol.dispose](): void {
    this.stop();
  }

  private counts(): string {
    const requests = this.current?.timeline?.requests;
    if (!requests || requests.length === 0) return '';
    const ok = requests.okCount;
    const failed = requests.length - ok;
    return ` · ${ok.toLocaleString('en-US')} ok · ${failed.toLocaleString('en-US')} failed`;
  }

  private status(): string {
    const c = this.current;
    if (!c) return '';
    const of = this.total > 0 ? `[${Math.min(this.done + 1, this.total)}/${this.total}] ` : '';
    const elapsed = ((this.now() - c.started) / 1000).toFixed(1);
    return `${of}${c.scenario} [${c.profile}] ${c.phase}${c.message ? `: ${c.message}` : ''}${this.counts()} · ${elapsed} s`;
  }

  private draw(): void {
    if (!this.live || !this.current) return;
    // A pty that never had its size set reports 0 columns.
    const width = Math.max(20, (this.stream.columns || 100) - 1);
    const text = `${SPINNER[this.frame % SPINNER.length]} ${this.status()}`;
    this.stream.write(`${CLEAR_LINE}${text.length > width ? `${text.slice(0, width - 1)}…` : text}`);
  }

  private tick(): void {
    this.frame++;
    if (this.live) this.draw();
    else if (this.current && this.now() - this.lastBeat >= this.heartbeatMs) {
      this.lastBeat = this.now();
      this.stream.write(`  ${this.status()}\n`);
    }
  }
}

/** What the load sent, with its unit: requests, packets or stream messages. */
function sentOf(counts: ScenarioResult['counts']): string {
  const parts: string[] = [];
  if (counts.requests > 0) parts.push(`${counts.requests.toLocaleString('en-US')} req`);
  if (counts.packets) parts.push(`${counts.packets.sent.toLocaleString('en-US')} pkt`);
  if (counts.streams) parts.push(`${counts.streams.messages.toLocaleString('en-US')} msg`);
  return parts.join(' + ') || '0';
}

/** The closing table: one row per scenario x profile with its verdict, counts, duration and first problem. */
export function summaryTable(results: readonly ScenarioResult[], width = 120): string[] {
  const rows = results.map((r) => {
    const problem = r.assertions.find((a) => a.verdict === r.verdict && r.verdict !== 'pass');
    return [
      ICON[r.verdict],
      r.id,
      r.profile,
      r.verdict === 'skipped' ? '' : sentOf(r.counts),
      r.verdict === 'skipped' ? '' : droppedOf(r.counts).toLocaleString('en-US'),
      `${(r.durationMs / 1000).toFixed(1)} s`,
      problem ? `${problem.name}: ${problem.message}` : (r.reason ?? ''),
    ];
  });
  const head = ['', 'scenario', 'profile', 'sent', 'dropped', 'time', ''];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const right = new Set([3, 4, 5]);
  const fmt = (row: string[]) => {
    const fixed = row
      .slice(0, 6)
      .map((cell, i) => (right.has(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
      .join('  ');
    const rest = row[6] ?? '';
    const room = Math.max(0, width - fixed.length - 2);
    return `${fixed}  ${rest.length > room ? `${rest.slice(0, Math.max(0, room - 1))}…` : rest}`.trimEnd();
  };
  return [fmt(head), ...rows.map(fmt)];
}
