// Long-lived TCP streams: each stream is one connection through the Service that sends
// sequence-numbered messages at a fixed rate and expects every one echoed, in order, by a backend
// speaking the line protocol of fixtures/reference-stream-echo.mjs (greeting `hello <pod>`, echo,
// `bye` when the backend drains). One StreamRecord per stream says how it ended: closed gracefully
// (the backend announced its drain and closed after echoing everything), stopped by the load, or
// broken (eof without announcement or with messages unanswered, reset, refused, stall). Pacing,
// replacement and the load's summary: stream-load.ts.
//
// No retries, by rule: a message is written once; a broken stream is recorded broken. With
// `reopen`, a stream the backend closed gracefully is replaced by a new connection, as a client of
// a draining server reconnects; that is a new stream with its own record, not a resend.

import net from 'node:net';
import type { TcpStreamLoadSpec } from '../model/load.ts';
import type { Recorder } from '../observe/recorder.ts';
import type { LoadHandle, LoadTarget } from './http.ts';
import { errorCodes, errorMessage } from './outcome.ts';
import { EchoStream, StreamLoad, type StreamLoadOptions } from './stream-load.ts';

export function startTcpStreamLoad(id: string, spec: TcpStreamLoadSpec, target: LoadTarget, recorder: Recorder, opts: StreamLoadOptions = {}): LoadHandle {
  return new StreamLoad<EchoStream>(id, spec, recorder, opts, (n, load) => new TcpStream(n, load, target)).start();
}

class TcpStream extends EchoStream {
  private readonly socket: net.Socket;
  private clientClosed = false;
  private buffered = '';

  constructor(n: number, load: StreamLoad<EchoStream>, target: LoadTarget) {
    super(n, load);
    // allowHalfOpen: the backend's FIN is seen as such, and our own side is closed deliberately.
    this.socket = net.connect({ host: target.host, port: target.port, allowHalfOpen: true, noDelay: true });
    this.socket.setEncoding('utf8');
    this.socket.once('connect', () => {
      this.record.localPort = this.socket.localPort;
      this.startSending();
    });
    this.socket.on('data', (text: string) => this.onData(text));
    this.socket.on('end', () => this.onEnd());
    this.socket.on('error', (err) => this.onError(err));
    this.socket.on('close', () => this.finish(this.outstanding.length === 0 && this.clientClosed ? 'stopped' : 'eof'));
  }

  protected write(seq: number): void {
    this.socket.write(`${seq}\n`);
  }

  protected destroy(): void {
    this.socket.destroy();
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
      this.record.byeAt ??= this.load.recorder.now();
      this.closeOwnSide();
      return;
    }
    this.onEcho(Number(line));
  }

  /** Stops sending and sends our FIN; the backend echoes what is left, then closes its side. */
  protected closeOwnSide(): void {
    this.stopSending();
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
}
