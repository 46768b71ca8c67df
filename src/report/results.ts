// results.json: the machine-readable record of a run (docs/reports.md).
// The HTML, JUnit and conformance reports are rendered from this, and CI matrices diff it, so the
// field names are a contract: add fields, never rename them.

import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { RequestTable } from '../model/request-table.ts';
import { streamIntact } from '../assert/streams-intact.ts';
import type { ConnectionRecord, RequestRecord, Timeline } from '../model/timeline.ts';
import type { AssertionResult, Verdict } from '../model/verdict.ts';
import { readConnectionsFile, readRecordsFile, RECORDS_FORMAT, RECORDS_FORMATS_READ, writeConnectionsFile, writeRecordsFile, type RecordsStream } from './records-file.ts';

export const RESULTS_FILE = 'results.json';

export interface Counts {
  /** Requests (streams, packets) the load sent. */
  requests: number;
  ok: number;
  failed: number;
  /** Requests by outcome class, e.g. { ok: 48207, refused: 2, reset: 1 }. */
  byOutcome: Record<string, number>;
  /** Connections the Service load balancers routed. */
  connections: number;
  /** Packet loads (UDP flows): packets by what became of them; absent when none ran. */
  packets?: { flows: number; sent: number; received: number; lost: number; duplicated: number; reordered: number };
  /** Stream loads (TCP, WebSocket, SSE): how many ran, and how many broke (streamsIntact's rule: a bad ending, or anything unanswered, lost or repeated). */
  streams?: { streams: number; broken: number; messages: number; unanswered: number };
  /**
   * Of `failed`, the requests of loads the scenario does not judge (overlong requests, cut at the
   * drain timeout by design): not dropped; absent when there are none.
   */
  notJudged?: number;
}

export interface ScenarioResult {
  id: string;
  profile: string;
  verdict: Verdict;
  durationMs: number;
  /** Why it was skipped or inconclusive, or the error that stopped it. */
  reason?: string;
  assertions: AssertionResult[];
  counts: Counts;
  /** Seed of the local Service balancers' programming lags: `--seed` with it replays them. */
  seed?: number;
  /**
   * The scenario's option values this run used (its defaults, a cluster's, `--nightly`'s, `--set`'s):
   * what the verdict the pair must have depends on where a scenario tolerates a broken profile
   * only for some values (src/scenarios/expected.ts).
   */
  options?: Record<string, number>;
  /** How requests were attributed to pods, per Service: by a response header the profile names, or by connection. */
  attribution?: string[];
  /**
   * The record of the run, for the HTML report. In results.json its `requests` are the failed ones,
   * in full; every request is in the records file `records` points to.
   */
  timeline?: Timeline;
  /** Where every request of `timeline` is, relative to the report directory (docs/reports.md). */
  records?: RecordsPointer;
}

export interface RecordsPointer {
  /** `zerodrop-requests/2` (written now); `zerodrop-requests/1` is read too. */
  format: string;
  /** The records file of the requests, e.g. `records/01-gateway-delete-http.nginx.requests.gz`. */
  requests: string;
  /** How many requests it holds. */
  count: number;
  /** The connections file (a JSON line each, gzip'd); results.json keeps only those whose upstream failed. */
  connections?: string;
  connectionCount?: number;
}

export interface RunResult {
  tool: { name: 'zerodrop'; version: string; node: string };
  provider: string;
  /** The cluster's Kubernetes release as its API server reports it at /version (gitVersion); absent for the local provider. */
  kubernetesVersion?: string;
  /** `nightly` when the realistic durations were used (`--nightly`). */
  mode?: 'default' | 'nightly';
  /** Who the run vouches for, for conformance.yaml (from the config file's `implementation`). */
  implementation?: Implementation;
  /** ISO 8601 wall-clock time the run started. */
  startedAt: string;
  durationMs: number;
  scenarios: ScenarioResult[];
}

