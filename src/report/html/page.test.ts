import { describe, expect, it } from 'vitest';
import { TimelineBuilder } from '../../../test-support/assert.ts';
import type { Timeline } from '../../model/timeline.ts';
import { countsOf, type RunResult, type ScenarioResult } from '../results.ts';
import { renderContext } from './context.ts';
import { analyzeFailures } from './failures.ts';
import { expectationNote, renderHtml } from './page.ts';
import { recordRenderers, unrenderedRecords, type RecordRenderer } from './records.ts';
import { findScenario } from '../../scenarios/index.ts';

function drained(): TimelineBuilder {
  return new TimelineBuilder()
    .pod('backend-1')
    .pod('backend-2')
    .drain('backend-1', { at: 1000, step: 'delete', preStopMs: 300, exitAfterSigtermMs: 20, gracePeriodSeconds: 5 });
}

function resultOf(timeline: Timeline, verdict: ScenarioResult['verdict'] = 'pass'): ScenarioResult {
  return { id: 'backend-delete-http', profile: 'reference', verdict, durationMs: 2000, assertions: [], counts: countsOf(timeline), timeline };
}

function runOf(...scenarios: ScenarioResult[]): RunResult {
  return { tool: { name: 'zerodrop', version: '0.1.0', node: 'v24' }, provider: 'local', startedAt: new Date(0).toISOString(), durationMs: 5000, scenarios };
}

