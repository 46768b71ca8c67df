// results.json: the machine-readable record of a run (DESIGN.md "Contracts that others build on").
// The HTML, JUnit and conformance reports are rendered from this, and CI matrices diff it, so the
// field names are a contract: add fields, never rename them.

import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StreamEnding, Timeline } from '../model/timeline.ts';
import type { AssertionResult, Verdict } from '../model/verdict.ts';

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
  /** Stream loads (long-lived TCP streams): how many ran, and how many ended broken (eof, reset, refused, stall, error). */
  streams?: { streams: number; broken: number; messages: number; unanswered: number };
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
  /** How requests were attributed to pods, per Service: by a response header the profile names, or by connection. */
  attribution?: string[];
  /** The full record of the run, for the HTML report; large. */
  timeline?: Timeline;
}

export interface RunResult {
  tool: { name: 'zerodrop'; version: string; node: string };
  provider: string;
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

export function countsOf(timeline: Timeline): Counts {
  const byOutcome: Record<string, number> = {};
  let ok = 0;
  for (const r of timeline.requests) {
    byOutcome[r.outcome] = (byOutcome[r.outcome] ?? 0) + 1;
    if (r.outcome === 'ok') ok++;
  }
  const requests = timeline.requests.length;
  const counts: Counts = { requests, ok, failed: requests - ok, byOutcome, connections: timeline.connections.length };
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
      if (!CLEAN_STREAM_ENDINGS.has(st.ending)) streams.broken++;
      streams.messages += st.sent;
      streams.unanswered += st.unanswered;
    }
    counts.streams = streams;
  }
  return counts;
}

/** Endings of a stream that lost nothing: the backend announced its close, or the load stopped it. */
const CLEAN_STREAM_ENDINGS: ReadonlySet<StreamEnding> = new Set(['closed', 'stopped']);

/** One phrase per kind of load that ran, with what it dropped, e.g. "50 flows, 0 of 60,000 packets lost". */
export function countParts(counts: Counts): { text: string; dropped: number }[] {
  const n = (v: number) => v.toLocaleString('en-US');
  const parts: { text: string; dropped: number }[] = [];
  if (counts.requests > 0) parts.push({ text: `${n(counts.requests)} requests, ${n(counts.failed)} failed`, dropped: counts.failed });
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

/** Requests failed, packets lost and streams broken: the one number a drain must keep at zero. */
export function droppedOf(counts: Counts): number {
  return counts.failed + (counts.packets?.lost ?? 0) + (counts.streams?.broken ?? 0);
}

/** Writes DIR/results.json (creating DIR), pretty-printed; returns the file's path. */
export async function writeResults(dir: string, run: RunResult): Promise<string> {
  await mkdir(dir, { recursive: true });
  const path = join(dir, RESULTS_FILE);
  await writeFile(path, resultsJson(run), 'utf8');
  return path;
}

/** The text of results.json. */
export function resultsJson(run: RunResult): string {
  return `${JSON.stringify(run, null, 2)}\n`;
}

/** Reads DIR/results.json back; throws when it is not a zerodrop results file. */
export async function readResults(dir: string): Promise<RunResult> {
  const path = join(dir, RESULTS_FILE);
  const data: unknown = JSON.parse(await readFile(path, 'utf8'));
  if (!isRunResult(data)) throw new Error(`${path} is not a zerodrop results file`);
  return data;
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
