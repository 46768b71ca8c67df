// The `hey` driver: the load of the Envoy Gateway seed (`hey -c 100 -q 10`, seed 004) run by hey
// itself, as a check on the built-in generator. hey's per-request CSV becomes RequestRecords on the
// Recorder, so the same assertions judge it.
//
// What hey reports, read from its source (rakyll/hey requester/report.go, print.go) and checked
// against Debian's hey 0.1.4:
// - `-o csv` prints one row per request that got a response: response-time, DNS+dialup, DNS,
//   Request-write, Response-delay, Response-read, status-code, offset (seconds). A request that
//   failed (refused, reset, EOF, timeout) only increments hey's error distribution, which the CSV
//   template does not print: it leaves no trace in the CSV at all.
// - `offset` is the request's start since hey's clock origin, taken at process start.
// - Each worker waits one -q tick before each request (time.Tick), and with -n each worker sends
//   exactly n / c requests unless interrupted.
// So the driver runs a fixed count (-n = c x per-worker count covering the planned window) and
// waits for hey to finish: every request hey sent either has a row or failed, and the failures are
// n minus the rows. Their times are not reported: when hey kept pace, the pacing ticks short of a
// row account for them exactly (the workers send in lockstep on their tickers) and give an
// estimate; otherwise the time is unknown and the record sits at hey's exit. The record's error
// says which.
//
// hey is not retry-free: Go's net/http Transport sends an idempotent request again, once, when a
// reused keep-alive connection closes before any byte of the response (net/http transport.go,
// shouldRetryRequest). A failure of that kind is invisible to hey, while the built-in generator
// (no retries, by rule) records it. The agreement suite keeps this in mind; the note on the
// Timeline says it too.

import type { HttpLoadSpec } from '../../model/load.ts';
import type { RequestRecord } from '../../model/timeline.ts';
import type { Recorder } from '../../observe/recorder.ts';
import type { LeftoverTracker } from '../../state/run-record.ts';
import type { LoadSummary, LoadTarget } from '../http.ts';
import { classifyStatus } from '../outcome.ts';
import { originOf } from '../request-load.ts';
import { startClientGroup } from './client-group.ts';
import { heyRate } from '../drivers.ts';

export interface HeyPlan {
  workers: number;
  /** Requests per second per worker (hey -q). */
  qps: number;
  /** Requests each worker sends (hey -n is workers x perWorker). */
  perWorker: number;
  keepAlive: boolean;
  /** The body of each request, a POST (hey -m POST -d); a GET when undefined. */
  postBody?: string;
  /** hey -t, whole seconds. */
  timeoutS: number;
  url: string;
}

/** One CSV row: a request that got a response. */
export interface HeyRow {
  responseTimeS: number;
  /** DNS lookup plus dial: non-zero when the request opened its connection. */
  dialS: number;
  status: number;
  offsetS: number;
}

/** The hey run that covers `plannedMs` of `spec` against `target`. The spec must fit (drivers.ts). */
export function heyPlan(spec: HttpLoadSpec, target: LoadTarget, plannedMs: number): HeyPlan {
  const qps = heyRate(spec) ?? 0;
  return {
    workers: spec.connections,
    qps,
    // The first request of each worker waits one tick, so n / c ticks end at plannedMs.
    perWorker: Math.max(1, Math.ceil((plannedMs / 1000) * qps)),
    keepAlive: spec.keepAlive,
    ...(spec.postBytes === undefined ? {} : { postBody: 'x'.repeat(spec.postBytes) }),
    timeoutS: Math.max(1, Math.ceil(spec.timeoutMs / 1000)),
    url: `${originOf(target)}${spec.path}`,
  };
}

export function heyArgs(plan: HeyPlan): string[] {
  return [
    '-n', String(plan.workers * plan.perWorker),
    '-c', String(plan.workers),
    '-q', String(plan.qps),
    '-t', String(plan.timeoutS),
    '-o', 'csv',
    // The built-in generator follows no redirect either; compression is irrelevant to drains.
    '-disable-redirects',
    ...(plan.keepAlive ? [] : ['-disable-keepalive']),
    ...(plan.postBody === undefined ? [] : ['-m', 'POST', '-T', 'text/plain', '-d', plan.postBody]),
    plan.url,
  ];
}

