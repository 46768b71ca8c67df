// The HTML report: one self-contained file (styles, data and script inlined; no network), in the
// spirit of Playwright's HTML report. Top: the scenario x profile matrix, filterable. Below: one
// section per scenario x profile with its timeline chart, assertions, failed requests, drain timings
// and pod output. Everything is rendered here, in Node; the inline script only filters and shows
// tooltips, so `zerodrop report DIR` and the tests get the same page without a browser.

import { readFileSync } from 'node:fs';
import { emptyTimeline, type Timeline } from '../../model/timeline.ts';
import type { Verdict } from '../../model/verdict.ts';
import { findProfile } from '../../profiles/index.ts';
import { expectedVerdict, toleration } from '../../scenarios/expected.ts';
import { findScenario } from '../../scenarios/index.ts';
import { SEEDS } from '../../scenarios/seeds.ts';
import { countParts, describeCounts, type RunResult, type ScenarioResult } from '../results.ts';
import { legendHtml, renderChart } from './chart.ts';
import { drainWindow, esc, num, renderContext, sec, type RenderContext } from './context.ts';
import { recordRenderers, unrenderedRecords, type RecordRenderer } from './records.ts';
import type { ReportSection } from './rows.ts';

const STYLES = readFileSync(new URL('./styles.css', import.meta.url), 'utf8');
const SCRIPT = readFileSync(new URL('./client.js', import.meta.url), 'utf8');

const VERDICTS: Verdict[] = ['fail', 'inconclusive', 'pass', 'skipped'];
const VERDICT_WORD: Record<Verdict, string> = { pass: 'passed', fail: 'failed', inconclusive: 'inconclusive', skipped: 'skipped' };

export function anchorOf(r: Pick<ScenarioResult, 'id' | 'profile'>): string {
  return `s-${r.id}--${r.profile}`.replace(/[^A-Za-z0-9_-]/g, '_');
}

function badge(v: Verdict): string {
  return `<span class="badge ${v}">${VERDICT_WORD[v]}</span>`;
}

function duration(ms: number): string {
  return ms >= 60_000 ? `${Math.floor(ms / 60_000)} min ${Math.round((ms % 60_000) / 1000)} s` : `${(ms / 1000).toFixed(1)} s`;
}

/**
 * For a result of a broken profile (a mutant, a naive twin) or a control, what zerodrop expects of it
 * (src/scenarios/expected.ts): a reader seeing red there should know it is the point, and a pass of
 * a broken profile says whether the scenario is built to let it through. Undefined for drain-correct
 * profiles (a fail there is just a fail) and for results not judged.
 */
export function expectationNote(r: Pick<ScenarioResult, 'id' | 'profile' | 'verdict' | 'options'>): { text: string; title: string; unexpected: boolean } | undefined {
  const scenario = findScenario(r.id);
  const profile = findProfile(r.profile);
  if (!scenario || !profile || (r.verdict !== 'pass' && r.verdict !== 'fail')) return undefined;
  if (!scenario.control && profile.kind !== 'mutant' && profile.kind !== 'naive' && profile.kind !== 'ablation') return undefined;
  const options = r.options ?? {};
  const expected = expectedVerdict(scenario, profile, options);
  if (expected === undefined) return undefined;
  const why = scenario.control
    ? 'a control: every profile must fail it'
    : expected === 'pass'
      ? `not built to catch ${profile.name}: ${toleration(scenario, profile.name, options) ?? ''}`
      : `${profile.name} is ${profile.kind === 'ablation' ? `${profile.ablation?.profile} without its drain setting ${profile.ablation?.setting}` : `a ${profile.kind === 'naive' ? 'naive twin' : 'mutant'}`}: it must fail`;
  if (r.verdict !== expected) return { text: `unexpected: should ${expected === 'pass' ? 'pass' : 'fail'}`, title: why, unexpected: true };
  return { text: expected === 'pass' ? 'passes by design' : 'expected to fail', title: why, unexpected: false };
}

function expectationHtml(r: ScenarioResult): string {
  const note = expectationNote(r);
  return note ? `<span class="expect${note.unexpected ? ' unexpected' : ''}" title="${esc(note.title)}">${esc(note.text)}</span>` : '';
}

