// Server-Sent Events streams (the WHATWG HTML "server-sent events" section): each stream is one GET
// of `/events?rate=N` through the Service, on a connection of its own, answered `text/event-stream`
// with events whose `id` counts up from 1 (or from the Last-Event-ID the stream resumed from), N a
// second, as fixtures/reference-stream-app.mjs sends them. The backend names itself in a response
// header (`x-zerodrop-pod`), a gateway in front of it in `x-zerodrop-gateway`. One StreamRecord per stream:
// - the body ended cleanly (the last chunk arrived): `closed`, the drain close; the `retry` the
//   server sent last is kept, and with `reopen` the client reconnects after that many milliseconds
//   sending `Last-Event-ID`, as an EventSource does;
// - the body was cut (the connection ended before its last chunk): `eof`, or `reset`/`refused`;
// - no event for stallMs: `stall`; a response that is not a 200 event stream: `error`;
// - the load ended it, or a bounded stream had received all its events: `stopped`.
// An event id past the next one expected counts the ids skipped as `lost`; an id not past the last
// one received (or resumed from) is `duplicated`: resuming from Last-Event-ID must continue exactly.
//
// No retries, by rule: the reconnect after a clean end is a new stream with its own record; a cut
// stream is recorded cut, and nothing is reconnected for it.

import http from 'node:http';
import type { SseLoadSpec } from '../model/load.ts';
import type { StreamEnding, StreamRecord } from '../model/timeline.ts';
import type { Recorder } from '../observe/recorder.ts';
import { GATEWAY_HEADER, POD_HEADER } from '../profiles/profile.ts';
import type { LoadHandle, LoadTarget } from './http.ts';
import { errorCodes, errorMessage } from './outcome.ts';
import { headerValue } from './request-load.ts';
import { boundedMessages, STALL_CHECK_MS, StreamLoad, type StreamHandle, type StreamLoadOptions } from './stream-load.ts';

export const SSE_PATH = '/events';
/** The longest `retry` the client honours: a backend asking for more is not waited for during a short run. */
const MAX_RETRY_MS = 30_000;

export function startSseLoad(id: string, spec: SseLoadSpec, target: LoadTarget, recorder: Recorder, opts: StreamLoadOptions = {}): LoadHandle {
  return new StreamLoad<SseStream>(id, spec, recorder, opts, (n, load, previous) => new SseStream(n, load, target, previous)).start();
}

class SseStream implements StreamHandle {
  /** The id of the last event received, or resumed from: what a reconnect sends as Last-Event-ID. */
  lastEventId: string | undefined;
  private readonly load: StreamLoad<SseStream>;
  private readonly record: StreamRecord;
  private readonly req: http.ClientRequest;
  private readonly stallTimer: NodeJS.Timeout;
  private retryMs: number | undefined;
  private buffered = '';
  private event: { id?: string; data: boolean } = { data: false };
  private lastAt: number;
  private firstEventAt: number | undefined;
  private lastEventAt = 0;
  private stopping = false;
  private finished = false;
  private resolveEnded!: () => void;
  private readonly endedPromise: Promise<void>;

  constructor(n: number, load: StreamLoad<SseStream>, target: LoadTarget, previous: SseStream | undefined) {
    this.load = load;
    this.endedPromise = new Promise((resolve) => (this.resolveEnded = resolve));
    const now = load.recorder.now();
    this.lastAt = now;
    this.lastEventId = previous?.lastEventId;
    this.retryMs = previous?.retryMs;
    this.record = { load: load.id, kind: 'sse', service: load.spec.service, stream: n, start: now, end: now, ending: 'error', sent: 0, echoed: 0, unanswered: 0, mismatched: 0, lost: 0, duplicated: 0 };
    const headers: Record<string, string> = { accept: 'text/event-stream', 'cache-control': 'no-cache' };
    if (this.lastEventId !== undefined) {
      headers['last-event-id'] = this.lastEventId;
      this.record.resumedFrom = this.lastEventId;
    }
    // agent: false: a connection of its own, closed with the stream.
    this.req = http.get({ host: target.host, port: target.port, path: `${SSE_PATH}?rate=${load.spec.ratePerStream}`, headers, agent: false });
    this.req.on('socket', (socket) => socket.once('connect', () => (this.record.localPort = socket.localPort)));
    this.req.on('response', (res) => this.onResponse(res));
    this.req.on('error', (err) => this.onError(err));
    this.stallTimer = setInterval(() => this.checkStall(), STALL_CHECK_MS);
  }