describe('the HTML report', () => {
  it("names the cluster's Kubernetes version, as its API server reported it, when the run had one", () => {
    const run = runOf(resultOf(drained().build()));
    expect(renderHtml(run)).not.toContain('Kubernetes <b>');
    expect(renderHtml({ ...run, provider: 'netns', kubernetesVersion: 'v1.36.3' })).toContain('provider <b>netns</b> · Kubernetes <b>v1.36.3</b> · ');
  });

  it('counts Timeline record kinds it has no renderer for, instead of hiding them', () => {
    const timeline = drained().build() as Timeline & { mysteryPackets: unknown[]; turnAllocations: Record<string, unknown> };
    timeline.mysteryPackets = [{}, {}, {}];
    timeline.turnAllocations = { a: 1, b: 2 };
    expect(unrenderedRecords(timeline)).toEqual([
      { key: 'mysteryPackets', count: 3 },
      { key: 'turnAllocations', count: 2 },
    ]);
    const html = renderHtml(runOf(resultOf(timeline)));
    expect(html).toContain('Also recorded, not drawn by this report version: <b>mysteryPackets</b> 3, <b>turnAllocations</b> 2');
  });

  it('draws a new record kind once a renderer for it is registered', () => {
    const timeline = drained().build() as Timeline & { mysteryPackets: { t: number }[] };
    timeline.mysteryPackets = [{ t: 1100 }, { t: 1150 }];
    const mystery: RecordRenderer = {
      key: 'mysteryPackets',
      noun: 'packet',
      rows: (ctx) => {
        const values = new Array<number>(ctx.buckets).fill(0);
        for (const p of timeline.mysteryPackets) values[ctx.bucketOf(p.t)] = (values[ctx.bucketOf(p.t)] ?? 0) + 1;
        return [{ type: 'bars', id: 'mystery', label: 'mystery', unit: 'per bucket', up: [{ name: 'seen', color: '#000', values }], down: [] }];
      },
    };
    const html = renderHtml(runOf(resultOf(timeline)), [...recordRenderers, mystery]);
    expect(html).toContain('data-row="mystery"');
    expect(html).not.toContain('not drawn by this report version');
  });

  it('keeps only failed requests individually: 50,000 requests make a small page', () => {
    const builder = drained();
    for (let i = 0; i < 50_000; i++) {
      const start = 100 + (i % 1800);
      builder.request({ start, end: start + 5, pod: i % 2 === 0 ? 'backend-1' : 'backend-2', outcome: i < 7 ? 'reset' : 'ok' });
    }
    const timeline = builder.build();
    const html = renderHtml(runOf(resultOf(timeline, 'fail')));
    expect(html.length).toBeLessThan(250_000);
    expect(html.match(/<tr><td class="n dim">/g)).toHaveLength(7);
    expect(html).toContain('7 of 50,000 requests failed');
  });

  it('aggregates throughput per 100 ms bucket by completion time', () => {
    const builder = drained();
    builder.request({ start: 90, end: 150, pod: 'backend-2' });
    builder.request({ start: 140, end: 199, pod: 'backend-2' });
    builder.request({ start: 180, end: 210, pod: 'backend-2', outcome: 'refused' });
    const timeline = builder.build();
    const ctx = renderContext(resultOf(timeline), timeline);
    expect(ctx.start).toBe(0);
    expect(ctx.bucketMs).toBe(100);
    const [row] = recordRenderers[0]!.rows!(ctx);
    if (row?.type !== 'bars') throw new Error('expected bars');
    expect(row.up[0]!.values.slice(0, 3)).toEqual([0, 2, 0]);
    expect(row.down[0]!.values.slice(0, 3)).toEqual([0, 0, 1]);
  });

  it('places each failure on its gateway pod, with the time since that pod\'s SIGTERM', () => {
    const b = new TimelineBuilder()
      .pod('gw-1', { workload: 'gateway', service: 'gateway' })
      .pod('gw-2', { workload: 'gateway', service: 'gateway' })
      .pod('backend-1')
      .drain('gw-1', { at: 1000, workload: 'gateway', service: 'gateway', preStopMs: 500, exitAfterSigtermMs: 50 });
    b.request({ start: 1490, end: 1510, pod: 'gw-1', gateway: 'gw-1', backendPod: 'backend-1', outcome: 'reset', error: 'ECONNRESET' });
    b.request({ start: 1400, end: 1450, pod: 'gw-2', gateway: 'gw-2', backendPod: 'backend-1' });
    const timeline = b.build();
    const analysis = analyzeFailures(timeline);
    expect(analysis.viaGateway).toBe(true);
    expect(analysis.rows).toHaveLength(1);
    expect(analysis.rows[0]).toMatchObject({ t: 1510, gateway: 'gw-1', backend: 'backend-1', outcome: 'reset', sinceSigterm: { pod: 'gw-1', ms: 10 } });
    expect(analysis.rows[0]?.phase).toMatch(/^after SIGTERM of gw-1/);
    expect(analysis.groups).toEqual([expect.objectContaining({ pod: 'gw-1', lifecycle: 'after SIGTERM', count: 1, minSinceSigterm: 10 })]);
    const html = renderHtml(runOf(resultOf(timeline, 'fail')));
    expect(html).toContain('<th>gateway pod</th><th>backend pod</th>');
    expect(html).toContain('+0.010 s <span class="dim">gw-1</span>');
  });

  it('renders a timeline from another version that lacks some record kinds', () => {
    const result = resultOf(drained().build());
    const timeline = result.timeline as Partial<Timeline>;
    delete timeline.harness;
    delete timeline.podOutput;
    delete timeline.connections;
    const html = renderHtml(runOf(result));
    expect(html).toContain('data-row="pods"');
    expect(html).toContain('No pod wrote any output.');
  });

  it('says how requests were attributed to pods, as the result records it', () => {
    const line = "requests to Service gateway are attributed to its gateway pods (gateway) through the load balancer's connection records";
    const html = renderHtml(runOf({ ...resultOf(drained().build()), attribution: [line] }));
    expect(html).toContain(`<p class="attribution">Attribution: requests to Service gateway are attributed to its gateway pods (gateway) through the load balancer&#39;s connection records</p>`);
    expect(renderHtml(runOf(resultOf(drained().build())))).not.toContain('class="attribution"');
  });

  it('names the options the run changed from the scenario\'s defaults, and only those', () => {
    const result = resultOf(drained().build());
    const defaults = findScenario(result.id)!.defaults;
    const html = renderHtml(runOf({ ...result, options: { ...defaults, preStopSeconds: 0 } }));
    expect(html).toContain(`<p class="options">Options other than the defaults: preStopSeconds=0 (default ${defaults['preStopSeconds']})</p>`);
    expect(renderHtml(runOf({ ...result, options: defaults }))).not.toContain('class="options"');
  });

  it('escapes pod output and names, and renders a skipped run without a timeline', () => {
    const timeline = drained().build();
    timeline.podOutput['backend-1'] = [{ t: 10, stream: 'stderr', line: '</script><script>alert(1)</script>' }];
    const skipped: ScenarioResult = { id: 'backend-idle-exit', profile: 'nginx', verdict: 'skipped', durationMs: 0, reason: 'nginx not installed <hint>', assertions: [], counts: { requests: 0, ok: 0, failed: 0, byOutcome: {}, connections: 0 } };
    const html = renderHtml(runOf(resultOf(timeline), skipped));
    expect(html).not.toContain('<script>alert(1)');
    expect(html).toContain('&#60;/script&#62;&#60;script&#62;alert(1)');
    expect(html).toContain('nginx not installed &#60;hint&#62;');
    expect(html.match(/<script>/g)).toHaveLength(1);
  });

  it('tells, for broken profiles and controls, whether the verdict is the expected one', () => {
    const of = (id: string, profile: string, verdict: ScenarioResult['verdict']) => expectationNote({ id, profile, verdict });
    expect(of('backend-delete-http', 'mutant-exit-on-sigterm', 'fail')).toMatchObject({ text: 'expected to fail', unexpected: false });
    expect(of('gateway-delete-http', 'nginx-naive', 'fail')?.title).toMatch(/naive twin/);
    expect(of('backend-delete-http', 'mutant-refuse-after-sigterm', 'pass')).toMatchObject({ text: 'passes by design', unexpected: false });
    expect(of('backend-delete-http', 'mutant-refuse-after-sigterm', 'pass')?.title).toMatch(/preStop sleep outlasts deprogramming/);
    // A mesh twin's reason comes from the mesh's own list (meshes.ts), not only the scenario's.
    expect(of('backend-long-request', 'linkerd-naive', 'pass')?.title).toMatch(/^not built to catch linkerd-naive: its one request is in flight/);
    // A broken profile that passes where it must fail is the harness's own failure: said loudly.
    expect(of('backend-delete-http', 'mutant-exit-on-sigterm', 'pass')).toMatchObject({ text: 'unexpected: should fail', unexpected: true });
    expect(of('force-delete', 'reference', 'fail')).toMatchObject({ text: 'expected to fail', title: expect.stringMatching(/control/) });
    // Drain-correct profiles, and results nobody judged, get no note.
    expect(of('backend-delete-http', 'reference', 'fail')).toBeUndefined();
    expect(of('backend-delete-http', 'mutant-exit-on-sigterm', 'inconclusive')).toBeUndefined();
    // The options the run used decide: with no preStop the scenario no longer says it passes this mutant.
    expect(expectationNote({ id: 'backend-delete-http', profile: 'mutant-refuse-after-sigterm', verdict: 'fail', options: { preStopSeconds: 0 } })).toBeUndefined();
    expect(expectationNote({ id: 'backend-delete-http', profile: 'mutant-refuse-after-sigterm', verdict: 'fail', options: { preStopSeconds: 2 } })).toMatchObject({ text: 'unexpected: should pass' });

    const timeline = drained().build();
    const html = renderHtml(runOf({ ...resultOf(timeline, 'pass'), profile: 'mutant-exit-on-sigterm' }));
    expect(html).toContain('<span class="expect unexpected" title="mutant-exit-on-sigterm is a mutant: it must fail">unexpected: should fail</span>');
  });
});

describe('the pods row of a reloaded pod', () => {
  it("draws a lane per process of the container, the retired one retiring from the reload until it is gone", () => {
    const timeline = new TimelineBuilder()
      .pod('gateway-1', { workload: 'gateway', service: 'gateway' })
      .process('gateway-1', 101, 'nginx: worker process', 50, 1600)
      .reload('gateway-1', 1000)
      .process('gateway-1', 202, 'nginx: worker process', 1030)
      .build();
    const html = renderHtml(runOf(resultOf(timeline)));
    expect(html).toContain('gateway-1 process 101 (nginx: worker process) retiring after the reload (t=1.000 s – 1.600 s)');
    expect(html).toContain('gateway-1 process 202 (nginx: worker process) (t=1.030 s');
    expect(html).toMatch(/reload start \(SIGHUP\) — gateway-1 at t=1\.000 s/);
  });
});