function matrixHtml(run: RunResult): string {
  const ids = [...new Set(run.scenarios.map((s) => s.id))];
  const profiles = [...new Set(run.scenarios.map((s) => s.profile))];
  const head = `<tr><th>scenario</th>${profiles.map((p) => `<th data-profile="${esc(p)}">${esc(p)}</th>`).join('')}</tr>`;
  const body = ids
    .map((id) => {
      const def = findScenario(id);
      const cells = profiles
        .map((p) => {
          const r = run.scenarios.find((s) => s.id === id && s.profile === p);
          if (!r) return `<td class="empty" data-profile="${esc(p)}">—</td>`;
          const counts =
            r.verdict === 'skipped'
              ? `<span class="dim" title="${esc(r.reason ?? '')}">${esc(truncate(r.reason ?? 'skipped', 60))}</span>`
              : countParts(r.counts)
                  .map((part) => `<span class="${part.dropped > 0 ? 'bad' : 'dim'}">${esc(part.text)}</span>`)
                  .join(' · ');
          return (
            `<td class="cell ${r.verdict}" data-verdict="${r.verdict}" data-profile="${esc(p)}" data-scenario="${esc(id)}">` +
            `<a href="#${anchorOf(r)}">${badge(r.verdict)}${expectationHtml(r)}<span class="cnt">${counts}</span><span class="dur">${duration(r.durationMs)}</span></a></td>`
          );
        })
        .join('');
      return `<tr data-scenario="${esc(id)}"><th class="sid"><a>${esc(id)}</a>${def?.control ? ' <span class="tag">control</span>' : ''}<div class="desc">${esc(truncate(def?.description ?? '', 110))}</div></th>${cells}</tr>`;
    })
    .join('');
  return `<table class="matrix" id="matrix"><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

function filtersHtml(run: RunResult): string {
  const count = (v: Verdict) => run.scenarios.filter((s) => s.verdict === v).length;
  const chips = [`<button class="chip on" data-verdict="all">all <b>${run.scenarios.length}</b></button>`]
    .concat(VERDICTS.map((v) => `<button class="chip ${v}" data-verdict="${v}"${count(v) === 0 ? ' disabled' : ''}>${VERDICT_WORD[v]} <b>${count(v)}</b></button>`))
    .join('');
  const options = (values: string[]) => values.map((v) => `<option value="${esc(v)}">${esc(v)}</option>`).join('');
  return (
    `<div class="filters" id="filters">${chips}` +
    `<label>profile <select id="f-profile"><option value="">all</option>${options([...new Set(run.scenarios.map((s) => s.profile))])}</select></label>` +
    `<label>scenario <select id="f-scenario"><option value="">all</option>${options([...new Set(run.scenarios.map((s) => s.id))])}</select></label></div>`
  );
}

function assertionsHtml(r: ScenarioResult): string {
  if (r.assertions.length === 0) return '<p class="dim">No assertion was evaluated.</p>';
  const order = { fail: 0, inconclusive: 1, pass: 2 } as const;
  const rows = [...r.assertions]
    .sort((a, b) => order[a.verdict] - order[b.verdict])
    .map((a) => `<tr class="${a.verdict}"><td>${badge(a.verdict)}</td><td class="an">${esc(a.name)}</td><td>${esc(a.message)}</td></tr>`)
    .join('');
  return `<table class="grid assertions"><tbody>${rows}</tbody></table>`;
}

function scenarioHtml(r: ScenarioResult, renderers: readonly RecordRenderer[]): string {
  const def = findScenario(r.id);
  const anchor = anchorOf(r);
  const meta = [
    `${duration(r.durationMs)}`,
    describeCounts(r.counts),
    r.counts.connections > 0 ? `${num(r.counts.connections)} connections` : '',
    def ? `role ${def.role}` : '',
  ]
    .filter((s) => s !== '')
    .map(esc)
    .join(' · ');
  const seeds = def
    ? ` · seeds ${def.seeds.map((seed) => (SEEDS[seed] ? `<a href="${esc(SEEDS[seed].url)}" title="${esc(SEEDS[seed].title)}">${seed}</a>` : seed)).join(', ')}`
    : '';
  const head =
    `<summary><span class="chev"></span>${badge(r.verdict)}${expectationHtml(r)}<span class="title">${esc(r.id)}</span><span class="on">on</span><span class="prof">${esc(r.profile)}</span>` +
    `<span class="meta">${meta}${seeds}</span></summary>`;
  let body = def ? `<p class="desc">${esc(def.description)}</p>` : '';
  const note = expectationNote(r);
  if (note) body += `<p class="expectation${note.unexpected ? ' unexpected' : ''}"><b>${esc(note.text)}</b>: ${esc(note.title)}</p>`;
  for (const line of r.attribution ?? []) body += `<p class="attribution">Attribution: ${esc(line)}</p>`;
  // The values a reader cannot take from `zerodrop list`: a cluster's own, --nightly's, --set's.
  const changed = def && r.options ? Object.entries(r.options).filter(([key, value]) => def.defaults[key] !== value) : [];
  if (changed.length > 0) body += `<p class="options">Options other than the defaults: ${esc(changed.map(([key, value]) => `${key}=${value} (default ${def?.defaults[key] ?? '-'})`).join(', '))}</p>`;
  if (r.reason) body += `<p class="reason ${r.verdict}"><b>${r.verdict === 'skipped' ? 'Skipped' : 'Stopped'}:</b> ${esc(r.reason)}</p>`;

  const sections: (ReportSection & { rank: number })[] = [{ id: 'assertions', title: 'Assertions', html: assertionsHtml(r), order: 10, rank: -1 }];
  if (r.timeline) {
    // A results.json from another zerodrop version may lack a record kind: draw it as empty.
    const timeline: Timeline = { ...emptyTimeline(r.timeline.originEpochMs ?? 0), ...r.timeline };
    r = { ...r, timeline };
    const ctx = renderContext(r, timeline);
    const rowsOf = (c: RenderContext) => renderers.flatMap((renderer) => renderer.rows?.(c) ?? []);
    renderers.forEach((renderer, rank) => {
      for (const s of renderer.sections?.(ctx) ?? []) sections.push({ ...s, rank });
    });
    const views = [{ id: 'run', name: 'whole run', ctx }];
    const window = drainWindow(timeline, ctx);
    if (window) views.push({ id: 'drain', name: `drain window, t=${sec(window.start, 1)} – ${sec(window.end, 1)}`, ctx: renderContext(r, timeline, window) });
    const tabs =
      views.length > 1
        ? `<span class="views">${views.map((v, i) => `<button class="view${i === 0 ? ' on' : ''}" data-view="${v.id}">${esc(v.name)}</button>`).join('')}</span>`
        : '';
    const charts = views
      .map((v, i) => {
        const chart = renderChart(v.ctx, rowsOf(v.ctx), `chart-${anchor}-${v.id}`);
        return `<div class="view-body" data-view="${v.id}"${i === 0 ? '' : ' hidden'}>${chart}</div>`;
      })
      .join('');
    body += `<div class="chartbox"><div class="charthead"><span>Timeline ${tabs} <span class="dim">t = seconds on the run clock, started ${esc(new Date(timeline.originEpochMs).toISOString())}</span></span>${legendHtml()}</div>${charts}</div>`;
    const unknown = unrenderedRecords(timeline, renderers);
    if (unknown.length > 0) {
      body += `<p class="unknown">Also recorded, not drawn by this report version: ${unknown.map((u) => `<b>${esc(u.key)}</b> ${num(u.count)}`).join(', ')} (see results.json).</p>`;
    }
  } else if (r.verdict !== 'skipped') {
    body += '<p class="dim">No timeline was recorded for this run.</p>';
  }
  sections.sort((a, b) => a.order - b.order || a.rank - b.rank);
  body += sections.map((s) => `<section class="part" data-part="${esc(s.id)}"><h3>${esc(s.title)}</h3>${s.html}</section>`).join('');
  const open = r.verdict === 'fail' || r.verdict === 'inconclusive' ? ' open' : '';
  return (
    `<details class="scenario ${r.verdict}" id="${anchor}" data-verdict="${r.verdict}" data-profile="${esc(r.profile)}" data-scenario="${esc(r.id)}"${open}>` +
    `${head}<div class="body">${body}</div></details>`
  );
}

function truncate(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n - 1)}…` : s;
}

