// The measurements of the `scale` bench (scale-bench.ts) that must run in a process of their own, so
// that their peak resident memory is theirs alone. Each prints one JSON line.
//
//   node src/bench/scale-child.ts generate <host> <port> <rate> <seconds> <dir>
//     zerodrop's generator alone at <rate> requests/s (open mode) against <host>:<port> for <seconds>,
//     then the assertions over its requests and the records file written into <dir>.
//   node src/bench/scale-child.ts old <report dir> <out file>
//     the format before the records file, for the run in <report dir>: every request an object, and
//     a results.json holding every request and connection, written to <out file>.

import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { evaluate } from '../assert/index.ts';
import { startHttpLoad } from '../load/http.ts';
import type { RequestRecord } from '../model/timeline.ts';
import { Recorder } from '../observe/recorder.ts';
import { combineVerdicts } from '../model/verdict.ts';
import { countsOf, finishRecords, readResults, recordsName, writeResults, type RunResult } from '../report/results.ts';
import { RecordsStream } from '../report/records-file.ts';
import { TOOL_VERSION } from '../paths.ts';

/** Resident set size at its peak so far, bytes (Linux reports maxRSS in kilobytes). */
export function peakRss(): number {
  return process.resourceUsage().maxRSS * 1024;
}

/** A full garbage collection, so that heap figures are what is held, not what is waiting to go. */
function collect(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

/** Bytes held on the heap and in array buffers (typed arrays live outside the heap). */
function held(): number {
  collect();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
}

export interface GenerateResult {
  sent: number;
  recorded: number;
  failed: number;
  achievedRate?: number;
  /** Bytes of the request columns (RequestTable.bytes()). */
  tableBytes: number;
  /** The report directory the run was written to (results.json and records/). */
  dir: string;
  recordsFileBytes: number;
  evaluateMs: number;
  writeMs: number;
  peakRss: number;
}

async function generate(host: string, port: number, rate: number, seconds: number, dir: string): Promise<GenerateResult> {
  const recorder = new Recorder();
  // As `zerodrop run` does: the requests go to the records file as they arrive.
  const name = recordsName(1, 'generator', 'nginx');
  await using stream = RecordsStream.open(join(dir, `${name}.requests.gz`), recorder.timeline.requests);
  const load = startHttpLoad(
    'scale',
    { kind: 'http', service: 'nginx', path: '/', keepAlive: true, mode: 'open', rate, connections: 200, timeoutMs: 5_000 },
    { host, port },
    recorder,
    { maxDurationMs: seconds * 1000 + 5_000 },
  );
  await sleep(seconds * 1000);
  const summary = await load.stop();
  const requests = recorder.timeline.requests;
  let t = performance.now();
  const counts = countsOf(recorder.timeline);
  const assertions = evaluate([{ assert: 'noFailedRequests' }], recorder.timeline);
  const evaluateMs = performance.now() - t;
  t = performance.now();
  const records = await finishRecords(dir, name, stream, recorder.timeline);
  const run: RunResult = {
    tool: { name: 'zerodrop', version: TOOL_VERSION, node: process.version },
    provider: 'local',
    startedAt: new Date(recorder.timeline.originEpochMs).toISOString(),
    durationMs: seconds * 1000,
    scenarios: [{ id: 'generator', profile: 'nginx', verdict: combineVerdicts(assertions), durationMs: seconds * 1000, assertions, counts, timeline: recorder.timeline, records }],
  };
  await writeResults(dir, run);
  const writeMs = performance.now() - t;
  const recordsFile = join(dir, records.requests);
  const result: GenerateResult = {
    sent: summary.sent,
    recorded: requests.length,
    failed: counts.failed,
    tableBytes: requests.bytes(),
    dir,
    recordsFileBytes: (await stat(recordsFile)).size,
    evaluateMs,
    writeMs,
    peakRss: peakRss(),
  };
  if (summary.achievedRate !== undefined) result.achievedRate = summary.achievedRate;
  return result;
}

export interface OldFormatResult {
  requests: number;
  /** Heap bytes per request held as objects (the Timeline's old `requests: RequestRecord[]`). */
  objectBytesPerRequest: number;
  /** Bytes per request held by column (allocated chunks and interned names). */
  columnBytesPerRequest: number;
  resultsJsonBytes: number;
  writeMs: number;
  /** Why the old results.json could not be written (one JSON string past V8's limit); its size is then counted piece by piece. */
  writeError?: string;
  peakRss: number;
}

/** Pretty-printed JSON of the requests at their depth in results.json (scenarios[].timeline.requests[]), counted one at a time. */
function prettyBytes(objects: readonly RequestRecord[]): number {
  const indent = 10;
  let n = 0;
  for (const r of objects) {
    const text = JSON.stringify(r, null, 2);
    n += Buffer.byteLength(text) + indent * (text.split('\n').length) + 2;
  }
  return n;
}

async function oldFormat(dir: string, out: string): Promise<OldFormatResult> {
  const run = await readResults(dir);
  const timeline = run.scenarios[0]?.timeline;
  if (!timeline) throw new Error(`${dir}: no timeline`);
  const table = timeline.requests;
  const withTable = held();
  const objects: RequestRecord[] = table.toArray();
  const withObjects = held();
  const t = performance.now();
  // What writeResults wrote before the records files: the whole Timeline, every request and connection in it, pretty-printed.
  const old = { ...run, scenarios: run.scenarios.map(({ records: _, ...s }) => ({ ...s, timeline: { ...timeline, requests: objects } })) };
  let resultsJsonBytes: number;
  let writeError: string | undefined;
  try {
    const text = `${JSON.stringify(old, null, 2)}\n`;
    await writeFile(out, text, 'utf8');
    resultsJsonBytes = Buffer.byteLength(text);
  } catch (error) {
    // Past about 500 MB of JSON, V8 cannot make the string: the old writer failed here.
    if (!(error instanceof RangeError)) throw error;
    writeError = error.message;
    const rest = JSON.stringify({ ...old, scenarios: old.scenarios.map((s) => ({ ...s, timeline: { ...s.timeline, requests: [] } })) }, null, 2);
    resultsJsonBytes = Buffer.byteLength(rest) + prettyBytes(objects);
  }
  const writeMs = performance.now() - t;
  return {
    requests: objects.length,
    objectBytesPerRequest: (withObjects - withTable) / objects.length,
    // Counted (the columns' allocated bytes and names): the measured delta also holds the connections read beside them.
    columnBytesPerRequest: table.bytes() / table.length,
    resultsJsonBytes,
    writeMs,
    ...(writeError !== undefined ? { writeError } : {}),
    peakRss: peakRss(),
  };
}

if (import.meta.main) {
  const [mode, ...args] = process.argv.slice(2);
  if (mode === 'generate') {
    const [host = '', port = '', rate = '', seconds = '', dir = ''] = args;
    console.log(JSON.stringify(await generate(host, Number(port), Number(rate), Number(seconds), dir)));
  } else if (mode === 'old') {
    const [dir = '', out = ''] = args;
    console.log(JSON.stringify(await oldFormat(dir, out)));
  } else {
    console.error('usage: scale-child.ts generate <host> <port> <rate> <seconds> <dir> | old <report dir> <out file>');
    process.exitCode = 2;
  }
}