const CSV_HEADER = 'response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset';

/** Parses hey's `-o csv` output. Throws on anything that is not that format. */
export function parseHeyCsv(text: string): HeyRow[] {
  const lines = text.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  if (lines[0] !== CSV_HEADER) throw new Error(`hey -o csv: unexpected header ${JSON.stringify(lines[0] ?? '')}`);
  return lines.slice(1).map((line, i) => {
    const cells = line.split(',');
    const nums = cells.map(Number);
    if (cells.length !== 8 || nums.some((n) => !Number.isFinite(n))) throw new Error(`hey -o csv: row ${i + 1} is not 8 numbers: ${line}`);
    const [responseTimeS = 0, dialS = 0, , , , , status = 0, offsetS = 0] = nums;
    return { responseTimeS, dialS, status, offsetS };
  });
}

/**
 * Estimated start offsets (seconds) of `missing` failed requests: the pacing ticks (k / qps) that
 * have fewer than `workers` rows, one per missing row. Only when the short ticks account for the
 * missing rows exactly: a hey that fell behind its ticks (Go's ticker drops ticks a slow worker
 * misses) leaves ticks short without any failure, and then the times are unknown (undefined).
 */
export function placeMissing(rows: readonly HeyRow[], plan: Pick<HeyPlan, 'workers' | 'qps' | 'perWorker'>, missing: number): (number | undefined)[] {
  const perTick = new Map<number, number>();
  for (const r of rows) {
    const k = Math.floor(r.offsetS * plan.qps);
    perTick.set(k, (perTick.get(k) ?? 0) + 1);
  }
  const short: number[] = [];
  for (let k = 1; k <= plan.perWorker; k++) {
    for (let n = plan.workers - (perTick.get(k) ?? 0); n > 0; n--) short.push(k / plan.qps);
  }
  return short.length === missing ? short : Array.from({ length: missing }, () => undefined);
}

export interface HeySummary extends LoadSummary {
  driver: 'hey';
  command: string[];
  /** Requests hey sent that have no CSV row: failed, counted as n minus the rows. */
  missingRows: number;
}

export interface HeyLoadHandle {
  readonly id: string;
  stop(): Promise<HeySummary>;
}

export interface HeyLoadOptions {
  signal?: AbortSignal;
  /** How long the load should cover (drivers.ts plannedLoadMs). */
  plannedMs: number;
  /** The hey binary (tests may point elsewhere). */
  binary?: string;
  /** The run's state record: hey's process group is listed there while it runs (client-group.ts). */
  tracker?: LeftoverTracker;
}

/** Extra time hey gets past its planned end before it is interrupted. */
const OVERRUN_MS = 5_000;

