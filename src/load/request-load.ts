// What the request generators (http.ts on node:net, http2.ts on node:http2) share: the life of a load
// (start, abort, stop, the bounds that make it stop by itself, waiting for what is in flight, the
// summary), pacing and its interruptible sleeps, and the request record. Sending, connections and
// outcome mapping stay with each generator; nothing here retries anything, by rule
// (docs/architecture.md).

import type { Outcome, RequestRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import type { HttpLoadOptions, LoadHandle, LoadSummary, LoadTarget } from './http.ts';
import { harnessError } from './outcome.ts';

/**
 * Records cost about 70 bytes each, by column (src/model/request-table.ts): 5 million is 350 MB, over
 * 16 minutes at Envoy Gateway's 5,000 requests/s.
 */
export const DEFAULT_MAX_REQUESTS = 5_000_000;
export const DEFAULT_MAX_DURATION_MS = 60 * 60 * 1000;

/** `http://host:port`, with an IPv6 host in brackets. */
export function originOf(target: LoadTarget): string {
  return `http://${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}`;
}

/** One value of a response header (the first when it was repeated). */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Paced like a ticker: the next start is one interval after this one's due time, or now when a slow
 * response already used that up (never a burst to catch up).
 */
export function nextDue(due: number, intervalMs: number, now: number): number {
  return Math.max(due + intervalMs, now);
}

/** Sleeps that stopping the load ends at once. */
export class Sleepers {
  private readonly wakers = new Set<() => void>();

  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        this.wakers.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      this.wakers.add(wake);
    });
  }

  wakeAll(): void {
    for (const wake of [...this.wakers]) wake();
  }
}

/**
 * The fields every request record starts with; the generator adds what it learned about the request.
 * The optional fields are there from the start, undefined (JSON leaves them out): a generator makes
 * tens of thousands of records a second and keeps them all, and a record whose fields are added later
 * costs a second allocation each and more work for the garbage collector.
 */
export function requestRecord(
  recorder: Recorder,
  fields: { load: string; start: number; outcome: Outcome; newConnection: boolean; path: string; service: string },
): RequestRecord {
  return {
    id: recorder.timeline.requests.length + 1,
    load: fields.load,
    start: fields.start,
    end: recorder.now(),
    outcome: fields.outcome,
    newConnection: fields.newConnection,
    path: fields.path,
    service: fields.service,
    status: undefined,
    pod: undefined,
    gateway: undefined,
    backendPod: undefined,
    localPort: undefined,
    connectionStart: undefined,
    error: undefined,
    streamId: undefined,
  };
}

/** A request in flight: the load cancels it on abort and waits for it on stop. */
export interface InFlightRequest {
  cancel(err: Error): void;
  done: Promise<void>;
}

/**
 * The life of a request load. A subclass starts its loops in `schedule()`, sends with `mayStart()`
 * before each request, counts each finished one with `count()`, and closes its connections in
 * `closeConnections()` once every request is over.
 */
export abstract class RequestLoad implements LoadHandle {
  readonly id: string;
  readonly done: Promise<LoadSummary>;
  private resolveDone!: (s: LoadSummary) => void;
  readonly recorder: Recorder;
  protected readonly origin: string;
  private readonly signal: AbortSignal | undefined;
  private readonly maxRequests: number;
  private readonly maxDurationMs: number;
  protected readonly inFlight = new Set<InFlightRequest>();
  protected readonly loops: Promise<void>[] = [];
  protected readonly sleepers = new Sleepers();
  /** Whether stopping at a bound is noted on the Timeline (a single request has nothing to note). */
  protected notesBounds = true;
  protected startedAt = 0;
  private schedulingStoppedAt: number | undefined;
  protected stopping = false;
  private stopPromise: Promise<LoadSummary> | undefined;
  protected sent = 0;
  protected completed = 0;
  protected failed = 0;

  constructor(id: string, target: LoadTarget, recorder: Recorder, opts: HttpLoadOptions) {
    this.id = id;
    this.recorder = recorder;
    this.origin = originOf(target);
    this.signal = opts.signal;
    this.maxRequests = opts.maxRequests ?? DEFAULT_MAX_REQUESTS;
    this.maxDurationMs = opts.maxDurationMs ?? DEFAULT_MAX_DURATION_MS;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  start(): void {
    this.startedAt = this.recorder.now();
    if (this.signal?.aborted) {
      void this.stop();
      return;
    }
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.schedule();
  }

  stop(): Promise<LoadSummary> {
    this.endScheduling();
    this.stopPromise ??= this.shutdown();
    return this.stopPromise;
  }

  /** Starts the load's loops or timers. */
  protected abstract schedule(): void;
  /** Closes every connection; called once no request is in flight. */
  protected abstract closeConnections(): Promise<void>;
  /** The summary of the load, stopped at `stoppedAt`. */
  protected abstract summary(stoppedAt: number): LoadSummary;
  /** The requests in flight now. A load that knows them otherwise (one per worker) need not keep `inFlight`. */
  protected requestsInFlight(): InFlightRequest[] {
    return [...this.inFlight];
  }
  /** Called once when scheduling ends (stop, abort or a bound), before sleeping loops wake. */
  protected onSchedulingEnd(): void {}

  private readonly onAbort = (): void => {
    this.endScheduling();
    for (const request of this.requestsInFlight()) request.cancel(harnessError('ZERODROP_ABORTED', 'aborted'));
    void this.stop();
  };

  private endScheduling(): void {
    if (this.stopping) return;
    this.stopping = true;
    this.schedulingStoppedAt = this.recorder.now();
    this.onSchedulingEnd();
    this.sleepers.wakeAll();
  }

  private async shutdown(): Promise<LoadSummary> {
    try {
      await Promise.all(this.loops);
      // Each in-flight request ends within its timeout (plus the generator's grace to let go of it).
      for (let left = this.requestsInFlight(); left.length > 0; left = this.requestsInFlight()) await Promise.all(left.map((r) => r.done));
      await this.closeConnections();
    } finally {
      this.signal?.removeEventListener('abort', this.onAbort);
    }
    const summary = this.summary(this.recorder.now());
    this.resolveDone(summary);
    return summary;
  }

  /** Whether another request may start; when a bound is reached the load stops by itself. */
  protected mayStart(now = this.recorder.now()): boolean {
    if (this.stopping) return false;
    const bound =
      this.sent >= this.maxRequests ? `maxRequests ${this.maxRequests}` : now - this.startedAt >= this.maxDurationMs ? `maxDurationMs ${this.maxDurationMs}` : undefined;
    if (bound === undefined) return true;
    if (this.notesBounds) this.recorder.event('note', { message: `load ${this.id} stopped by itself at ${bound}`, detail: { load: this.id } });
    void this.stop();
    return false;
  }

  /** Counts a finished request by its outcome: `completed + failed === sent` once the load is over. */
  protected count(outcome: Outcome): void {
    if (outcome === 'ok') this.completed++;
    else this.failed++;
  }

  /** The summary fields every mode has. */
  protected baseSummary(mode: LoadSummary['mode'], stoppedAt: number, late: number): LoadSummary {
    return {
      load: this.id,
      mode,
      sent: this.sent,
      completed: this.completed,
      failed: this.failed,
      startedAt: this.startedAt,
      stoppedAt,
      late,
    };
  }

  /** Requests per second while the load was starting requests; undefined for an empty window. */
  protected achievedRate(stoppedAt: number): number | undefined {
    const windowMs = (this.schedulingStoppedAt ?? stoppedAt) - this.startedAt;
    return windowMs > 0 ? ((this.completed + this.failed) * 1000) / windowMs : undefined;
  }
}
