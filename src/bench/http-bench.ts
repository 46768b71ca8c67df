// HTTP generators against one nginx worker: zerodrop's own generator (src/load/http.ts in the
// mode the scenarios use, recording every request on the Recorder; run by http-zerodrop.ts in a
// process of its own, as the other tools run in theirs) and autocannon, hey and wrk, one after the
// other, with the same connection count and duration, keep-alive, on loopback. A last row, the
// node:net floor (http-floor.ts), is no tool: it is the most any generator on node:net does here.
// The target (docs/benchmarks.md): zerodrop at least 0.9x autocannon and 2x hey.

import { readFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';

import { topSelfTime, type CpuProfile, type SelfTime } from './cpu-profile.ts';
import type { FloorRun } from './http-floor.ts';
import type { ZerodropHttpRun } from './http-zerodrop.ts';
import { startNginx, type NginxTarget } from './nginx.ts';
import { ratioTo, type BenchRow } from './table.ts';
import { parseRequestsPerSec, runTool, which } from './tools.ts';

export interface HttpBenchOptions {
  host: string;
  connections: number;
  durationMs: number;
  /** Every tool runs this many times, the tools taking turns; the best run counts (other work on the machine only ever slows a run). */
  rounds: number;
  cwd: string;
  /** Stops the benchmark (Ctrl-C): the running tool is stopped and nginx with it. */
  signal: AbortSignal;
  /** Where the node:net clients (zerodrop, autocannon, the floor) write a CPU profile of each run (--profile). */
  profileDir?: string;
}

/** The top of one client's CPU profile, for its best round. */
export interface ClientProfile {
  tool: string;
  file: string;
  top: SelfTime[];
}

export interface HttpBenchResult {
  rows: BenchRow[];
  /** Each tool's raw figures, for reports/bench.json. */
  detail: Record<string, unknown>;
  /** With profileDir: where each node:net client spent its best round. */
  profiles?: ClientProfile[];
}

const TARGET = 'nginx, 1 worker, static 200';

interface Measured {
  rate?: number;
  /** CPU microseconds the client spent per request (user + system). */
  cpuPerRequestUs?: number;
  loss?: string;
  note?: string;
  status: BenchRow['status'];
  raw?: unknown;
}

/**
 * Runs one of our client scripts in src/bench (`<url> <connections> <durationMs>`, one JSON line out)
 * in a Node process of its own, started with the `node` flags.
 */
async function runClientScript<T>(name: string, target: NginxTarget, o: HttpBenchOptions, node: string[]): Promise<T> {
  const script = join(o.cwd, 'src/bench', name);
  const r = await runTool(process.execPath, [...node, script, target.url, String(o.connections), String(o.durationMs)], o.durationMs + 30_000, o.signal);
  if (r.exitCode !== 0) throw new Error(`${name} exited ${r.exitCode}: ${r.output.trim().split('\n').at(-1) ?? ''}`);
  return JSON.parse(r.stdout) as T;
}

async function measureZerodrop(target: NginxTarget, o: HttpBenchOptions, node: string[]): Promise<Measured> {
  const { summary: s, recorded, cpuSeconds } = await runClientScript<ZerodropHttpRun>('http-zerodrop.ts', target, o, node);
  return {
    rate: s.achievedRate,
    // The generator's own CPU (process.cpuUsage around the load), not the process start-up.
    ...perRequest(cpuSeconds, s.sent),
    loss: `${s.failed} failed`,
    note: `${recorded.toLocaleString('en-US')} of ${s.sent.toLocaleString('en-US')} requests recorded`,
    status: recorded === s.sent ? 'ok' : 'failed',
    raw: { ...s, recorded },
  };
}

function perRequest(cpuSeconds: number | undefined, requests: number | undefined): { cpuPerRequestUs?: number } {
  return cpuSeconds !== undefined && requests !== undefined && requests > 0 ? { cpuPerRequestUs: (cpuSeconds * 1e6) / requests } : {};
}

async function measureAutocannon(target: NginxTarget, o: HttpBenchOptions, node: string[]): Promise<Measured> {
  const script = join(o.cwd, 'node_modules/autocannon/autocannon.js');
  const seconds = Math.max(1, Math.round(o.durationMs / 1000));
  const r = await runTool(process.execPath, [...node, script, '-c', String(o.connections), '-d', String(seconds), '--json', target.url], o.durationMs + 30_000, o.signal);
  const json = JSON.parse(r.stdout) as { requests: { total: number }; duration: number; errors: number; timeouts: number; non2xx: number };
  return {
    rate: json.requests.total / json.duration,
    ...perRequest(r.cpuSeconds, json.requests.total),
    loss: `${json.errors + json.timeouts + json.non2xx} errors`,
    status: 'ok',
    raw: { total: json.requests.total, duration: json.duration, errors: json.errors, timeouts: json.timeouts, non2xx: json.non2xx },
  };
}

async function measureHey(target: NginxTarget, o: HttpBenchOptions): Promise<Measured> {
  const seconds = Math.max(1, Math.round(o.durationMs / 1000));
  const r = await runTool('hey', ['-z', `${seconds}s`, '-c', String(o.connections), target.url], o.durationMs + 30_000, o.signal);
  const ok = /\[200\]\s+(\d+) responses/.exec(r.output)?.[1];
  const errors = [...r.output.matchAll(/\[(\d+)\]\s+Get /g)].reduce((n, m) => n + Number(m[1]), 0);
  const rate = parseRequestsPerSec(r.output);
  return {
    rate,
    ...perRequest(r.cpuSeconds, rate === undefined ? undefined : rate * seconds),
    loss: `${errors} errors`,
    status: r.exitCode === 0 ? 'ok' : 'failed',
    note: 'GOMAXPROCS = all cores',
    raw: { ok: ok === undefined ? undefined : Number(ok), errors },
  };
}

async function measureWrk(target: NginxTarget, o: HttpBenchOptions): Promise<Measured> {
  const seconds = Math.max(1, Math.round(o.durationMs / 1000));
  const r = await runTool('wrk', ['-t1', `-c${o.connections}`, `-d${seconds}s`, target.url], o.durationMs + 30_000, o.signal);
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(r.output)?.[1] ?? 0);
  const socket = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(r.output);
  const socketErrors = socket ? socket.slice(1).reduce((n, x) => n + Number(x), 0) : 0;
  const rate = parseRequestsPerSec(r.output);
  return {
    rate,
    ...perRequest(r.cpuSeconds, rate === undefined ? undefined : rate * seconds),
    loss: `${non2xx + socketErrors} errors`,
    status: r.exitCode === 0 ? 'ok' : 'failed',
    note: '1 thread',
    raw: { non2xx, socketErrors },
  };
}