export function startHeyLoad(id: string, spec: HttpLoadSpec, target: LoadTarget, recorder: Recorder, opts: HeyLoadOptions): HeyLoadHandle {
  const plan = heyPlan(spec, target, opts.plannedMs);
  const args = heyArgs(plan);
  const command = [opts.binary ?? 'hey', ...args];
  recorder.event('note', {
    message: `load ${id} driven by ${command.join(' ')}; hey's CSV lists answered requests only, so the ${plan.workers * plan.perWorker} requests it sends minus its rows are counted as failed; hey (Go net/http) resends an idempotent request once when a reused keep-alive connection closes before any response byte, which the built-in generator never does`,
    detail: { load: id, driver: 'hey', command },
  });
  const spawnedAt = recorder.now();
  const group = startClientGroup(command, {
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.tracker ? { tracker: opts.tracker } : {}),
    interruptSignal: 'SIGINT', // hey stops its workers on SIGINT and still prints its report
    forceKillAfterMs: 3_000,
  });
  let interrupted = false;
  const deadline = setTimeout(() => {
    interrupted = true;
    group.interrupt();
  }, opts.plannedMs + plan.timeoutS * 1000 + OVERRUN_MS);
  let stopCalledAt: number | undefined;
  const finished = group.result.then((result) => {
    clearTimeout(deadline);
    return { result, exitedAt: recorder.now() };
  });
  let summary: Promise<HeySummary> | undefined;

  const account = async (): Promise<HeySummary> => {
    const { result, exitedAt } = await finished;
    const sent = plan.workers * plan.perWorker;
    const base = { load: id, mode: 'closed' as const, driver: 'hey' as const, command, startedAt: spawnedAt, stoppedAt: exitedAt, targetRate: plan.workers * plan.qps };
    let rows: HeyRow[];
    try {
      rows = parseHeyCsv(result.stdout);
    } catch (error) {
      // No report: nothing hey did can be counted. One failed record keeps this from passing.
      const why = `hey exited ${result.exitCode ?? result.signal ?? '?'} without its CSV report (${(error as Error).message}); stderr: ${result.stderr.slice(0, 300)}`;
      recorder.request({ id: recorder.timeline.requests.length + 1, load: id, start: spawnedAt, end: exitedAt, outcome: 'error', newConnection: false, path: spec.path, service: spec.service, error: why });
      return { ...base, sent: 1, completed: 0, failed: 1, late: 0, missingRows: 0 };
    }
    const records: RequestRecord[] = rows.map((r) => {
      const start = spawnedAt + r.offsetS * 1000;
      return {
        id: 0,
        load: id,
        start,
        end: start + r.responseTimeS * 1000,
        outcome: classifyStatus(r.status, spec.okStatus),
        status: r.status,
        newConnection: r.dialS > 0,
        path: spec.path,
        service: spec.service,
      };
    });
    // Interrupted: workers stopped early and how many requests they sent is unknown; never pass.
    const missing = interrupted || opts.signal?.aborted ? 0 : Math.max(0, sent - rows.length);
    const places = placeMissing(rows, plan, missing);
    for (const offset of places) {
      const start = offset === undefined ? exitedAt : spawnedAt + offset * 1000;
      records.push({
        id: 0,
        load: id,
        start,
        end: start,
        outcome: 'error',
        newConnection: false,
        path: spec.path,
        service: spec.service,
        error: `failed request reported by hey only as missing from its CSV (${sent} sent, ${rows.length} rows); ${offset === undefined ? 'time unknown, placed at hey exit' : 'time estimated from hey pacing'}`,
      });
    }
    records.sort((a, b) => a.end - b.end);
    for (const rec of records) {
      rec.id = recorder.timeline.requests.length + 1;
      recorder.request(rec);
    }
    if (interrupted) {
      recorder.event('note', { message: `load ${id}: hey ran past its planned end and was interrupted; requests it had in flight are unaccounted, so the run is inconclusive`, detail: { load: id } });
    }
    const completed = records.filter((r) => r.outcome === 'ok').length;
    // Like the built-in generator's: the rate over the time requests were being started, from the
    // first request to one tick after the last (n / c ticks when on time), stretched to the moment
    // the runner stopped the load if hey had ended before the scenario did (a gap in coverage).
    const tickMs = 1000 / plan.qps;
    // A loop, not Math.min(...rows): hey reports up to a million rows.
    let firstOffsetS = Infinity;
    let lastOffsetS = -Infinity;
    for (const r of rows) {
      firstOffsetS = Math.min(firstOffsetS, r.offsetS);
      lastOffsetS = Math.max(lastOffsetS, r.offsetS);
    }
    const firstStart = rows.length > 0 ? spawnedAt + firstOffsetS * 1000 : spawnedAt;
    const lastStart = rows.length > 0 ? spawnedAt + lastOffsetS * 1000 : spawnedAt;
    const windowMs = Math.max(lastStart + tickMs, stopCalledAt ?? 0) - firstStart;
    const attempted = interrupted ? rows.length : sent;
    return {
      ...base,
      sent: attempted,
      completed,
      failed: records.length - completed,
      achievedRate: windowMs > 0 ? (attempted * 1000) / windowMs : 0,
      late: interrupted ? plan.workers : 0,
      missingRows: missing,
    };
  };

  return {
    id,
    stop() {
      stopCalledAt ??= recorder.now();
      summary ??= account();
      return summary;
    },
  };
}
