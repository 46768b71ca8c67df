// Long-lived WebSocket streams: each stream is one WebSocket (RFC 6455) to `/echo` of the Service,
// sending sequence-numbered text messages at a fixed rate and expecting each echoed, in order, as
// fixtures/reference-stream-app.mjs does. The backend names itself in its handshake response
// (`x-zerodrop-pod`), a gateway in front of it in `x-zerodrop-gateway`. One StreamRecord per stream, with the close code the client saw:
// - 1001 (going away) from the backend, every message echoed: `closed`, the drain close;
// - 1000 after the load's own close (it stops, or a bounded stream has had all its messages
//   echoed), every message echoed: `stopped`;
// - 1006 (no close frame: the connection just ended) is `eof`, or `reset`/`refused` by its socket error;
// - any other code, or a handshake that was not a 101, is an `error` naming it.
// Messages still outstanding when a stream ends are its `unanswered`, with one exception: at the
// backend's close frame, a message sent less than one round trip before the frame arrived may have
// crossed it on the wire (the backend closed before the message reached it), and after its close
// frame no endpoint may send data (RFC 6455 section 5.5.1): no backend could have answered it. Those
// are `crossed`, not lost: the client knows them unanswered and a real one sends them again on its
// new connection. The round trip is the longest this stream measured (handshake, echoes), so a
// message a backend held longer than any echo before it and then dropped at its close is
// `unanswered`. Pacing, stalls, replacement and the load's summary: stream-load.ts.
//
// The client is the `ws` package: it is maintained, it is what Node servers and most Node clients
// use, and it exposes what the record needs and the WHATWG WebSocket in Node hides: the handshake
// response (the pod's name, the local port that joins a stream to the balancer's connection) and
// the socket error behind a 1006 (reset or refused).
//
// No retries, by rule: with `reopen`, a stream the backend closed with 1001 is replaced by a new
// WebSocket, as a client of a draining server reconnects; a new stream with its own record.

import type { IncomingMessage } from 'node:http';
import net from 'node:net';
import WebSocket from 'ws';
import type { WebSocketLoadSpec } from '../model/load.ts';
import type { Recorder } from '../observe/recorder.ts';
import { GATEWAY_HEADER, POD_HEADER } from '../profiles/profile.ts';
import type { LoadHandle, LoadTarget } from './http.ts';
import { errorCodes, errorMessage } from './outcome.ts';
import { headerValue, originOf } from './request-load.ts';
import { EchoStream, StreamLoad, type StreamLoadOptions } from './stream-load.ts';

export const WEBSOCKET_PATH = '/echo';
/** RFC 6455 section 7.4.1. */
const NORMAL_CLOSURE = 1000;
const GOING_AWAY = 1001;
/** Reported, never sent: the connection ended without a close frame. */
const ABNORMAL_CLOSURE = 1006;

export function startWebSocketLoad(id: string, spec: WebSocketLoadSpec, target: LoadTarget, recorder: Recorder, opts: StreamLoadOptions = {}): LoadHandle {
  return new StreamLoad<EchoStream>(id, spec, recorder, opts, (n, load) => new WebSocketStream(n, load, target)).start();
}

class WebSocketStream extends EchoStream {
  private readonly ws: WebSocket;
  private clientClosed = false;
  /** When the backend's close frame arrived (the client stops sending at once). */
  private closeFrameAt: number | undefined;
  /** The socket error behind a close without a close frame. */
  private socketError: Error | undefined;

