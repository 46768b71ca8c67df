// HTML of the detail blocks under a scenario's chart: failed requests, drain timings, pod output.

import type { Timeline } from '../../model/timeline.ts';
import { esc, num, sec, signedSec } from './context.ts';
import type { DrainTiming } from './drains.ts';
import type { FailureAnalysis } from './failures.ts';

/** Lines of output kept per pod; a crash-looping pod must not make the page huge. */
export const OUTPUT_LINES = 400;

export function failuresHtml(f: FailureAnalysis): string {
  if (f.total === 0) return `<p class="ok-note">All ${num(f.requests)} requests succeeded.</p>`;
  const outcomes = Object.entries(f.byOutcome)
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${num(n)} ${esc(k)}`)
    .join(', ');
  const groups = f.groups
    .map(
      (g) => `<tr><td>${esc(g.pod)}</td><td>${esc(g.lifecycle)}</td><td class="n">${num(g.count)}</td>` +
        `<td class="n">${sec(g.first)} – ${sec(g.last)}</td>` +
        `<td class="n">${g.minSinceSigterm === undefined ? '—' : `${signedSec(g.minSinceSigterm)} – ${signedSec(g.maxSinceSigterm ?? g.minSinceSigterm)}`}${g.sigtermPod !== undefined ? ` <span class="dim">of ${esc(g.sigtermPod)}</span>` : ''}</td></tr>`,
    )
    .join('');
  const gw = f.viaGateway;
  const rows = f.rows
    .map(
      (r, i) =>
        `<tr><td class="n dim">${i + 1}</td><td class="n">${sec(r.t)}</td>` +
        `<td class="n">${r.sinceSigterm ? `${signedSec(r.sinceSigterm.ms)} <span class="dim">${esc(r.sinceSigterm.pod)}</span>` : '—'}</td>` +
        (gw ? `<td>${esc(r.gateway ?? r.pod ?? '—')}</td><td>${esc(r.backend ?? '—')}</td>` : `<td>${esc(r.pod ?? '—')}</td>`) +
        `<td><span class="outcome">${esc(r.outcome)}</span></td>` +
        `<td>${esc(r.phase)}</td><td class="n">${sec(r.durationMs)}</td><td class="dim">${esc(r.load)}${r.error !== undefined ? ` · ${esc(r.error)}` : ''}</td></tr>`,
    )
    .join('');
  const more = f.total > f.rows.length ? `<p class="dim">The first ${num(f.rows.length)} of ${num(f.total)} failed requests are listed.</p>` : '';
  return (
    `<p class="fail-note"><b>${num(f.total)} of ${num(f.requests)} requests failed</b> (${outcomes}), ` +
    `from t=${sec(f.rows[0]?.t)} to t=${sec(f.groups.reduce((m, g) => Math.max(m, g.last), -Infinity))}.</p>` +
    `<table class="grid groups"><thead><tr><th>${gw ? 'gateway / pod' : 'pod'}</th><th>phase</th><th>failed</th><th>when</th><th>after SIGTERM</th></tr></thead><tbody>${groups}</tbody></table>` +
    `<table class="grid failures"><thead><tr><th>#</th><th>t</th><th>after SIGTERM</th>${gw ? '<th>gateway pod</th><th>backend pod</th>' : '<th>pod</th>'}<th>outcome</th><th>phase</th><th>took</th><th>load · error</th></tr></thead><tbody>${rows}</tbody></table>${more}`
  );
}

export function drainsHtml(drains: readonly DrainTiming[]): string {
  if (drains.length === 0) return '<p class="dim">No pod was deleted.</p>';
  const rows = drains
    .map((d) => {
      const lc = d.lifecycle;
      return (
        `<tr><td>${esc(lc.pod)}</td><td class="n">${sec(lc.deleteIssued)}</td><td class="n">${lc.gracePeriodSeconds ?? '—'} s</td>` +
        `<td class="n">${sec(d.deleteToDeprogrammed)}</td><td class="n">${sec(d.deleteToSigterm)}</td><td class="n">${sec(d.sigtermToExit)}</td>` +
        `<td class="n">${sec(d.deleteToExit)}</td><td class="n">${d.openAtSigterm ?? '—'}</td><td class="n">${d.lastCloseAfterSigterm === undefined ? '—' : signedSec(d.lastCloseAfterSigterm)}</td>` +
        `<td class="n${d.newAfterDeprogram > 0 ? ' bad' : ''}">${d.newAfterDeprogram}</td><td class="n">${num(d.servedAfterSigterm)}</td>` +
        `<td class="${lc.killed !== undefined ? 'bad' : ''}">${esc(d.ending)}</td></tr>`
      );
    })
    .join('');
  return (
    `<table class="grid drains"><thead><tr><th>pod</th><th>delete at</th><th>grace</th><th>delete → LB deprogrammed</th><th>delete → SIGTERM</th>` +
    `<th>SIGTERM → exit</th><th>delete → exit</th><th>conns open at SIGTERM</th><th>last conn closed</th><th>new conns after deprogram</th>` +
    `<th>served after SIGTERM</th><th>ending</th></tr></thead><tbody>${rows}</tbody></table>`
  );
}

export function podOutputHtml(timeline: Timeline): string {
  const pods = Object.entries(timeline.podOutput ?? {});
  if (pods.length === 0) return '<p class="dim">No pod wrote any output.</p>';
  return pods
    .map(([pod, lines]) => {
      const shown = lines.slice(0, OUTPUT_LINES);
      const text = shown.map((l) => `<span class="t">${(l.t / 1000).toFixed(3).padStart(8)}</span> <span class="${l.stream}">${l.stream === 'stderr' ? 'err' : 'out'}</span> ${esc(l.line)}`).join('\n');
      const cut = lines.length > shown.length ? `\n<span class="dim">… ${num(lines.length - shown.length)} more lines not shown</span>` : '';
      return `<details class="output"><summary>${esc(pod)} <span class="dim">${num(lines.length)} line${lines.length === 1 ? '' : 's'}</span></summary><pre>${text}${cut}</pre></details>`;
    })
    .join('');
}