/** The Gateway API ConformanceReport's `implementation` block. */
export interface Implementation {
  organization?: string;
  project?: string;
  url?: string;
  version?: string;
  contact?: string[];
}

/**
 * `notJudged`: the loads whose failures no assertion judges (noFailedRequests' exceptLoads).
 * `streamsToEnd`: the streams are bounded and must run to their end (streamsIntact's `toEnd`), so a
 * polite close before it counts as broken, as the assertion counts it.
 */
export function countsOf(timeline: Timeline, notJudged: readonly string[] = [], streamsToEnd = false): Counts {
  const byOutcome: Record<string, number> = {};
  let ok = 0;
  let unjudged = 0;
  timeline.requests.scan((r) => {
    const outcome = r.outcome;
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
    if (outcome === 'ok') ok++;
    else if (notJudged.includes(r.load)) unjudged++;
  });
  const requests = timeline.requests.length;
  const counts: Counts = { requests, ok, failed: requests - ok, byOutcome, connections: timeline.connections.length, ...(unjudged > 0 ? { notJudged: unjudged } : {}) };
  if (timeline.flows && timeline.flows.length > 0) {
    const packets = { flows: timeline.flows.length, sent: 0, received: 0, lost: 0, duplicated: 0, reordered: 0 };
    for (const f of timeline.flows) {
      packets.sent += f.sent;
      packets.received += f.received;
      packets.lost += f.lost;
      packets.duplicated += f.duplicated;
      packets.reordered += f.reordered;
    }
    counts.packets = packets;
  }
  if (timeline.streams && timeline.streams.length > 0) {
    const streams = { streams: timeline.streams.length, broken: 0, messages: 0, unanswered: 0 };
    for (const st of timeline.streams) {
      if (!streamIntact(st, streamsToEnd)) streams.broken++;
      streams.messages += st.sent;
      streams.unanswered += st.unanswered;
    }
    counts.streams = streams;
  }
  return counts;
}

/** One phrase per kind of load that ran, with what it dropped, e.g. "50 flows, 0 of 60,000 packets lost". */
export function countParts(counts: Counts): { text: string; dropped: number }[] {
  const n = (v: number) => v.toLocaleString('en-US');
  const parts: { text: string; dropped: number }[] = [];
  if (counts.requests > 0) {
    const unjudged = counts.notJudged ?? 0;
    const text = `${n(counts.requests)} requests, ${n(counts.failed)} failed${unjudged > 0 ? ` (${n(unjudged)} not judged: cut at the drain timeout by design)` : ''}`;
    parts.push({ text, dropped: counts.failed - unjudged });
  }
  if (counts.packets) {
    const p = counts.packets;
    parts.push({ text: `${n(p.flows)} flows, ${n(p.lost)} of ${n(p.sent)} packets lost`, dropped: p.lost });
  }
  if (counts.streams) parts.push({ text: `${n(counts.streams.streams)} streams, ${n(counts.streams.broken)} broken`, dropped: counts.streams.broken });
  return parts;
}

/** What the load carried and what it lost, e.g. "1,204 requests, 0 failed; 50 flows, 0 of 60,000 packets lost". */
export function describeCounts(counts: Counts): string {
  return countParts(counts)
    .map((p) => p.text)
    .join('; ');
}

/** Requests failed (but for those not judged), packets lost and streams broken: the one number a drain must keep at zero. */
export function droppedOf(counts: Counts): number {
  return counts.failed - (counts.notJudged ?? 0) + (counts.packets?.lost ?? 0) + (counts.streams?.broken ?? 0);
}

/** Writes DIR/results.json and the records files beside it (creating DIR), pretty-printed; returns the file's path. */
export async function writeResults(dir: string, run: RunResult): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, RESULTS_FILE);
  await writeFile(path, resultsJson(await withRecordsFiles(run, dir)), 'utf8');
  return path;
}

export const RECORDS_DIR = 'records';

