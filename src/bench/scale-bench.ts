// The `scale` bench (docs/benchmarks.md): what a long, heavy run costs. (a) A run through the local gateway
// topology (nginx-pooled, gateway-delete-http) at `gatewayRate` requests/s for `seconds`, as the CLI runs
// it, and (a') the same run on a netns cluster, the nginx pods behind a real Service and kube-proxy
// (nftables) instead of the local provider's userspace balancer, a row saying why when this machine
// cannot start one; (b) zerodrop's generator alone at `generatorRate` against nginx for as long. For each: the
// process's peak resident memory, bytes per recorded request in memory and on disk, the time to
// evaluate and to write the reports; and beside them the same figures of the format before the
// records file (every request an object, every request in results.json), measured on the same
// requests in the same run.

import { cp, mkdir, mkdtemp, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { evaluate, type HeldLoad } from '../assert/index.ts';
import { findProfile } from '../profiles/index.ts';
import { writeReports } from '../report/reporters/index.ts';
import { readResults, RECORDS_DIR, type ScenarioResult } from '../report/results.ts';
import { optionsFor } from '../runner/run-matrix.ts';
import { findScenario } from '../scenarios/index.ts';
import { netnsBenchMissing } from './netns-udp.ts';
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
  /**
   * Where a gateway run that failed keeps its reports, as scale-<provider>/ (its records say which
   * requests failed, when and how: a failure at scale is rare and worth reading); undefined: removed.
   */
  failedReportsDir?: string;
  /** Why the netns gateway run cannot run here, or undefined (default: netnsBenchMissing, this machine's). */
  netnsMissing?: () => Promise<string | undefined>;
}

const SCENARIO = 'gateway-delete-http';
/**
 * nginx pooling its upstream connections: a gateway at this rate does. One that opens an upstream
 * connection per request spends the gateway pods' cores searching for a free ephemeral port among
 * their TIME_WAIT sockets (docs/benchmarks.md), which no drain has anything to do with.
 */
const PROFILE = 'nginx-pooled';
/** The load of the scenario's hey-like clients (gatewayLoad), the one `gatewayRate` sets. */
const CLIENTS_LOAD = 'http';
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

/** Where a gateway run goes: the local provider (its userspace balancers) or a netns cluster (kube-proxy). */
export type GatewayProvider = 'local' | 'netns';

/** A gateway run's figures, read back from its report directory. */
interface GatewayMeasured {
  overrides: Record<string, number>;
  result: ScenarioResult;
  fresh: ScaleFigures;
  /** Requests/s the loads with a target rate held and were asked for, together (loadHeld's figures); undefined when none had one. */
  held: HeldRate | undefined;
  sameVerdictsFromRecords: boolean;
  readMs: number;
  recordsBytes: number;
  connectionsBytes: number;
}

export interface Rate {
  achieved: number;
  target: number;
}

export interface HeldRate {
  /** The hey-like clients (the load `http`): `gatewayRate` asked. */
  clients?: Rate;
  /** Every rated load of the run summed: the clients and the traffic beside them (new connections at ratePerClient, keep-alive connections with a think time, which may go above theirs). */
  all: Rate;
  /** Connects of every load that waited out a SYN retransmission (loadHeld's slowConnects): what a closed loop lost to the path. */
  slowConnects: number;
}

/** The requests/s the run's rated loads achieved and were asked for, as loadHeld recorded them. */
export function heldRateOf(result: Pick<ScenarioResult, 'assertions'>): HeldRate | undefined {
  const loads = (result.assertions.find((a) => a.name === 'loadHeld')?.details?.['loads'] ?? []) as HeldLoad[];
  const rated = loads.flatMap((l) => (l.targetRate !== undefined && l.achievedRate !== undefined ? [{ load: l.load, achieved: l.achievedRate, target: l.targetRate }] : []));
  if (rated.length === 0) return undefined;
  const clients = rated.find((l) => l.load === CLIENTS_LOAD);
  const all = { achieved: rated.reduce((sum, l) => sum + l.achieved, 0), target: rated.reduce((sum, l) => sum + l.target, 0) };
  const slowConnects = loads.reduce((sum, l) => sum + (l.slowConnects ?? 0), 0);
  return { ...(clients ? { clients: { achieved: clients.achieved, target: clients.target } } : {}), all, slowConnects };
}

/**
 * `zerodrop run --provider <provider> --profile nginx-pooled --scenario gateway-delete-http` at the scale
 * overrides, as the CLI runs it, into `dir`; then its reports read back, its assertions evaluated
 * again from the records files and the reports written again.
 */