  constructor(n: number, load: StreamLoad<EchoStream>, target: LoadTarget) {
    super(n, load);
    // No compression: every message crosses the wire as it was sent.
    this.ws = new WebSocket(`${originOf(target).replace(/^http:/, 'ws:')}${WEBSOCKET_PATH}`, {
      perMessageDeflate: false,
      handshakeTimeout: load.spec.stallMs,
      followRedirects: false,
      // The local port as soon as the socket connects, not at the handshake: a stream refused or
      // cut before its 101 is still joined to the balancer's record of its connection (the pod).
      createConnection: ((options: net.NetConnectOpts) => {
        const socket = net.connect(options);
        socket.once('connect', () => (this.record.localPort = socket.localPort));
        return socket;
      }) as typeof net.createConnection,
    });
    this.ws.on('upgrade', (res) => {
      this.namePod(res);
      this.record.localPort = res.socket.localPort;
      this.noteRoundTrip(load.recorder.now() - this.record.start);
      // ws has no event for a close frame's arrival: it parses each chunk synchronously in its own
      // 'data' listener, so once this chunk's listeners have run its state says whether it held one.
      // Listened to once ws listens ('open'): a listener before ws's would set the socket flowing, and
      // the bytes that came with the 101 (a close frame sent at once) would go to it alone, never to ws.
      this.ws.once('open', () => res.socket.on('data', () => queueMicrotask(() => this.noteCloseFrame())));
    });
    this.ws.on('unexpected-response', (_req, res) => {
      this.namePod(res);
      this.record.error = `handshake answered ${res.statusCode ?? '?'} instead of 101`;
      res.resume();
      this.finish('error');
    });
    // A stream the load ended while its handshake was under way closes as soon as it opens.
    this.ws.on('open', () => (this.clientClosed ? this.ws.close(NORMAL_CLOSURE, 'load ends') : this.startSending()));
    this.ws.on('message', (data, isBinary) => this.onEcho(isBinary ? NaN : Number(rawText(data))));
    this.ws.on('error', (err) => {
      this.socketError ??= err;
      this.record.error ??= errorMessage(err);
    });
    this.ws.on('close', (code: number) => this.onClose(code));
  }

  private namePod(res: IncomingMessage): void {
    const pod = headerValue(res.headers[POD_HEADER]);
    if (pod !== undefined) this.record.pod = pod;
    const gateway = headerValue(res.headers[GATEWAY_HEADER]);
    if (gateway !== undefined) this.record.gateway = gateway;
  }

  private noteCloseFrame(): void {
    if (this.closeFrameAt === undefined && !this.clientClosed && this.ws.readyState !== WebSocket.OPEN) this.closeFrameAt = this.load.recorder.now();
  }

  protected override canSend(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  protected write(seq: number): void {
    this.ws.send(String(seq));
  }

  protected destroy(): void {
    if (this.ws.readyState !== WebSocket.CLOSED) this.ws.terminate();
  }

  protected closeOwnSide(): void {
    this.stopSending();
    if (this.clientClosed) return;
    this.clientClosed = true;
    // Still connecting: its handshake is let finish, then closed with 1000 (the 'open' listener).
    // Cut now, the stream would end 1006, a failure the load itself made; a handshake that never
    // finishes still fails, by ws's handshake timeout (stallMs), as it would have mid-run.
    if (this.ws.readyState === WebSocket.OPEN) this.ws.close(NORMAL_CLOSURE, 'load ends');
  }

  private onClose(code: number): void {
    if (this.finished) return;
    this.record.closeCode = code;
    if (code === GOING_AWAY && !this.clientClosed) {
      const frameAt = this.closeFrameAt ?? this.load.recorder.now();
      this.record.byeAt ??= frameAt;
      const crossed = this.outstanding.filter((m) => frameAt - m.at < this.roundTripMs);
      if (crossed.length > 0) {
        this.record.crossed = crossed.length;
        this.outstanding.splice(this.outstanding.length - crossed.length);
      }
      return this.finish('closed');
    }
    // The backend may have sent its own 1001 as ours crossed it: either way the load ended the stream.
    if ((code === NORMAL_CLOSURE || code === GOING_AWAY) && this.clientClosed) return this.finish('stopped');
    if (code === ABNORMAL_CLOSURE) {
      const codes = this.socketError ? errorCodes(this.socketError) : [];
      if (codes.includes('ECONNREFUSED')) return this.finish('refused');
      if (codes.some((c) => c === 'ECONNRESET' || c === 'EPIPE' || c === 'ECONNABORTED')) return this.finish('reset');
      return this.finish('eof');
    }
    this.record.error ??= `closed with code ${code}`;
    this.finish('error');
  }
}

function rawText(data: WebSocket.RawData): string {
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data as ArrayBuffer).toString('utf8');
}