export function renderHtml(run: RunResult, renderers: readonly RecordRenderer[] = recordRenderers): string {
  const count = (v: Verdict) => run.scenarios.filter((s) => s.verdict === v).length;
  const overall: Verdict = count('fail') > 0 ? 'fail' : count('inconclusive') > 0 ? 'inconclusive' : run.scenarios.every((s) => s.verdict === 'skipped') ? 'skipped' : 'pass';
  const started = new Date(run.startedAt);
  const summary = VERDICTS.filter((v) => count(v) > 0)
    .map((v) => `<span class="sum ${v}"><b>${count(v)}</b> ${VERDICT_WORD[v]}</span>`)
    .join('');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>zerodrop: ${count('fail')} failed, ${count('pass')} passed</title>
<style>${STYLES}</style></head>
<body>
<header class="top ${overall}"><div class="brand">zerodrop <span>drain conformance report</span></div>
<div class="runmeta">${esc(started.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC'))} · provider <b>${esc(run.provider)}</b>${run.kubernetesVersion ? ` · Kubernetes <b>${esc(run.kubernetesVersion)}</b>` : ''} · ${duration(run.durationMs)} · ${esc(run.tool.name)} ${esc(run.tool.version)} · node ${esc(run.tool.node)}</div>
<div class="sums">${badge(overall)}${summary}</div></header>
<main>
<section class="matrixbox"><h2>Scenarios × profiles</h2>${filtersHtml(run)}${matrixHtml(run)}</section>
<section id="scenarios">${run.scenarios.map((r) => scenarioHtml(r, renderers)).join('\n')}</section>
<p class="none" id="none" hidden>No scenario matches the filter.</p>
</main>
<footer>t is the run's monotonic clock in seconds. Phases follow the Kubernetes pod termination sequence. Generated by zerodrop ${esc(run.tool.version)}; data in results.json beside this file. Total ${sec(run.durationMs, 1)}.</footer>
<div id="tip" class="tip" hidden></div>
<script>${SCRIPT}</script>
</body></html>
`;
}
