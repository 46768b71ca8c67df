// What the local provider costs a run: how long a pod takes from creation to ready, how much a
// deletion takes beyond the waits it was configured with (the preStop sleep; the backend's own drain
// is set to exit at once), and the wall time of the whole local catalog on the reference profile,
// one scenario at a time and `workers` at once (runMatrix's concurrency, `zerodrop run --workers`).

import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { Timeline } from '../model/timeline.ts';
import { Recorder } from '../observe/recorder.ts';
import { referenceProfile } from '../profiles/reference.ts';
import { LocalProvider } from '../providers/local/local-provider.ts';
import { BACKEND, backendTopology } from '../scenarios/backend-topology.ts';
import { catalog } from '../scenarios/index.ts';
import { readResults } from '../report/results.ts';
import type { BenchRow } from './table.ts';
import { runTool } from './tools.ts';

export interface ProviderBenchOptions {
  replicas: number;
  preStopSeconds: number;
  /** Scenarios of the catalog to time (the whole catalog except controls by default). */
  scenarios?: number;
  workers: number;
  /** The repository root (where src/cli/main.ts is). */
  cwd: string;
  signal: AbortSignal;
}

function at(timeline: Timeline, kind: string, pod: string): number | undefined {
  return timeline.events.find((e) => e.kind === kind && e.pod === pod)?.t;
}

function median(xs: number[]): number | undefined {
  if (xs.length === 0) return undefined;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor((s.length - 1) / 2)];
}

async function podCosts(o: ProviderBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const recorder = new Recorder();
  await using provider = new LocalProvider({ recorder, runId: `bench-${randomBytes(3).toString('hex')}`, cwd: o.cwd });
  const topology = backendTopology(referenceProfile, { replicas: o.replicas, preStopSeconds: o.preStopSeconds, graceSeconds: 30, programmingDelayMs: 0 });
  // The backend exits as soon as it is idle after SIGTERM: what remains is the provider's own cost.
  for (const w of topology.workloads) w.env = { ...w.env, DRAIN_IDLE_MS: '0', DRAIN_IDLE_CLOSE_MS: '0' };
  await provider.deploy(topology, { timeoutMs: 60_000, signal: o.signal });
  const first = provider.pods(BACKEND).map((p) => p.name);
  for (const pod of first) {
    await provider.deletePod(pod);
    await provider.waitForPodGone(pod, { timeoutMs: 60_000, signal: o.signal });
  }
  await provider.waitForRollout(BACKEND, { timeoutMs: 60_000, signal: o.signal });
  const tl = recorder.timeline;
  const pods = [...new Set(tl.events.filter((e) => e.kind === 'pod-created' && e.pod !== undefined).map((e) => e.pod as string))];
  const ready = pods.flatMap((p) => {
    const c = at(tl, 'pod-created', p);
    const r = at(tl, 'pod-ready', p);
    return c !== undefined && r !== undefined ? [r - c] : [];
  });
  const waits = o.preStopSeconds * 1000;
  const exit = first.flatMap((p) => {
    const d = at(tl, 'delete-issued', p);
    const x = at(tl, 'exit', p);
    return d !== undefined && x !== undefined ? [x - d - waits] : [];
  });
  const removed = first.flatMap((p) => {
    const d = at(tl, 'delete-issued', p);
    const x = at(tl, 'pod-removed', p);
    return d !== undefined && x !== undefined ? [x - d - waits] : [];
  });
  const row = (target: string, xs: number[], note: string): BenchRow => {
    const r: BenchRow = { bench: 'provider', tool: 'local provider', target, connections: xs.length, unit: 'ms', status: xs.length > 0 ? 'ok' : 'failed' };
    const m = median(xs);
    if (m !== undefined) r.value = m;
    r.note = `median of ${xs.length}, max ${Math.max(...xs).toFixed(1)} ms; ${note}`;
    return r;
  };
  return {
    rows: [
      row('pod created -> ready', ready, 'node process start + readiness probe every 250 ms'),
      row('delete -> exit, beyond preStop', exit, `preStop sleep ${o.preStopSeconds} s subtracted`),
      row('delete -> removed, beyond preStop', removed, `preStop sleep ${o.preStopSeconds} s subtracted`),
    ],
    detail: { readyMs: ready, exitOverheadMs: exit, removedOverheadMs: removed },
  };
}

/**
 * `zerodrop run` over the catalog on the reference profile, timed as a user waits for it: the CLI in
 * a process of its own (as the HTTP generator's bench runs), so nothing the bench did before (its
 * heap, the UDP ladders' records) weighs on the scenarios' measurements.
 */
async function catalogTime(o: ProviderBenchOptions, concurrency: number) {
  const scenarios = catalog.filter((s) => !s.control).slice(0, o.scenarios);
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-bench-catalog-'));
  try {
    const args = [join(o.cwd, 'src/cli/main.ts'), 'run', '--profile', referenceProfile.name, '--workers', String(concurrency), '--reporter', 'json', '--report-dir', dir];
    for (const s of scenarios) args.push('--scenario', s.id);
    const started = performance.now();
    // Interrupted, the run tears its pods down itself (it may take 10 s), and only then is it killed.
    const r = await runTool(process.execPath, args, 30 * 60_000, o.signal, { forceKillAfterMs: 20_000, ownGroup: true });
    const durationMs = performance.now() - started;
    // 0: all passed, 1: some did not; anything else is no run at all.
    if (r.exitCode !== 0 && r.exitCode !== 1) throw new Error(`zerodrop run exited ${r.exitCode}: ${r.output.trim().split('\n').at(-1) ?? ''}`);
    const run = await readResults(dir);
    const verdicts: Record<string, number> = {};
    for (const s of run.scenarios) verdicts[s.verdict] = (verdicts[s.verdict] ?? 0) + 1;
    return {
      durationMs,
      scenarios: scenarios.length,
      verdicts,
      byScenario: run.scenarios.map((s) => ({
        id: s.id,
        verdict: s.verdict,
        durationMs: s.durationMs,
        requests: s.counts.requests,
        ...(s.reason ? { reason: s.reason } : {}),
        notPassed: s.assertions.filter((a) => a.verdict !== 'pass').map((a) => `${a.verdict} ${a.name}: ${a.message}`),
      })),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function providerBench(o: ProviderBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const pods = await podCosts(o);
  const sequential = await catalogTime(o, 1);
  const parallel = await catalogTime(o, o.workers);
  const verdictText = (v: Record<string, number>) => Object.entries(v).map(([k, n]) => `${n} ${k}`).join(', ');
  const rows: BenchRow[] = [
    ...pods.rows,
    { bench: 'provider', tool: 'zerodrop run', target: 'catalog on reference, sequential', connections: sequential.scenarios, value: sequential.durationMs / 1000, unit: 's', loss: verdictText(sequential.verdicts), status: 'ok' },
    {
      bench: 'provider',
      tool: `zerodrop run --workers ${o.workers}`,
      target: 'catalog on reference, parallel',
      connections: parallel.scenarios,
      value: parallel.durationMs / 1000,
      unit: 's',
      loss: verdictText(parallel.verdicts),
      status: 'ok',
      note: `${(sequential.durationMs / parallel.durationMs).toFixed(2)}x faster than sequential`,
    },
  ];
  return { rows, detail: { ...pods.detail, sequential, parallel } };
}