async function measureGatewayRun(o: ScaleBenchOptions, provider: GatewayProvider, dir: string): Promise<GatewayMeasured> {
  const overrides = gatewayOverrides(o);
  const sets = Object.entries(overrides).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
  o.onProgress?.(`scale: ${SCENARIO} x ${PROFILE} on ${provider}, ${overrides['clients']} clients x ${overrides['ratePerClient']} req/s, delete at ${overrides['deleteAtMs']! / 1000} s`);
  // A netns run starts (and removes) a cluster around the scenario: minutes more on a busy machine.
  const setupMs = provider === 'netns' ? 900_000 : 180_000;
  const args = [join(o.cwd, 'src/cli/main.ts'), 'run', '--provider', provider, '--profile', PROFILE, '--scenario', SCENARIO, ...sets, '--report-dir', dir];
  const run = await measured(args, o, o.seconds * 1000 + setupMs);
  if (run.exitCode !== 0 && run.exitCode !== 1) throw new Error(`zerodrop run --provider ${provider} exited ${String(run.exitCode)}: ${run.output.slice(-500)}`);
  const resultsJsonBytes = (await stat(join(dir, 'results.json'))).size;
  const files = await readdir(join(dir, RECORDS_DIR));
  const records = files.find((name) => name.endsWith('.requests.gz'));
  if (records === undefined) throw new Error(`no records file in ${dir}`);
  const connectionsFile = files.find((name) => name.endsWith('.connections.gz'));
  const connectionsBytes = connectionsFile === undefined ? 0 : (await stat(join(dir, RECORDS_DIR, connectionsFile))).size;
  const recordsBytes = (await stat(join(dir, RECORDS_DIR, records))).size;

  // Read back, evaluated again from the records file, and the reports written again.
  let t = performance.now();
  const back = await readResults(dir);
  const readMs = performance.now() - t;
  const result = back.scenarios[0];
  if (!result?.timeline) throw new Error(`the run recorded no timeline${result?.reason ? `: ${result.reason}` : ''}`);
  const def = findScenario(SCENARIO);
  const profile = findProfile(PROFILE);
  if (!def || !profile) throw new Error(`${SCENARIO} x ${PROFILE} is not in the catalog`);
  // The options the run used, as it stored them: on a cluster they are not only the overrides over
  // the defaults (a random balancer's layer, def.cluster, adds its own).
  const scenario = def.build(profile, result.options ?? optionsFor(def, overrides, false));
  t = performance.now();
  const again = evaluate(scenario.expectations, result.timeline);
  const evaluateMs = performance.now() - t;
  const sameVerdictsFromRecords = again.every((a) => result.assertions.find((b) => b.name === a.name && b.message === a.message)?.verdict === a.verdict);
  t = performance.now();
  await writeReports(back, join(dir, 'again'));
  const reportsMs = performance.now() - t;

  const table = result.timeline.requests;
  const requests = table.length;
  // The request columns' allocated chunks and interned names, as the run held them.
  const fresh: ScaleFigures = { requests, peakRss: run.peakRss, memoryPerRequest: table.bytes() / requests, diskPerRequest: recordsBytes / requests, resultsJsonBytes, evaluateMs, reportsMs };
  return { overrides, result, fresh, held: heldRateOf(result), sameVerdictsFromRecords, readMs, recordsBytes, connectionsBytes };
}

/** What a gateway row's note adds to the figures: the held rate, the connections file, the verdict. */
function gatewayExtra(m: GatewayMeasured): string {
  const connections = m.result.timeline?.connections.length ?? 0;
  const h = m.held;
  const clients = h?.clients ? `clients held ${f(h.clients.achieved)} of ${f(h.clients.target)} req/s, ` : '';
  const slow = h !== undefined && h.slowConnects > 0 ? `, ${f(h.slowConnects)} ${h.slowConnects === 1 ? 'connect' : 'connects'} took 1 s or more (a SYN retransmitted)` : '';
  const held = h === undefined ? '' : `; ${clients}all loads ${f(h.all.achieved)} of ${f(h.all.target)} req/s${slow}`;
  const perConnection = connections > 0 ? `; connections file ${f(m.connectionsBytes / connections, 1)} B/connection (${f(connections)})` : '';
  const why = m.result.assertions.filter((a) => a.verdict !== 'pass').map((a) => a.name);
  return `${held}${perConnection}; ${m.result.verdict}${why.length > 0 ? ` (${why.join(', ')})` : ''}${m.sameVerdictsFromRecords ? '' : ', re-evaluated verdicts DIFFER'}`;
}

