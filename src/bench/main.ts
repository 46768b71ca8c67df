// `npm run bench`: every benchmark and the full zero-false-loss UDP figure (docs/benchmarks.md) in one run, on this
// machine, loopback only, each load bounded in time. Prints one table and writes reports/bench.json
// with the machine it ran on, and the table in Markdown (reports/bench.md). A tool that is not
// installed is a row saying so, not a failure.
//
//   npm run bench [-- --quick] [-- --only http|udp|provider|soak|scale|model]... [--workers N] [--out FILE] [--profile]
//                 [--scale-seconds S] [--scale-rate R] [--kube-version V[,V...]]
//
// `model` runs only when named: what the local provider's model of Kubernetes assumes, measured on a
// netns cluster of each release --kube-version names (default: every pinned one), printed as a
// table per release (model-timings.ts; docs/local-provider.md quotes it). Needs root.
//
// --scale-seconds: how long each run of the `scale` section sends (default 300, --quick 20);
// --scale-rate: requests/s of its runs through the gateway topology, on the local provider and on a
// netns cluster (default 2,000, what a 2-core machine holds through nginx locally); the
// generator-alone run sends 5,000/s, Envoy Gateway's e2e rate.
//
// --profile: the node:net HTTP clients (zerodrop's generator, autocannon, the node:net floor) write a
// CPU profile of every run next to the report (bench-profiles/), and the top of each client's best
// run is printed after the table: where the time between zerodrop and the floor goes. The profiler
// slows the clients it watches, so such a run's table is not one to quote.

import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';

import { parseFlags } from '../config/flags.ts';
import { UsageError } from '../config/usage-error.ts';
import { AddressPool } from '../providers/local/addresses.ts';
import { endProcess } from '../end-process.ts';
import { packageRoot } from '../paths.ts';
import { formatSelfTime } from './cpu-profile.ts';
import { httpBench, type ClientProfile } from './http-bench.ts';
import { machineFacts, type MachineFacts } from './machine.ts';
import { providerBench } from './provider-bench.ts';
import { scaleBench } from './scale-bench.ts';
import { soakBench } from './soak-bench.ts';
import { controlPlanePin, controlPlanePins, netnsKubeVersionProblem } from '../providers/netns/control-plane-binary.ts';
import { DEFAULT_COUNTS, modelTimingsBench, QUICK_COUNTS } from './model-timings.ts';
import { netnsBenchMissing } from './netns-udp.ts';
import { BENCH_NAMES, DEFAULT_BENCHES, formatMarkdown, formatTable, type BenchName, type BenchRow } from './table.ts';
import { udpBench } from './udp-bench.ts';

export interface BenchSettings {
  quick: boolean;
  only: BenchName[];
  workers: number;
  out: string;
  /** Write CPU profiles of the node:net HTTP clients into bench-profiles/ beside `out`. */
  profile: boolean;
  /** The `scale` section: seconds each run sends, and the gateway run's requests/s. */
  scaleSeconds: number;
  scaleRate: number;
  /** The `model` section: the releases it measures, each a pinned one (`v1.36.3`). */
  kubeVersions: string[];
}

/** The bench's flags, checked before anything starts; bad ones are a UsageError (exit 2). */
export function parseBenchArgs(argv: string[]): BenchSettings {
  const { values } = parseFlags('bench', argv, {
    quick: { type: 'boolean', default: false },
    only: { type: 'string', multiple: true },
    workers: { type: 'string' },
    out: { type: 'string', default: join(packageRoot, 'reports', 'bench.json') },
    profile: { type: 'boolean', default: false },
    'scale-seconds': { type: 'string' },
    'scale-rate': { type: 'string', default: '2000' },
    'kube-version': { type: 'string', multiple: true },
  });
  const only = (values.only ?? [...DEFAULT_BENCHES]).flatMap((s) => s.split(',')).map((name) => {
    if (!(BENCH_NAMES as readonly string[]).includes(name)) throw new UsageError(`bench: --only ${name}: use one or more of ${BENCH_NAMES.join(', ')}`);
    return name as BenchName;
  });
  const workers = values.workers === undefined ? Math.max(2, os.availableParallelism()) : /^\d+$/.test(values.workers) ? Number(values.workers) : NaN;
  if (!Number.isInteger(workers) || workers < 1) throw new UsageError(`bench: --workers ${values.workers}: expected a whole number from 1`);
  const whole = (flag: string, value: string) => {
    const n = /^\d+$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < 1) throw new UsageError(`bench: --${flag} ${value}: expected a whole number from 1`);
    return n;
  };
  const scaleSeconds = whole('scale-seconds', values['scale-seconds'] ?? (values.quick ? '20' : '300'));
  const scaleRate = whole('scale-rate', values['scale-rate']);
  const kubeVersions = (values['kube-version'] ?? controlPlanePins().map((p) => p.version)).flatMap((v) => v.split(',')).map((v) => {
    const problem = netnsKubeVersionProblem(v.trim());
    if (problem !== undefined) throw new UsageError(`bench: --kube-version ${v}: ${problem}`);
    return controlPlanePin(v.trim())!.version;
  });
  return { quick: values.quick, only, workers, out: values.out, profile: values.profile, scaleSeconds, scaleRate, kubeVersions: [...new Set(kubeVersions)] };
}

