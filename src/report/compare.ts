// Runs side by side: one column per run, headed by the Kubernetes release its cluster's API server
// reported (results.json's kubernetesVersion), one row per scenario x profile. A version matrix
// (the nightly's kind versions, netns runs at each --kube-version) writes a report directory per
// version; this is where a change of verdict from one release to the next shows.
//
// Only results.json is read: verdicts and counts, never the records files, so comparing the
// artifacts of long nightly runs stays cheap.

import { readFile, mkdir, writeFile } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { Verdict } from '../model/verdict.ts';
import { esc } from './html/context.ts';
import { expectationNote } from './html/page.ts';
import { describeCounts, RESULTS_FILE, type RunResult, type ScenarioResult } from './results.ts';

export interface ComparedRun {
  /** The report directory it was read from. */
  dir: string;
  run: RunResult;
}

export interface Comparison {
  /** One a run, in the order given. */
  columns: string[];
  /** Every scenario x profile any run has, in the order they first appear; `cells` one a column. */
  rows: { scenario: string; profile: string; cells: (ScenarioResult | undefined)[] }[];
}

/** Reads DIR/results.json of each directory; the error names the file. */
export async function readRuns(dirs: readonly string[]): Promise<ComparedRun[]> {
  return Promise.all(
    dirs.map(async (dir) => {
      const file = join(resolve(dir), RESULTS_FILE);
      let text;
      try {
        text = await readFile(file, 'utf8');
      } catch (error) {
        throw new Error(`${file}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : (error as Error).message}`, { cause: error });
      }
      const run = JSON.parse(text) as RunResult;
      if (!Array.isArray(run.scenarios)) throw new Error(`${file}: not a zerodrop results.json (no scenarios)`);
      return { dir, run };
    }),
  );
}

/**
 * The column header: the release the cluster ran; a run without one (local, or written before
 * results.json recorded it) is named by its provider and directory. Two runs of one release are told
 * apart by their directories.
 */
export function columnsOf(runs: readonly ComparedRun[]): string[] {
  const base = runs.map(({ run, dir }) => (run.kubernetesVersion ? `Kubernetes ${run.kubernetesVersion}` : `${run.provider} (${basename(resolve(dir))})`));
  return base.map((label, i) => (base.indexOf(label) !== base.lastIndexOf(label) && runs[i]!.run.kubernetesVersion ? `${label} (${basename(resolve(runs[i]!.dir))})` : label));
}

export function compare(runs: readonly ComparedRun[]): Comparison {
  const rows: Comparison['rows'] = [];
  for (const [i, { run }] of runs.entries()) {
    for (const s of run.scenarios) {
      let row = rows.find((r) => r.scenario === s.id && r.profile === s.profile);
      if (!row) rows.push((row = { scenario: s.id, profile: s.profile, cells: runs.map(() => undefined) }));
      row.cells[i] = s;
    }
  }
  return { columns: columnsOf(runs), rows };
}

/** A cell's words: the verdict, and what zerodrop expected of a mutant, naive twin or control when it differs or is the point. */
function cellText(r: ScenarioResult | undefined): string {
  if (!r) return '—';
  const note = expectationNote(r);
  return note ? `${r.verdict} (${note.text})` : r.verdict;
}

/** Whether the runs disagree on this row: the rows a reader of a version matrix looks for. */
export function differs(row: Comparison['rows'][number]): boolean {
  return new Set(row.cells.map((c) => c?.verdict ?? 'absent')).size > 1;
}

/** Markdown (GitHub renders it: the nightly's job summary). */
export function comparisonMarkdown(c: Comparison): string {
  const cell = (text: string): string => text.replace(/\|/g, '\\|');
  const lines = [
    `| scenario | profile | ${c.columns.map(cell).join(' | ')} |`,
    `| --- | --- | ${c.columns.map(() => '---').join(' | ')} |`,
    ...c.rows.map((row) => `| ${row.scenario} | ${row.profile} | ${row.cells.map((r) => cell(cellText(r))).join(' | ')} |${differs(row) ? ' differs' : ''}`),
  ];
  const differing = c.rows.filter(differs).length;
  return `${lines.join('\n')}\n\n${differing === 0 ? 'Every run gave the same verdicts.' : `${differing} of ${c.rows.length} rows differ between runs.`}\n`;
}

const COLOR: Record<Verdict, string> = { pass: '#1a7f37', fail: '#cf222e', inconclusive: '#9a6700', skipped: '#6e7781' };

/** One self-contained page, no script: the table, each cell with its counts (or why it was skipped) as its title. */
export function comparisonHtml(c: Comparison): string {
  const td = (r: ScenarioResult | undefined): string => {
    if (!r) return '<td class="absent">—</td>';
    const note = expectationNote(r);
    const title = r.reason ?? describeCounts(r.counts);
    return `<td title="${esc(title)}"><span style="color:${COLOR[r.verdict]}">${esc(r.verdict)}</span>${note ? ` <small class="${note.unexpected ? 'unexpected' : 'dim'}">${esc(note.text)}</small>` : ''}</td>`;
  };
  const rows = c.rows
    .map((row) => `<tr${differs(row) ? ' class="differs"' : ''}><th>${esc(row.scenario)}</th><td>${esc(row.profile)}</td>${row.cells.map(td).join('')}</tr>`)
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>zerodrop: runs compared</title>
<style>
body{font:14px system-ui,sans-serif;margin:2em;color:#1f2328}
table{border-collapse:collapse}th,td{border:1px solid #d0d7de;padding:4px 10px;text-align:left}
thead th{background:#f6f8fa}tr.differs{background:#fff8c5}.dim{color:#6e7781}.unexpected{color:#cf222e;font-weight:600}.absent{color:#6e7781}
</style></head><body>
<h1>Runs compared</h1>
<p>One column per run, headed by the Kubernetes release its API server reported; highlighted rows differ between runs.</p>
<table><thead><tr><th>scenario</th><th>profile</th>${c.columns.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead>
<tbody>
${rows}
</tbody></table>
</body></html>
`;
}

/** Writes compare.html and compare.md into `outDir`; returns their paths. */
export async function writeComparison(runs: readonly ComparedRun[], outDir: string): Promise<{ html: string; markdown: string }> {
  const c = compare(runs);
  await mkdir(outDir, { recursive: true });
  const html = join(outDir, 'compare.html');
  const markdown = join(outDir, 'compare.md');
  await writeFile(html, comparisonHtml(c));
  await writeFile(markdown, comparisonMarkdown(c));
  return { html, markdown };
}