/** A gateway row's loss column: the failed requests, and of them those no assertion judges (overlong by design). */
function gatewayLoss(counts: ScenarioResult['counts']): string {
  const unjudged = counts.notJudged ?? 0;
  return `${f(counts.failed)} failed${unjudged > 0 ? ` (${f(unjudged)} not judged: overlong, cut by design)` : ''}`;
}

function gatewayDetail(m: GatewayMeasured): Record<string, unknown> {
  const { overrides, result, fresh, held, sameVerdictsFromRecords, readMs, recordsBytes, connectionsBytes } = m;
  return { overrides, verdict: result.verdict, counts: result.counts, held, sameVerdictsFromRecords, readMs, fresh, recordsBytes, connectionsBytes };
}

const gatewayTarget = (o: Pick<ScaleBenchOptions, 'gatewayRate' | 'seconds'>, where = '') => `${SCENARIO} via ${PROFILE}${where}, ${f(o.gatewayRate)} req/s, ${o.seconds} s`;

/**
 * A failed gateway run's reports, moved out of `dir` (which is then removed) into
 * `failedReportsDir`/scale-<provider>; the note's words saying where, or '' when nothing is kept.
 */
export async function keepIfFailed(o: Pick<ScaleBenchOptions, 'failedReportsDir'>, provider: GatewayProvider, verdict: string, dir: string): Promise<string> {
  if (verdict !== 'fail' || o.failedReportsDir === undefined) return '';
  const to = join(o.failedReportsDir, `scale-${provider}`);
  await rm(to, { recursive: true, force: true });
  await mkdir(o.failedReportsDir, { recursive: true });
  // The temporary directory and the report's may be on different filesystems (EXDEV): copy then.
  await rename(dir, to).catch(async () => cp(dir, to, { recursive: true }));
  return `; reports kept in ${to}`;
}

/** (a) The gateway run on the local provider, beside the old format of the same requests. */
async function gatewayRun(o: ScaleBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-scale-gateway-'));
  try {
    const m = await measureGatewayRun(o, 'local', dir);
    const old = await oldFormat(dir, o);
    const rows = rowsOf(gatewayTarget(o), m.overrides['clients'], m.fresh, old, gatewayExtra(m) + (await keepIfFailed(o, 'local', m.result.verdict, dir)));
    rows[0]!.loss = gatewayLoss(m.result.counts);
    return { rows, detail: { ...gatewayDetail(m), old } };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const NETNS_WHERE = ' on a netns cluster (kube-proxy nftables)';

/**
 * (a') The same gateway run on a netns cluster: the nginx pods behind a real Service, kube-proxy's
 * nftables rules instead of the local provider's userspace balancer. A row saying why when this
 * machine cannot run one (not root, no Go build, no nft).
 */
async function netnsGatewayRun(o: ScaleBenchOptions): Promise<{ rows: BenchRow[]; detail: Record<string, unknown> }> {
  const target = gatewayTarget(o, NETNS_WHERE);
  const missing = await (o.netnsMissing ?? netnsBenchMissing)();
  if (missing !== undefined) {
    return { rows: [{ bench: 'scale', tool: 'zerodrop', target, unit: 'MB', status: 'not installed', note: missing }], detail: { missing } };
  }
  const dir = await mkdtemp(join(tmpdir(), 'zerodrop-scale-netns-'));
  try {
    const m = await measureGatewayRun(o, 'netns', dir);
    const { fresh } = m;
    const row: BenchRow = {
      bench: 'scale',
      tool: 'zerodrop',
      target: `${target}, ${f(fresh.requests)} requests`,
      connections: m.overrides['clients']!,
      value: fresh.peakRss / MB,
      unit: 'MB',
      loss: gatewayLoss(m.result.counts),
      status: 'ok',
      note: `peak RSS of the zerodrop process (the cluster's own processes not counted); ${f(fresh.memoryPerRequest, 1)} B/request in memory, ${f(fresh.diskPerRequest, 1)} B/request on disk (records file), results.json ${f(fresh.resultsJsonBytes / 1024)} KB; evaluate ${f(fresh.evaluateMs)} ms, reports ${f(fresh.reportsMs)} ms${gatewayExtra(m)}${await keepIfFailed(o, 'netns', m.result.verdict, dir)}`,
    };
    return { rows: [row], detail: gatewayDetail(m) };
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
  const netns = await part(`${SCENARIO} via ${PROFILE}${NETNS_WHERE}`, () => netnsGatewayRun(o));
  const generator = await part('generator alone vs nginx', () => generatorRun(o));
  return { rows: [...gateway.rows, ...netns.rows, ...generator.rows], detail: { seconds: o.seconds, gateway: gateway.detail, netnsGateway: netns.detail, generator: generator.detail } };
}