/** Where --profile writes: bench-profiles/ beside the report. */
function profileDirOf(out: string): string {
  return join(dirname(out), 'bench-profiles');
}

function progress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export interface BenchReport {
  startedAt: string;
  durationMs: number;
  quick: boolean;
  machine: MachineFacts;
  /** Load average over 1, 5, 15 minutes when the benchmark ended. */
  loadAverageEnd: number[];
  rows: BenchRow[];
  detail: Record<string, unknown>;
}

/**
 * Runs the selected benchmarks. Aborting `signal` (Ctrl-C) stops the running tool or load, tears
 * down what the benchmark started (servers, pods, temporary directories) and rejects.
 */
export async function runBench(s: BenchSettings, signal: AbortSignal): Promise<{ rows: BenchRow[]; report: BenchReport }> {
  const machine = await machineFacts(packageRoot);
  const rows: BenchRow[] = [];
  const detail: Record<string, unknown> = {};
  const started = new Date();
  const pool = await AddressPool.create();
  try {
    const host = pool.allocate();
    // One benchmark that breaks is a failed row; the others still run.
    const section = async (bench: BenchName, unit: BenchRow['unit'], run: () => Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }>) => {
      if (!s.only.includes(bench)) return;
      try {
        const r = await run();
        rows.push(...r.rows);
        detail[bench] = r.detail;
      } catch (error) {
        if (signal.aborted) throw error;
        const message = (error as Error).message.split('\n')[0] ?? String(error);
        progress(`${bench} failed: ${message}`);
        rows.push({ bench, tool: 'zerodrop', target: '-', unit, status: 'failed', note: message });
        detail[bench] = { error: (error as Error).stack ?? message };
      }
    };
    await section('http', 'req/s', () => {
      const profileDir = s.profile ? profileDirOf(s.out) : undefined;
      if (profileDir !== undefined) mkdirSync(profileDir, { recursive: true });
      const o = { host, connections: 50, durationMs: s.quick ? 3_000 : 10_000, rounds: s.quick ? 1 : 3, cwd: packageRoot, signal, ...(profileDir ? { profileDir } : {}) };
      progress(`http: zerodrop, autocannon, hey, wrk against nginx on ${host}, ${o.connections} connections, ${o.durationMs / 1000} s each, ${o.rounds} round(s)`);
      return httpBench(o);
    });
    await section('udp', 'pkt/s', () => {
      const rates = s.quick ? [10_000, 25_000, 50_000, 100_000] : [5_000, 10_000, 20_000, 50_000, 75_000, 100_000, 125_000, 150_000];
      progress(`udp: rate ladder ${rates.join(', ')} pkt/s, 50 flows`);
      return udpBench({ host, flows: 50, payloadBytes: 100, stepMs: s.quick ? 2_000 : 3_000, rates, cwd: packageRoot, signal });
    });
    await section('provider', 's', () => {
      progress(`provider: pod costs, then the catalog sequential and with --workers ${s.workers}`);
      return providerBench({ replicas: s.quick ? 2 : 4, preStopSeconds: 1, workers: s.workers, cwd: packageRoot, signal, ...(s.quick ? { scenarios: 4 } : {}) });
    });
    await section('soak', 'runs', () => {
      const o = s.quick ? { runs: 3, flows: 50, rate: 20_000, durationMs: 5_000 } : { runs: 20, flows: 50, rate: 20_000, durationMs: 30_000 };
      progress(`soak: ${o.runs} runs of ${o.rate} pkt/s across ${o.flows} flows for ${o.durationMs / 1000} s through the Service balancer`);
      return soakBench({
        ...o,
        signal,
        onRun: (run, res) => progress(`soak run ${run}/${o.runs}: ${res.verdict}, ${res.summary.sent} sent, ${res.summary.lost} lost, socket drops ${res.summary.socketDrops ?? '?'}`),
      });
    });
    await section('scale', 'MB', () => {
      progress(`scale: ${s.scaleSeconds} s through the gateway topology at ${s.scaleRate} req/s, on the local provider then on a netns cluster, then the generator alone at 5,000 req/s`);
      return scaleBench({ host, seconds: s.scaleSeconds, gatewayRate: s.scaleRate, generatorRate: 5_000, cwd: packageRoot, signal, onProgress: progress, failedReportsDir: join(dirname(s.out), 'bench-failed') });
    });
    await section('model', 'ms', async () => {
      const missing = await netnsBenchMissing();
      if (missing !== undefined) return { rows: [{ bench: 'model', tool: 'netns', target: '-', unit: 'ms', status: 'not installed', note: missing }], detail: { missing } };
      const counts = s.quick ? QUICK_COUNTS : DEFAULT_COUNTS;
      progress(`model: on a netns cluster of ${s.kubeVersions.join(', ')} in turn: ${counts.deletes} deletes, ${counts.rollouts} rolling updates, ${counts.evictions} evictions, ${counts.forceDeletes} force deletes each`);
      return modelTimingsBench({ versions: s.kubeVersions, counts, signal, log: progress });
    });
  } finally {
    pool.close();
  }
  const loadAverageEnd = os.loadavg().map((x) => Math.round(x * 100) / 100);
  const report: BenchReport = { startedAt: started.toISOString(), durationMs: Date.now() - started.getTime(), quick: s.quick, machine, loadAverageEnd, rows, detail };
  return { rows, report };
}