  get reopenAfterMs(): number {
    return Math.min(this.retryMs ?? 0, MAX_RETRY_MS);
  }

  private onResponse(res: http.IncomingMessage): void {
    const pod = headerValue(res.headers[POD_HEADER]);
    if (pod !== undefined) this.record.pod = pod;
    const gateway = headerValue(res.headers[GATEWAY_HEADER]);
    if (gateway !== undefined) this.record.gateway = gateway;
    if (res.statusCode !== 200 || !String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
      this.record.error = `answered ${res.statusCode ?? '?'} ${res.headers['content-type'] ?? 'without a content type'}, not a 200 event stream`;
      res.resume();
      return this.finish('error');
    }
    this.lastAt = this.load.recorder.now();
    res.setEncoding('utf8');
    res.on('data', (text: string) => this.onData(text));
    // The last chunk arrived: the server ended the stream.
    res.on('end', () => {
      this.record.byeAt ??= this.load.recorder.now();
      this.finish('closed');
    });
    res.on('error', (err) => this.onError(err));
  }

  private onData(text: string): void {
    this.lastAt = this.load.recorder.now();
    this.buffered += text;
    let nl: number;
    while ((nl = this.buffered.search(/\r\n|\r|\n/)) >= 0) {
      // A CR at the end of what arrived may be the first half of a CRLF: wait for the next byte.
      if (nl === this.buffered.length - 1 && this.buffered.endsWith('\r')) break;
      const line = this.buffered.slice(0, nl);
      this.buffered = this.buffered.slice(nl + (this.buffered.startsWith('\r\n', nl) ? 2 : 1));
      this.onLine(line);
    }
  }

  /** One line of the event stream format: a field, a comment, or the blank line that dispatches an event. */
  private onLine(line: string): void {
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'id') this.event.id = value;
    else if (field === 'data') this.event.data = true;
    else if (field === 'retry' && /^\d+$/.test(value)) this.record.retryMs = this.retryMs = Number(value);
  }

  private dispatch(): void {
    const { id, data } = this.event;
    this.event = { data: false };
    if (!data) return;
    const now = this.load.recorder.now();
    this.record.sent++;
    this.firstEventAt ??= now;
    this.lastEventAt = now;
    this.record.lastEchoAt = now;
    const last = this.lastEventId === undefined ? 0 : Number(this.lastEventId);
    const seq = id === undefined ? NaN : Number(id);
    if (!Number.isInteger(seq)) this.record.mismatched++;
    else if (seq === last + 1) this.record.echoed++;
    else if (seq > last + 1) {
      this.record.lost = (this.record.lost ?? 0) + seq - last - 1;
      this.record.echoed++;
    } else this.record.duplicated = (this.record.duplicated ?? 0) + 1;
    if (id !== undefined && Number.isInteger(seq) && seq > last) this.lastEventId = id;
    const quota = boundedMessages(this.load.spec);
    if (quota !== undefined && this.record.echoed >= quota) this.finish('stopped');
  }

  private onError(err: Error): void {
    if (this.finished) return;
    if (this.stopping) return this.finish('stopped');
    const codes = errorCodes(err);
    this.record.error = errorMessage(err);
    if (codes.includes('ECONNREFUSED')) return this.finish('refused');
    // Node reports a body cut short as "aborted" (code ECONNRESET) whether a FIN or a RST ended it.
    if (err.message === 'aborted') return this.finish('eof');
    if (codes.some((c) => c === 'ECONNRESET' || c === 'EPIPE' || c === 'ECONNABORTED')) return this.finish('reset');
    this.finish('error');
  }

  private checkStall(): void {
    if (this.load.recorder.now() - this.lastAt > this.load.spec.stallMs) {
      this.record.error = `no event for ${this.load.spec.stallMs} ms`;
      this.finish('stall');
    }
  }

  private finish(ending: StreamEnding): void {
    if (this.finished) return;
    this.finished = true;
    clearInterval(this.stallTimer);
    this.record.end = this.load.recorder.now();
    this.record.ending = ending;
    this.req.destroy();
    this.load.ended(this, this.record, this.firstEventAt !== undefined ? this.lastEventAt - this.firstEventAt : 0);
    this.resolveEnded();
  }

  /** The load is ending: an event stream has nothing outstanding, so the client just closes it. */
  async stop(): Promise<void> {
    if (this.finished) return;
    this.stopping = true;
    this.finish('stopped');
    await this.endedPromise;
  }
}