async function measureFloor(target: NginxTarget, o: HttpBenchOptions, node: string[]): Promise<Measured> {
  const run = await runClientScript<FloorRun>('http-floor.ts', target, o, node);
  return {
    rate: run.requests / run.seconds,
    ...perRequest(run.cpuSeconds, run.requests),
    status: 'ok',
    note: 'reference, not a tool: write, read, repeat; no parsing, no timeout, no record',
    raw: run,
  };
}

/** `node` is set for the clients that run on Node: the flags its command line starts with. */
const TOOLS: { tool: string; binary?: string; node?: true; measure: (t: NginxTarget, o: HttpBenchOptions, node: string[]) => Promise<Measured> }[] = [
  { tool: 'zerodrop', node: true, measure: measureZerodrop },
  { tool: 'autocannon', node: true, measure: measureAutocannon },
  { tool: 'hey', binary: 'hey', measure: measureHey },
  { tool: 'wrk', binary: 'wrk', measure: measureWrk },
  { tool: 'node:net floor', node: true, measure: measureFloor },
];

/** The .cpuprofile file name of one run of a client. */
const profileName = (tool: string, round: number) => `http-${tool.replace(/[^a-z0-9]+/gi, '-')}-round${round + 1}.cpuprofile`;

export async function httpBench(o: HttpBenchOptions): Promise<HttpBenchResult> {
  const detail: Record<string, unknown> = { connections: o.connections, durationMs: o.durationMs };
  if (!(await which('nginx'))) {
    return { rows: [{ bench: 'http', tool: 'nginx', target: TARGET, unit: 'req/s', status: 'not installed', note: 'apt-get install nginx' }], detail };
  }
  const measured = new Map<string, Measured>();
  const bestRound = new Map<string, number>();
  const runs: Record<string, unknown[]> = {};
  await using target = await startNginx(o.host, o.cwd);
  for (let round = 0; round < o.rounds; round++) {
    for (const t of TOOLS) {
      let m: Measured;
      if (t.binary !== undefined && !(await which(t.binary))) m = { status: 'not installed' };
      else {
        const profile = o.profileDir !== undefined && t.node ? ['--cpu-prof', '--cpu-prof-dir', o.profileDir, '--cpu-prof-name', profileName(t.tool, round)] : [];
        try {
          m = await t.measure(target, o, profile);
        } catch (error) {
          if (o.signal.aborted) throw error;
          m = { status: 'failed', note: (error as Error).message.split('\n')[0] ?? '' };
        }
      }
      (runs[t.tool] ??= []).push({ ...(m.raw ?? { status: m.status }), rate: m.rate, cpuPerRequestUs: m.cpuPerRequestUs });
      const best = measured.get(t.tool);
      if (!best || (m.rate ?? -1) > (best.rate ?? -1)) {
        measured.set(t.tool, m);
        bestRound.set(t.tool, round);
      }
      // Lets the server's and the kernel's side of the last tool's sockets settle before the next one.
      await sleep(500, undefined, { signal: o.signal });
    }
  }
  const zerodrop = measured.get('zerodrop')?.rate;
  const rows = [...measured].map(([tool, m]): BenchRow => {
    const row: BenchRow = { bench: 'http', tool, target: TARGET, connections: o.connections, unit: 'req/s', status: m.status };
    if (m.rate !== undefined) row.value = m.rate;
    const ratio = tool === 'zerodrop' ? undefined : ratioTo(zerodrop, m.rate);
    if (ratio !== undefined) row.ratio = ratio;
    if (m.loss !== undefined) row.loss = m.loss;
    const cpu = m.cpuPerRequestUs === undefined ? undefined : `${m.cpuPerRequestUs.toFixed(1)} µs CPU/request`;
    const notes = [cpu, m.note, o.rounds > 1 ? `best of ${o.rounds}` : undefined].filter((n) => n !== undefined);
    if (notes.length > 0) row.note = notes.join('; ');
    return row;
  });
  detail.runs = runs;
  if (o.profileDir === undefined) return { rows, detail };
  const profiles = await readProfiles(o.profileDir, bestRound);
  detail.profiles = profiles;
  return { rows, detail, profiles };
}

/** The top of each node:net client's profile of its best round (a client that did not run has none). */
async function readProfiles(dir: string, bestRound: Map<string, number>): Promise<ClientProfile[]> {
  const profiles: ClientProfile[] = [];
  for (const t of TOOLS) {
    const round = bestRound.get(t.tool);
    if (!t.node || round === undefined) continue;
    const file = join(dir, profileName(t.tool, round));
    const text = await readFile(file, 'utf8').catch(() => undefined);
    if (text !== undefined) profiles.push({ tool: t.tool, file, top: topSelfTime(JSON.parse(text) as CpuProfile, 12) });
  }
  return profiles;
}