if (import.meta.main) {
  // The first Ctrl-C (or SIGTERM) stops the benchmark and tears down what it started; a second one
  // exits at once, and the servers' exit hook (server-process.ts) kills what is left.
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) process.exit(130);
    progress(`${signal}: stopping`);
    controller.abort(new Error('interrupted'));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const settings = parseBenchArgs(process.argv.slice(2));
    const { rows, report } = await runBench(settings, controller.signal);
    const m = report.machine;
    console.log(`zerodrop bench${settings.quick ? ' (--quick)' : ''}: ${m.cpuModel}, ${m.cores} cores, Node ${m.node}, load average ${m.loadAverage.join(' ')} at start`);
    if (Math.max(m.loadAverage[0] ?? 0, report.loadAverageEnd[0] ?? 0) > m.cores) {
      console.log(`the machine was busy (load average ${report.loadAverageEnd.join(' ')} at the end, ${m.cores} cores): every figure is a lower bound`);
    }
    console.log('ratio = zerodrop / tool (HTTP: requests/s; UDP: highest packet rate with zero loss)');
    if (settings.profile) console.log('--profile: the node:net clients ran under the CPU profiler, which slows them; quote figures from a run without it');
    console.log(formatTable(rows));
    mkdirSync(dirname(settings.out), { recursive: true });
    writeFileSync(settings.out, `${JSON.stringify(report, null, 2)}\n`);
    const markdown = settings.out.replace(/(\.json)?$/, '.md');
    writeFileSync(markdown, `${formatMarkdown(rows)}\n`);
    const modelTable = (report.detail['model'] as { table?: string } | undefined)?.table;
    if (modelTable) console.log(`\nwhat the local model assumes, per release (times as this process saw them):\n${modelTable}`);
    console.log(`\nwritten: ${settings.out}, ${markdown}`);
    const profiles = (report.detail['http'] as { profiles?: ClientProfile[] } | undefined)?.profiles ?? [];
    for (const p of profiles) console.log(`\n${p.tool}, best round, self time (${p.file}):\n${formatSelfTime(p.top)}`);
  } catch (error) {
    if (controller.signal.aborted) {
      console.error('bench: interrupted; nothing written');
      process.exitCode = 130;
    } else if (error instanceof UsageError) {
      console.error(error.message);
      process.exitCode = 2;
    } else {
      console.error((error as Error).message);
      process.exitCode = 1;
    }
  }
  await endProcess();
}
