// The `scale` bench (docs/benchmarks.md): what a long, heavy run costs. (a) A run through the local gateway
// topology (nginx, gateway-delete-http) at `gatewayRate` requests/s for `seconds`, as the CLI runs
// it; (b) zerodrop's generator alone at `generatorRate` against nginx for as long. For each: the
// process's peak resident memory, bytes per recorded request in memory and on disk, the time to
// evaluate and to write the reports; and beside them the same figures of the format before the
// records file (every request an object, every request in results.json), measured on the same
// requests in the same run.

import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluate } from '../assert/index.ts';
import { findProfile } from '../profiles/index.ts';
import { writeReports } from '../report/reporters/index.ts';
import { readResults, RECORDS_DIR } from '../report/results.ts';
import { optionsFor } from '../runner/run-matrix.ts';
import { findScenario } from '../scenarios/index.ts';
import { startNginx } from './nginx.ts';
import type { GenerateResult, OldFormatResult } from './scale-child.ts';
import type { BenchRow } from './table.ts';
import { runTool } from './tools.ts';

export interface ScaleBenchOptions {
  host: string;
  /** How long each of the two runs sends. */
  seconds: number;
  /** Requests/s of the gateway run (clients x ratePerClient); the highest this machine holds. */
  gatewayRate: number;
  /** Requests/s of the generator alone. */
  generatorRate: number;
  cwd: string;
  signal: AbortSignal;
  onProgress?: (message: string) => void;
}

const SCENARIO = 'gateway-delete-http';
const PROFILE = 'nginx';
const MB = 1024 * 1024;

/** The gateway run's --set overrides: 20 clients (the measurement docs/benchmarks.md reports), each at gatewayRate / 20. */
export function gatewayOverrides(o: Pick<ScaleBenchOptions, 'seconds' | 'gatewayRate'>): Record<string, number> {
  const clients = 20;
  return { clients, ratePerClient: Math.max(1, Math.round(o.gatewayRate / clients)), deleteAtMs: Math.max(1000, o.seconds * 1000 - 3000) };
}

/** `node` with the peak-RSS hook, running `args`; the child's peak RSS in bytes. */
async function measured(args: string[], o: ScaleBenchOptions, timeoutMs: number): Promise<{ stdout: string; output: string; exitCode: number | undefined; peakRss: number }> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-scale-rss-'));
  const file = join(dir, 'peak');
  try {
    process.env['ZERODROP_PEAK_RSS_FILE'] = file;
    const r = await runTool(process.execPath, ['--import', join(o.cwd, 'src/bench/peak-rss-hook.ts'), ...args], timeoutMs, o.signal);
    const peakRss = Number(await readFile(file, 'utf8').catch(() => 'NaN'));
    return { ...r, peakRss };
  } finally {
    delete process.env['ZERODROP_PEAK_RSS_FILE'];
    await rm(dir, { recursive: true, force: true });
  }
}

async function oldFormat(reportDir: string, o: ScaleBenchOptions): Promise<OldFormatResult> {
  const out = join(await mkdtemp(join(tmpdir(), 'zerodrop-scale-old-')), 'results.json');
  try {
    const r = await runTool(process.execPath, [join(o.cwd, 'src/bench/scale-child.ts'), 'old', reportDir, out], 600_000, o.signal);
    if (r.exitCode !== 0) throw new Error(`old-format measurement failed: ${r.output.slice(-500)}`);
    return JSON.parse(r.stdout) as OldFormatResult;
  } finally {
    await rm(join(out, '..'), { recursive: true, force: true });
  }
}

const f = (n: number, digits = 0) => n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

export interface ScaleFigures {
  requests: number;
  peakRss: number;
  memoryPerRequest: number;
  diskPerRequest: number;
  resultsJsonBytes: number;
  evaluateMs: number;
  reportsMs: number;
}

function rowsOf(what: string, connections: number | undefined, fresh: ScaleFigures, old: OldFormatResult, extra: string): BenchRow[] {
  const target = `${what}, ${f(fresh.requests)} requests`;
  const base = { bench: 'scale' as const, target, ...(connections !== undefined ? { connections } : {}), unit: 'MB' as const, status: 'ok' as const };
  return [
    {
      ...base,
      tool: 'zerodrop',
      value: fresh.peakRss / MB,
      note: `peak RSS; ${f(fresh.memoryPerRequest, 1)} B/request in memory, ${f(fresh.diskPerRequest, 1)} B/request on disk (records file), results.json ${f(fresh.resultsJsonBytes / 1024)} KB; evaluate ${f(fresh.evaluateMs)} ms, reports ${f(fresh.reportsMs)} ms${extra}`,
    },
    {
      ...base,
      tool: 'old format',
      value: old.peakRss / MB,
      ratio: old.peakRss / fresh.peakRss,
      note: `peak RSS of holding the objects and writing results.json alone (without the run); ${f(old.objectBytesPerRequest, 1)} B/request in memory; results.json ${f(old.resultsJsonBytes / 1024)} KB, ${f(old.resultsJsonBytes / old.requests, 1)} B/request; ${old.writeError !== undefined ? `write FAILED after ${f(old.writeMs)} ms (${old.writeError}; size counted piece by piece)` : `write ${f(old.writeMs)} ms`}`,
    },
  ];
}