/** The records files' name (without suffix) of the `n`th scenario x profile of a run, from 1. */
export function recordsName(n: number, scenario: string, profile: string): string {
  return join(RECORDS_DIR, `${String(n).padStart(2, '0')}-${safeName(scenario)}.${safeName(profile)}`);
}

/**
 * Writes the records file of each scenario with a timeline into DIR/records/ and returns the run
 * with `records` pointing at them (the run given is left as it is). Each file is written beside and
 * renamed, so a reader never sees half of one. A scenario whose records are in DIR already (the run
 * wrote them as it went, src/runner/run-matrix.ts) keeps them. Records files in DIR/records/ that
 * the run does not point to (an earlier run's) are removed, so the directory describes one run.
 */
export async function withRecordsFiles(run: RunResult, dir: string): Promise<RunResult> {
  const scenarios: ScenarioResult[] = [];
  let n = 0;
  for (const s of run.scenarios) {
    n++;
    if (!s.timeline) {
      scenarios.push(s);
      continue;
    }
    if (s.records && streamedTo.get(s.records) === resolve(dir) && recordsIn(dir, s.records)) {
      scenarios.push(s);
      continue;
    }
    scenarios.push({ ...s, records: await writeRecords(dir, recordsName(n, s.id, s.profile), s.timeline) });
  }
  await removeStaleRecords(dir, scenarios);
  return { ...run, scenarios };
}

/**
 * The pointers finishRecords made in this process, with the directory their files are in: only those
 * are kept as they are. A pointer read back from a results.json (another directory, or files an
 * earlier run left under the same names) is written again from its timeline.
 */
const streamedTo = new WeakMap<RecordsPointer, string>();

function recordsIn(dir: string, p: RecordsPointer): boolean {
  return existsSync(join(dir, p.requests)) && (p.connections === undefined || existsSync(join(dir, p.connections)));
}

async function removeStaleRecords(dir: string, scenarios: readonly ScenarioResult[]): Promise<void> {
  const kept = new Set(scenarios.flatMap((s) => (s.records ? [s.records.requests, s.records.connections] : [])).filter((f) => f !== undefined).map((f) => join(dir, f)));
  let files: string[];
  try {
    files = await readdir(join(dir, RECORDS_DIR));
  } catch {
    return;
  }
  for (const file of files) {
    const path = join(dir, RECORDS_DIR, file);
    // Only finished records files: a .partial may be a run writing now.
    if (/\.(requests|connections)\.gz$/.test(file) && !kept.has(path)) await rm(path, { force: true });
  }
}

/** Finishes a run's RecordsStream of `timeline.requests` and writes its connections file beside it: the pointer to both. */
export async function finishRecords(dir: string, name: string, stream: RecordsStream, timeline: Pick<Timeline, 'connections'>): Promise<RecordsPointer> {
  const count = await stream.finish();
  const connections = `${name}.connections.gz`;
  await atomically(dir, connections, (path) => writeConnectionsFile(path, timeline.connections));
  const pointer: RecordsPointer = { format: RECORDS_FORMAT, requests: `${name}.requests.gz`, count, connections, connectionCount: timeline.connections.length };
  streamedTo.set(pointer, resolve(dir));
  return pointer;
}

async function atomically(dir: string, file: string, write: (path: string) => Promise<void>): Promise<void> {
  const path = join(dir, file);
  await mkdir(join(path, '..'), { recursive: true });
  const partial = `${path}.${process.pid}.partial`;
  await write(partial);
  await rename(partial, path);
}

/** Writes the requests and connections of `timeline` to DIR/`name`.requests.gz and .connections.gz atomically; returns the pointer to them. */
export async function writeRecords(dir: string, name: string, timeline: Pick<Timeline, 'requests' | 'connections'>): Promise<RecordsPointer> {
  const requests = `${name}.requests.gz`;
  const connections = `${name}.connections.gz`;
  await atomically(dir, requests, (path) => writeRecordsFile(path, timeline.requests));
  await atomically(dir, connections, (path) => writeConnectionsFile(path, timeline.connections));
  return { format: RECORDS_FORMAT, requests, count: timeline.requests.length, connections, connectionCount: timeline.connections.length };
}

