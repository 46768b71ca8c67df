// What the loads of long-lived streams share (tcp-stream.ts, websocket.ts, sse.ts): a load keeps
// `streams` streams open, records one StreamRecord per stream when it ends, replaces a stream its
// backend closed properly when asked to (`reopen`: a client of a draining server reconnects; that is
// a new stream with its own record, never a resend), and summarises what it achieved for loadHeld.
// EchoStream is the message side of the echo protocols (TCP, WebSocket): pacing, the messages
// outstanding, stalls.
//
// Pacing is that of a closed loop with a rate cap (like `hey -q`): each stream sends its next
// message one interval after the previous one was due, or one interval after it was sent when the
// harness fell more than LATE_THRESHOLD_MS behind: never a burst to catch up. Whether the load was
// held is its achieved rate while streams were sending (or, for SSE, receiving), against streams x
// ratePerStream (loadHeld), not the lateness of single messages.

import type { StreamLoadSpec } from '../model/load.ts';
import type { StreamEnding, StreamRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import { DEFAULT_MAX_DURATION_MS, LATE_THRESHOLD_MS, type LoadHandle, type LoadSummary } from './http.ts';
import { recordOwnStream, type OwnConnections } from './own-connection.ts';

export interface StreamLoadOptions {
  signal?: AbortSignal;
  /** The load stops by itself after this long. */
  maxDurationMs?: number;
  /** Where no Service load balancer records connections (a cluster): own-connection.ts. */
  clientConnections?: OwnConnections;
}

/** Streams a load may open in all, counting replacements: bounds a reconnect loop against a pod that closes every stream at once. */
const MAX_STREAMS_FACTOR = 20;
const MAX_STREAMS = 10_000;
const MAX_RATE_PER_STREAM = 1_000;
/** How often a stream checks itself for a stall. */
export const STALL_CHECK_MS = 25;

/** One stream as the load sees it; `reopenAfterMs` is how long its replacement waits (SSE's `retry`). */
export interface StreamHandle {
  stop(): Promise<void>;
  readonly reopenAfterMs?: number;
}

/** Opens stream number `n`; `previous` is the stream it replaces, if any (SSE resumes from its last event). */
export type OpenStream<S extends StreamHandle> = (n: number, load: StreamLoad<S>, previous: S | undefined) => S;

/** The messages of a bounded stream, if the load's streams are bounded. */
export function boundedMessages(spec: StreamLoadSpec): number | undefined {
  return 'messagesPerStream' in spec ? spec.messagesPerStream : undefined;
}

export function checkStreamSpec(spec: StreamLoadSpec): void {
  const quota = boundedMessages(spec);
  if (quota !== undefined && !(Number.isInteger(quota) && quota >= 1)) {
    throw new RangeError(`${spec.kind} load: messagesPerStream must be a positive integer, got ${quota}`);
  }
  if (!Number.isInteger(spec.streams) || spec.streams < 1 || spec.streams > MAX_STREAMS) {
    throw new RangeError(`${spec.kind} load: streams must be an integer in [1, ${MAX_STREAMS}], got ${spec.streams}`);
  }
  if (!(spec.ratePerStream > 0 && spec.ratePerStream <= MAX_RATE_PER_STREAM)) {
    throw new RangeError(`${spec.kind} load: ratePerStream must be in (0, ${MAX_RATE_PER_STREAM}], got ${spec.ratePerStream}`);
  }
  if (!(spec.stallMs > 0)) throw new RangeError(`${spec.kind} load: stallMs must be positive, got ${spec.stallMs}`);
}

export class StreamLoad<S extends StreamHandle> implements LoadHandle {
  readonly id: string;
  readonly done: Promise<LoadSummary>;
  readonly spec: StreamLoadSpec;
  readonly recorder: Recorder;
  private readonly opts: StreamLoadOptions;
  private readonly openStream: OpenStream<S>;
  private readonly live = new Set<S>();
  private readonly reopening = new Set<NodeJS.Timeout>();
  private opened = 0;
  private capped = false;
  private stopping = false;
  private startedAt = 0;
  private summary: Promise<LoadSummary> | undefined;
  private resolveDone!: (s: LoadSummary) => void;
  private backstop: NodeJS.Timeout | undefined;
  /** `intervals` and `activeMs`: gaps between consecutive messages of a stream, and their total length. */
  readonly totals = { sent: 0, echoed: 0, unanswered: 0, intervals: 0, activeMs: 0 };

  constructor(id: string, spec: StreamLoadSpec, recorder: Recorder, opts: StreamLoadOptions, openStream: OpenStream<S>) {
    checkStreamSpec(spec);
    this.id = id;
    this.spec = spec;
    this.recorder = recorder;
    this.opts = opts;
    this.openStream = openStream;
    this.done = new Promise((resolve) => (this.resolveDone = resolve));
  }

  start(): this {
    this.startedAt = this.recorder.now();
    const spread = this.firstStreamsSpreadMs();
    for (let i = 0; i < this.spec.streams; i++) {
      if (i === 0 || spread === 0) this.open(undefined);
      else this.reopenAfter((i * spread) / this.spec.streams, undefined);
    }
    this.opts.signal?.addEventListener('abort', () => void this.stop(), { once: true });
    this.backstop = setTimeout(() => void this.stop(), this.opts.maxDurationMs ?? DEFAULT_MAX_DURATION_MS);
    return this;
  }

  /** The length of a bounded stream, over which the first streams start (0 when unbounded). */
  private firstStreamsSpreadMs(): number {
    const quota = boundedMessages(this.spec);
    return quota === undefined ? 0 : (quota * 1000) / this.spec.ratePerStream;
  }

  private open(previous: S | undefined): void {
    if (this.stopping) return;
    const cap = Math.min(MAX_STREAMS, this.spec.streams * this.streamsFactor());
    if (this.opened >= cap) {
      // A reconnect the cap holds back is never tried: what follows must not read as reconnects served.
      if (!this.capped) this.recorder.event('note', { message: `load ${this.id} stopped replacing its streams: it has opened ${cap}, its most`, detail: { load: this.id, streamCap: cap } });
      this.capped = true;
      return;
    }
    this.opened++;
    this.live.add(this.openStream(this.opened, this, previous));
  }

  /** Called by a stream when it has ended; `activeMs` is the time from its first message to its last. */
  ended(stream: S, record: StreamRecord, activeMs: number): void {
    this.live.delete(stream);
    const messages = record.kind === 'sse' ? record.echoed : record.sent;
    if (messages >= 2) {
      this.totals.intervals += messages - 1;
      this.totals.activeMs += activeMs;
    }
    this.totals.sent += record.sent;
    this.totals.echoed += record.echoed;
    this.totals.unanswered += record.unanswered;
    this.recorder.stream(record);
    recordOwnStream(this.recorder, this.opts.clientConnections, record);
    // A stream the load ended while still running was a bounded one that had sent all it had to.
    if (record.ending === 'stopped' && !this.stopping) return this.open(undefined);
    if (record.ending !== 'closed' || !this.spec.reopen) return;
    this.reopenAfter(stream.reopenAfterMs ?? 0, stream);
  }

  private reopenAfter(wait: number, previous: S | undefined): void {
    if (wait <= 0) return this.open(previous);
    const timer = setTimeout(() => {
      this.reopening.delete(timer);
      this.open(previous);
    }, wait);
    this.reopening.add(timer);
  }

  /** Bounded streams are replaced all through the run: the cap on replacements follows their length. */
  private streamsFactor(): number {
    const spread = this.firstStreamsSpreadMs();
    const runMs = this.opts.maxDurationMs ?? DEFAULT_MAX_DURATION_MS;
    return spread > 0 ? Math.max(MAX_STREAMS_FACTOR, Math.ceil(runMs / spread) + 1) : MAX_STREAMS_FACTOR;
  }

  stop(): Promise<LoadSummary> {
    this.summary ??= (async () => {
      this.stopping = true;
      if (this.backstop) clearTimeout(this.backstop);
      for (const timer of this.reopening) clearTimeout(timer);
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
      // The rate each stream kept while it was active (streams stop when their backend closes
      // them, and a replacement takes a moment to connect), times the number of streams.
      if (this.totals.activeMs > 0) {
        summary.achievedRate = ((this.totals.intervals * 1000) / this.totals.activeMs) * this.spec.streams;
      }
      this.resolveDone(summary);
      return summary;
    })();
    return this.summary;
  }
}

/**
 * The client side of an echo stream (TCP, WebSocket): sends sequence-numbered messages at the
 * load's rate, matches each echo to the oldest message outstanding, and ends as a stall when the
 * oldest one gets no echo for stallMs. The transport writes, closes and reports what it saw.
 */
export abstract class EchoStream implements StreamHandle {
  protected readonly load: StreamLoad<EchoStream>;
  protected readonly record: StreamRecord;
  /** Send times of messages not yet echoed, oldest first (their sequence numbers are consecutive). */
  protected readonly outstanding: { seq: number; at: number }[] = [];
  protected finished = false;
  private nextSeq = 1;
  private sendTimer: NodeJS.Timeout | undefined;
  private readonly stallTimer: NodeJS.Timeout;
  private sending = false;
  private firstSendAt: number | undefined;
  private lastSendAt = 0;
  private nextDue = 0;
  private resolveEnded!: () => void;
  private readonly endedPromise: Promise<void>;
  /** A bounded stream's messages: once all are echoed it closes its own side. */
  private readonly quota: number | undefined;

  constructor(n: number, load: StreamLoad<EchoStream>) {
    this.load = load;
    this.endedPromise = new Promise((resolve) => (this.resolveEnded = resolve));
    const now = load.recorder.now();
    this.record = { load: load.id, kind: load.spec.kind, service: load.spec.service, stream: n, start: now, end: now, ending: 'error', sent: 0, echoed: 0, unanswered: 0, mismatched: 0 };
    this.quota = boundedMessages(load.spec);
    this.stallTimer = setInterval(() => this.checkStall(), STALL_CHECK_MS);
  }

  protected abstract write(seq: number): void;
  /** Whether the transport still takes messages (a WebSocket stops once a close frame has crossed). */
  protected canSend(): boolean {
    return true;
  }
  /** Tears the transport down at once (the stream has been recorded). */
  protected abstract destroy(): void;
  /** The load is ending: close our side the transport's way. */
  protected abstract closeOwnSide(): void;

  protected startSending(): void {
    this.sending = true;
    this.nextDue = this.load.recorder.now();
    this.sendNext();
  }

  /** Sends the next message and schedules the one after (see the pacing note at the top). */
  private sendNext(): void {
    if (!this.sending) return;
    if (!this.canSend() || (this.quota !== undefined && this.record.sent >= this.quota)) return this.stopSending();
    const now = this.load.recorder.now();
    const seq = this.nextSeq++;
    this.outstanding.push({ seq, at: now });
    this.record.sent++;
    this.firstSendAt ??= now;
    this.lastSendAt = now;
    this.write(seq);
    // Timer jitter stays on the schedule; a real fall-behind restarts it from now.
    this.nextDue = (now - this.nextDue > LATE_THRESHOLD_MS ? now : this.nextDue) + 1000 / this.load.spec.ratePerStream;
    this.sendTimer = setTimeout(() => this.sendNext(), Math.max(0, this.nextDue - this.load.recorder.now()));
  }

  protected stopSending(): void {
    this.sending = false;
    if (this.sendTimer) clearTimeout(this.sendTimer);
  }

  protected onEcho(seq: number): void {
    const head = this.outstanding[0];
    if (head !== undefined && seq === head.seq) {
      this.outstanding.shift();
      this.record.echoed++;
      this.record.lastEchoAt = this.load.recorder.now();
      this.noteRoundTrip(this.record.lastEchoAt - head.at);
      if (this.quota !== undefined && this.record.echoed >= this.quota) this.closeOwnSide();
    } else {
      this.record.mismatched++;
    }
  }

  /** The longest round trip this stream has seen (its handshake's, its echoes'). */
  protected roundTripMs = 0;

  protected noteRoundTrip(ms: number): void {
    this.roundTripMs = Math.max(this.roundTripMs, ms);
  }

  private checkStall(): void {
    const head = this.outstanding[0];
    if (head === undefined) return;
    const since = Math.max(head.at, this.record.lastEchoAt ?? 0);
    if (this.load.recorder.now() - since > this.load.spec.stallMs) {
      this.record.error = `no echo for ${this.load.spec.stallMs} ms with ${this.outstanding.length} message(s) outstanding`;
      this.finish('stall');
    }
  }

  protected finish(ending: StreamEnding): void {
    if (this.finished) return;
    this.finished = true;
    this.stopSending();
    clearInterval(this.stallTimer);
    this.record.end = this.load.recorder.now();
    this.record.ending = ending;
    this.record.unanswered = this.outstanding.length;
    this.destroy();
    this.load.ended(this, this.record, this.firstSendAt !== undefined ? this.lastSendAt - this.firstSendAt : 0);
    this.resolveEnded();
  }

  /** The load is ending: close our side and wait, at most stallMs, for the last echoes and the backend's close. */
  async stop(): Promise<void> {
    if (this.finished) return;
    this.closeOwnSide();
    const timer = setTimeout(() => this.finish(this.outstanding.length === 0 ? 'stopped' : 'stall'), this.load.spec.stallMs);
    await this.endedPromise;
    clearTimeout(timer);
  }
}