/** (a) The gateway run through the CLI, then its reports read back, evaluated and written again. */
async function gatewayRun(o: ScaleBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-scale-gateway-'));
  try {
    const overrides = gatewayOverrides(o);
    const sets = Object.entries(overrides).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
    o.onProgress?.(`scale: ${SCENARIO} x ${PROFILE}, ${overrides['clients']} clients x ${overrides['ratePerClient']} req/s, delete at ${overrides['deleteAtMs']! / 1000} s`);
    const run = await measured([join(o.cwd, 'src/cli/main.ts'), 'run', '--profile', PROFILE, '--scenario', SCENARIO, ...sets, '--report-dir', dir], o, o.seconds * 1000 + 180_000);
    if (run.exitCode !== 0 && run.exitCode !== 1) throw new Error(`zerodrop run exited ${String(run.exitCode)}: ${run.output.slice(-500)}`);
    const resultsJsonBytes = (await stat(join(dir, 'results.json'))).size;
    const records = (await readdir(join(dir, RECORDS_DIR))).find((name) => name.endsWith('.requests.gz'));
    if (records === undefined) throw new Error(`no records file in ${dir}`);
    const connectionsFile = (await readdir(join(dir, RECORDS_DIR))).find((name) => name.endsWith('.connections.gz'));
    const connectionsBytes = connectionsFile === undefined ? 0 : (await stat(join(dir, RECORDS_DIR, connectionsFile))).size;
    const recordsBytes = (await stat(join(dir, RECORDS_DIR, records))).size;

    // Read back, evaluated again from the records file, and the reports written again.
    let t = performance.now();
    const back = await readResults(dir);
    const readMs = performance.now() - t;
    const result = back.scenarios[0];
    if (!result?.timeline) throw new Error('the run recorded no timeline');
    const def = findScenario(SCENARIO);
    const profile = findProfile(PROFILE);
    if (!def || !profile) throw new Error(`${SCENARIO} x ${PROFILE} is not in the catalog`);
    const scenario = def.build(profile, optionsFor(def, overrides, false));
    t = performance.now();
    const again = evaluate(scenario.expectations, result.timeline);
    const evaluateMs = performance.now() - t;
    const same = again.every((a) => result.assertions.find((b) => b.name === a.name && b.message === a.message)?.verdict === a.verdict);
    t = performance.now();
    await writeReports(back, join(dir, 'again'));
    const reportsMs = performance.now() - t;

    const old = await oldFormat(dir, o);
    const requests = result.timeline.requests.length;
    const fresh: ScaleFigures = { requests, peakRss: run.peakRss, memoryPerRequest: old.columnBytesPerRequest, diskPerRequest: recordsBytes / requests, resultsJsonBytes, evaluateMs, reportsMs };
    const extra = `; connections file ${f(connectionsBytes / result.timeline.connections.length, 1)} B/connection (${f(result.timeline.connections.length)}); ${result.verdict}${same ? '' : ', re-evaluated verdicts DIFFER'}`;
    return {
      rows: rowsOf(`${SCENARIO} via ${PROFILE}, ${f(o.gatewayRate)} req/s, ${o.seconds} s`, overrides['clients'], fresh, old, extra),
      detail: { overrides, verdict: result.verdict, counts: result.counts, sameVerdictsFromRecords: same, readMs, fresh, old, recordsBytes, connectionsBytes },
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** (b) The generator alone against nginx, in a process of its own. */
async function generatorRun(o: ScaleBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-scale-generator-'));
  try {
    await using nginx = await startNginx(o.host, o.cwd);
    o.onProgress?.(`scale: generator alone, ${f(o.generatorRate)} req/s against nginx for ${o.seconds} s`);
    const args = [join(o.cwd, 'src/bench/scale-child.ts'), 'generate', nginx.host, String(nginx.port), String(o.generatorRate), String(o.seconds), dir];
    const run = await measured(args, o, o.seconds * 1000 + 120_000);
    if (run.exitCode !== 0) throw new Error(`generator run failed: ${run.output.slice(-500)}`);
    const g = JSON.parse(run.stdout) as GenerateResult;
    const old = await oldFormat(g.dir, o);
    const fresh: ScaleFigures = {
      requests: g.recorded,
      peakRss: run.peakRss,
      memoryPerRequest: g.tableBytes / g.recorded,
      diskPerRequest: g.recordsFileBytes / g.recorded,
      resultsJsonBytes: (await stat(join(g.dir, 'results.json'))).size,
      evaluateMs: g.evaluateMs,
      reportsMs: g.writeMs,
    };
    const held = g.achievedRate !== undefined ? `; achieved ${f(g.achievedRate)} req/s, ${f(g.failed)} failed` : '';
    return { rows: rowsOf(`generator alone vs nginx, ${f(o.generatorRate)} req/s, ${o.seconds} s`, undefined, fresh, old, held), detail: { generator: g, old, fresh } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function scaleBench(o: ScaleBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  // A part that breaks is a failed row; the other's figures are kept (each part is minutes long).
  const part = async (target: string, run: () => Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }>) => {
    try {
      return await run();
    } catch (error) {
      if (o.signal.aborted) throw error;
      const message = (error as Error).message.split('\n')[0] ?? String(error);
      o.onProgress?.(`scale: ${target} failed: ${message}`);
      const row: BenchRow = { bench: 'scale', tool: 'zerodrop', target, unit: 'MB', status: 'failed', note: message };
      return { rows: [row], detail: { error: (error as Error).stack ?? message } };
    }
  };
  const gateway = await part(`${SCENARIO} via ${PROFILE}`, () => gatewayRun(o));
  const generator = await part('generator alone vs nginx', () => generatorRun(o));
  return { rows: [...gateway.rows, ...generator.rows], detail: { seconds: o.seconds, gateway: gateway.detail, generator: generator.detail } };
}
