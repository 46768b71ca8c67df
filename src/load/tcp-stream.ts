// Long-lived TCP streams: each stream is one connection through the Service that sends
// sequence-numbered messages at a fixed rate and expects every one echoed, in order, by a backend
// speaking the line protocol of fixtures/reference-stream-echo.mjs (greeting `hello <pod>`, echo,
// `bye` when the backend drains). One StreamRecord per stream says how it ended: closed gracefully
// (the backend announced its drain and closed after echoing everything), stopped by the load, or
// broken (eof without announcement or with messages unanswered, reset, refused, stall).
//
// Pacing is that of a closed loop with a rate cap (like `hey -q`): each stream sends its next
// message one interval after the previous one was due, or one interval after it was sent when the
// harness fell more than LATE_THRESHOLD_MS behind: never a burst to catch up. Whether the load was held is its achieved rate while streams were
// sending, against streams x ratePerStream (loadHeld), not the lateness of single messages.
//
// No retries, by rule: a message is written once; a broken stream is recorded broken. With
// `reopen`, a stream the backend closed gracefully is replaced by a new connection, as a client of
// a draining server reconnects; that is a new stream with its own record, not a resend.

import net from 'node:net';
import type { TcpStreamLoadSpec } from '../model/load.ts';
import type { StreamEnding, StreamRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import { LATE_THRESHOLD_MS, type LoadHandle, type LoadSummary, type LoadTarget } from './http.ts';
import { errorCodes, errorMessage } from './outcome.ts';

export interface TcpStreamLoadOptions {
  signal?: AbortSignal;
  /** The load stops by itself after this long. */
  maxDurationMs?: number;
}

/** Streams a load may open in all, counting replacements: bounds a reconnect loop against a pod that says `bye` at once. */
const MAX_STREAMS_FACTOR = 20;
const MAX_STREAMS = 10_000;
const MAX_RATE_PER_STREAM = 1_000;
/** How often a stream checks itself for a stall. */
const STALL_CHECK_MS = 25;
export const DEFAULT_MAX_DURATION_MS = 60 * 60 * 1000;

export function startTcpStreamLoad(
  id: string,
  spec: TcpStreamLoadSpec,
  target: LoadTarget,
  recorder: Recorder,
  opts: TcpStreamLoadOptions = {},
): LoadHandle {
  if (!Number.isInteger(spec.streams) || spec.streams < 1 || spec.streams > MAX_STREAMS) {
    throw new RangeError(`tcp-stream load: streams must be an integer in [1, ${MAX_STREAMS}], got ${spec.streams}`);
  }
  if (!(spec.ratePerStream > 0 && spec.ratePerStream <= MAX_RATE_PER_STREAM)) {
    throw new RangeError(`tcp-stream load: ratePerStream must be in (0, ${MAX_RATE_PER_STREAM}], got ${spec.ratePerStream}`);
  }
  if (!(spec.stallMs > 0)) throw new RangeError(`tcp-stream load: stallMs must be positive, got ${spec.stallMs}`);
  const load = new TcpStreamLoad(id, spec, target, recorder, opts);
  load.start();
  return load;
}

class TcpStreamLoad implements LoadHandle {
  readonly id: string;
  readonly done: Promise<LoadSummary>;
  private readonly spec: TcpStreamLoadSpec;
  private readonly target: LoadTarget;
  private readonly recorder: Recorder;
  private readonly opts: TcpStreamLoadOptions;
  private readonly live = new Set<Stream>();
  private opened = 0;
  private stopping = false;
  private startedAt = 0;
  private summary: Promise<LoadSummary> | undefined;
  private resolveDone!: (s: LoadSummary) => void;
  private backstop: NodeJS.Timeout | undefined;
  /** `intervals` and `sendingMs`: gaps between consecutive sends of a stream, and their total length. */
  readonly totals = { sent: 0, echoed: 0, unanswered: 0, intervals: 0, sendingMs: 0 };

  constructor(id: string, spec: TcpStreamLoadSpec, target: LoadTarget, recorder: Recorder, opts: TcpStreamLoadOptions) {
    this.id = id;
    this.spec = spec;
    this.target = target;
    this.recorder = recorder;
    this.opts = opts;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  start(): void {
    this.startedAt = this.recorder.now();
    for (let i = 0; i < this.spec.streams; i++) this.open();
    this.opts.signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.backstop = setTimeout(() => void this.stop(), this.opts.maxDurationMs ?? DEFAULT_MAX_DURATION_MS);
  }

  private open(): void {
    if (this.stopping || this.opened >= Math.min(MAX_STREAMS, this.spec.streams * MAX_STREAMS_FACTOR)) return;
    this.opened++;
    const stream = new Stream(this.opened, this, this.spec, this.target, this.recorder);
    this.live.add(stream);
  }

  /** Called by a stream when it has ended and been recorded. */
  ended(stream: Stream, record: StreamRecord, sendingMs: number): void {
    this.live.delete(stream);
    if (record.sent >= 2) {
      this.totals.intervals += record.sent - 1;
      this.totals.sendingMs += sendingMs;
    }
    this.totals.sent += record.sent;
    this.totals.echoed += record.echoed;
    this.totals.unanswered += record.unanswered;
    this.recorder.stream(record);
    if (record.ending === 'closed' && this.spec.reopen) this.open();
  }

  stop(): Promise<LoadSummary> {
    this.summary ??= (async () => {
      this.stopping = true;
      if (this.backstop) clearTimeout(this.backstop);
      await Promise.all([...this.live].map((s) => s.stop()));
      const stoppedAt = this.recorder.now();
      const summary: LoadSummary = {
        load: this.id,
        // Each stream is a worker with a rate cap, as in closed mode (HttpLoadSpec).
        mode: 'closed',
        sent: this.totals.sent,
        completed: this.totals.echoed,
        failed: this.totals.unanswered,
        startedAt: this.startedAt,
        stoppedAt,
        targetRate: this.spec.streams * this.spec.ratePerStream,
        late: 0,
      };
      // The rate each stream kept while it was sending (streams stop sending when their backend
      // says bye, and a replacement takes a moment to connect), times the number of streams.
      if (this.totals.sendingMs > 0) {
        summary.achievedRate = ((this.totals.intervals * 1000) / this.totals.sendingMs) * this.spec.streams;
      }
      this.resolveDone(summary);
      return summary;
    })();
    return this.summary;
  }
}

class Stream {
  private readonly load: TcpStreamLoad;
  private readonly spec: TcpStreamLoadSpec;
  private readonly recorder: Recorder;
  private readonly socket: net.Socket;
  private readonly record: StreamRecord;
  /** Send times of messages not yet echoed, oldest first (their sequence numbers are consecutive). */
  private readonly outstanding: { seq: number; at: number }[] = [];
  private nextSeq = 1;
  private sendTimer: NodeJS.Timeout | undefined;
  private readonly stallTimer: NodeJS.Timeout;
  private sending = false;
  private clientClosed = false;
  private finished = false;
  private buffered = '';
  private firstSendAt: number | undefined;
  private lastSendAt = 0;
  private nextDue = 0;
  private resolveEnded!: () => void;
  private readonly endedPromise: Promise<void>;

  constructor(n: number, load: TcpStreamLoad, spec: TcpStreamLoadSpec, target: LoadTarget, recorder: Recorder) {
    this.load = load;
    this.spec = spec;
    this.recorder = recorder;
    this.endedPromise = new Promise((resolve) => (this.resolveEnded = resolve));
    const now = recorder.now();
    this.record = { load: load.id, stream: n, start: now, end: now, ending: 'error', sent: 0, echoed: 0, unanswered: 0, mismatched: 0 };
    // allowHalfOpen: the backend's FIN is seen as such, and our own side is closed deliberately.
    this.socket = net.connect({ host: target.host, port: target.port, allowHalfOpen: true, noDelay: true });
    this.socket.setEncoding('utf8');
    this.socket.once('connect', () => this.onConnect());
    this.socket.on('data', (text: string) => this.onData(text));
    this.socket.on('end', () => this.onEnd());
    this.socket.on('error', (err) => this.onError(err));
    this.socket.on('close', () => this.finish(this.outstanding.length === 0 && this.clientClosed ? 'stopped' : 'eof'));
    this.stallTimer = setInterval(() => this.checkStall(), STALL_CHECK_MS);
  }

  private onConnect(): void {
    this.record.localPort = this.socket.localPort;
    this.sending = true;
    this.nextDue = this.recorder.now();
    this.sendNext();
  }

  /** Sends the next message and schedules the one after (see the pacing note at the top). */
  private sendNext(): void {
    if (!this.sending) return;
    const now = this.recorder.now();
    const seq = this.nextSeq++;
    this.outstanding.push({ seq, at: now });
    this.record.sent++;
    this.firstSendAt ??= now;
    this.lastSendAt = now;
    this.socket.write(`${seq}\n`);
    // Timer jitter stays on the schedule; a real fall-behind restarts it from now.
    this.nextDue = (now - this.nextDue > LATE_THRESHOLD_MS ? now : this.nextDue) + 1000 / this.spec.ratePerStream;
    this.sendTimer = setTimeout(() => this.sendNext(), Math.max(0, this.nextDue - this.recorder.now()));
  }

  private onData(text: string): void {
    this.buffered += text;
    let nl: number;
    while ((nl = this.buffered.indexOf('\n')) >= 0) {
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + 1);
      this.onLine(line);
    }
  }

  private onLine(line: string): void {
    if (line.startsWith('hello ')) {
      this.record.pod = line.slice('hello '.length);
      return;
    }
    if (line === 'bye') {
      this.record.byeAt ??= this.recorder.now();
      this.closeOwnSide();
      return;
    }
    const seq = Number(line);
    const head = this.outstanding[0];
    if (head !== undefined && seq === head.seq) {
      this.outstanding.shift();
      this.record.echoed++;
      this.record.lastEchoAt = this.recorder.now();
    } else {
      this.record.mismatched++;
    }
  }

  /** Stops sending and sends our FIN; the backend echoes what is left, then closes its side. */
  private closeOwnSide(): void {
    this.sending = false;
    if (this.sendTimer) clearTimeout(this.sendTimer);
    if (this.clientClosed) return;
    this.clientClosed = true;
    if (!this.socket.destroyed) this.socket.end();
  }

  private onEnd(): void {
    if (this.outstanding.length > 0) this.finish('eof');
    else if (this.record.byeAt !== undefined) this.finish('closed');
    else if (this.clientClosed) this.finish('stopped');
    else this.finish('eof');
  }

  private onError(err: Error): void {
    const codes = errorCodes(err);
    this.record.error = errorMessage(err);
    if (codes.includes('ECONNREFUSED')) this.finish('refused');
    else if (codes.some((c) => c === 'ECONNRESET' || c === 'EPIPE' || c === 'ECONNABORTED')) this.finish('reset');
    else this.finish('error');
  }

  private checkStall(): void {
    const head = this.outstanding[0];
    if (head === undefined) return;
    const since = Math.max(head.at, this.record.lastEchoAt ?? 0);
    if (this.recorder.now() - since > this.spec.stallMs) {
      this.record.error = `no echo for ${this.spec.stallMs} ms with ${this.outstanding.length} message(s) outstanding`;
      this.finish('stall');
    }
  }

  private finish(ending: StreamEnding): void {
    if (this.finished) return;
    this.finished = true;
    this.sending = false;
    if (this.sendTimer) clearTimeout(this.sendTimer);
    clearInterval(this.stallTimer);
    this.record.end = this.recorder.now();
    this.record.ending = ending;
    this.record.unanswered = this.outstanding.length;
    this.socket.destroy();
    this.load.ended(this, this.record, this.firstSendAt !== undefined ? this.lastSendAt - this.firstSendAt : 0);
    this.resolveEnded();
  }

  /** The load is ending: close our side and wait, at most stallMs, for the last echoes and the backend's FIN. */
  async stop(): Promise<void> {
    if (this.finished) return;
    this.closeOwnSide();
    const timer = setTimeout(() => this.finish(this.outstanding.length === 0 ? 'stopped' : 'stall'), this.spec.stallMs);
    await this.endedPromise;
    clearTimeout(timer);
  }
}