function safeName(s: string): string {
  return s.replace(/[^A-Za-z0-9._-]/g, '_');
}

/**
 * The scenario as written, made whole again: its requests from the records file it points to
 * (relative to `dir`), or, from a results.json older than the records file, from the array it holds.
 */
export async function reviveRecords(dir: string, s: ScenarioResult): Promise<ScenarioResult> {
  if (!s.timeline) return s;
  const held = s.timeline.requests as unknown as RequestRecord[] | undefined;
  let requests: RequestTable;
  if (s.records) {
    if (!RECORDS_FORMATS_READ.includes(s.records.format)) {
      throw new Error(`${s.id} x ${s.profile}: records file format "${String(s.records.format)}" is not one this zerodrop reads (${RECORDS_FORMATS_READ.join(', ')}); rebuild with the zerodrop that wrote it`);
    }
    try {
      requests = await readRecordsFile(join(dir, s.records.requests));
    } catch (error) {
      throw new Error(`${s.id} x ${s.profile}: cannot read its records file ${s.records.requests}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
    if (requests.length !== s.records.count) {
      throw new Error(`${s.id} x ${s.profile}: records file ${s.records.requests} holds ${requests.length} requests, results.json says ${s.records.count}`);
    }
  } else {
    requests = RequestTable.from(Array.isArray(held) ? held : []);
  }
  let connections = s.timeline.connections;
  if (s.records?.connections !== undefined) {
    try {
      connections = await readConnectionsFile(join(dir, s.records.connections));
    } catch (error) {
      throw new Error(`${s.id} x ${s.profile}: cannot read its connections file ${s.records.connections}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }
  return { ...s, timeline: { ...s.timeline, requests, connections } };
}

/**
 * The text of results.json. A scenario with records files keeps its failed requests (the request
 * table's JSON) and the connections whose upstream leg failed; the files hold them all.
 */
export function resultsJson(run: RunResult): string {
  const scenarios = run.scenarios.map((s) =>
    s.timeline && s.records?.connections !== undefined ? { ...s, timeline: { ...s.timeline, connections: s.timeline.connections.filter(failedConnection) } } : s,
  );
  return `${JSON.stringify({ ...run, scenarios }, null, 2)}\n`;
}

function failedConnection(c: ConnectionRecord): boolean {
  return c.upstream !== 'ok' && c.upstream !== 'open';
}

/** Reads DIR/results.json back; throws when it is not a zerodrop results file. */
export async function readResults(dir: string): Promise<RunResult> {
  const path = join(dir, RESULTS_FILE);
  const data: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (!isRunResult(data)) throw new Error(`${path} is not a zerodrop results file`);
  const scenarios: ScenarioResult[] = [];
  for (const s of data.scenarios) scenarios.push(await reviveRecords(dir, s));
  return { ...data, scenarios };
}

function isRunResult(data: unknown): data is RunResult {
  if (typeof data !== 'object' || data === null) return false;
  const run = data as Partial<Record<keyof RunResult, unknown>>;
  const tool = run.tool as { name?: unknown } | undefined;
  return (
    typeof tool === 'object' &&
    tool !== null &&
    tool.name === 'zerodrop' &&
    typeof run.provider === 'string' &&
    typeof run.startedAt === 'string' &&
    typeof run.durationMs === 'number' &&
    Array.isArray(run.scenarios) &&
    run.scenarios.every(
      (s: unknown) =>
        typeof s === 'object' &&
        s !== null &&
        typeof (s as { id?: unknown }).id === 'string' &&
        typeof (s as { verdict?: unknown }).verdict === 'string' &&
        Array.isArray((s as { assertions?: unknown }).assertions),
    )
  );
}
