// An incremental parser for HTTP/1.1 responses, just enough for the load generator: the status, the
// two headers that say which pods served the request, and where the response ends (Content-Length,
// chunked, or the close of the connection), so that a connection can be reused for the next request.
// Bodies are counted, never kept. It is fed the bytes of one connection, one response at a time.
//
// Why our own rather than a client library's: the generator records every request, and at the
// benchmark's rates (the target: at least 0.9x autocannon, docs/benchmarks.md) the cost of a general client (promises,
// header objects, body streams, retry bookkeeping) is most of the generator's CPU.

import { GATEWAY_HEADER, POD_HEADER } from '../profiles/profile.ts';

/** Refuse a response whose status line and headers are larger than this: it is not a real server. */
export const MAX_HEAD_BYTES = 64 * 1024;

const CR = 13;
const LF = 10;
const HEAD_END = Buffer.from('\r\n\r\n');

/** Where the parser is in a response. Numbers rather than an enum: Node runs this file with its types stripped. */
const Body = {
  /** Still reading the status line and headers. */
  Head: 0,
  Length: 1,
  ChunkSize: 2,
  ChunkData: 3,
  /** The CRLF after a chunk's data. */
  ChunkEnd: 4,
  Trailers: 5,
  /** No length given: the body ends when the server closes the connection. */
  UntilClose: 6,
  Done: 7,
} as const;
type BodyState = (typeof Body)[keyof typeof Body];

export type Feed = 'more' | 'done' | 'invalid';

/**
 * The response headers that name the pod behind a response: `pod` (the backend, x-zerodrop-pod) and
 * `gateway` (the gateway pod that forwarded it, x-zerodrop-gateway); a profile's `attribution`
 * may rename either, or leave one unread (undefined) when its system names no pod.
 */
export interface NameHeaders {
  pod?: string | undefined;
  gateway?: string | undefined;
}
export const DEFAULT_NAME_HEADERS: Readonly<NameHeaders> = { pod: POD_HEADER, gateway: GATEWAY_HEADER };

export class ResponseParser {
  /** Status of the response, once its head has been read. */
  status: number | undefined;
  /** First value of the pod header (x-zerodrop-pod by default). */
  pod: string | undefined;
  /** First value of the gateway header (x-zerodrop-gateway by default). */
  gateway: string | undefined;
  /** Whether the server lets the connection carry another request after this response. */
  keepAlive = true;
  /** The server sent bytes after the end of the response: the connection must not be reused. */
  trailing = false;
  /** Why the response is invalid, when feed() said so. */
  error: string | undefined;

  private readonly podHeader: Buffer | undefined;
  private readonly gatewayHeader: Buffer | undefined;
  /** Header name lengths worth comparing: a response costs a length check for every other header. */
  private readonly lengths = new Uint8Array(256);

  constructor(names: NameHeaders = DEFAULT_NAME_HEADERS) {
    this.podHeader = names.pod === undefined ? undefined : Buffer.from(names.pod.toLowerCase());
    this.gatewayHeader = names.gateway === undefined ? undefined : Buffer.from(names.gateway.toLowerCase());
    for (const name of [CONTENT_LENGTH, TRANSFER_ENCODING, CONNECTION, this.podHeader, this.gatewayHeader]) if (name && name.length < 256) this.lengths[name.length] = 1;
  }

  private state: BodyState = Body.Head;
  /** Bytes of an unfinished head, chunk-size line or trailer line carried to the next chunk. */
  private pending: Buffer | undefined;
  /** Body bytes still expected (Length, ChunkData) or CRLF bytes still expected (ChunkEnd). */
  private remaining = 0;
  // A connection's responses mostly name the same pod: its string is made once.
  private readonly podNames = new LastName();
  private readonly gatewayNames = new LastName();

  /** Readies the parser for the response to the next request on the same connection. */
  reset(): void {
    this.status = undefined;
    this.pod = undefined;
    this.gateway = undefined;
    this.keepAlive = true;
    this.trailing = false;
    this.error = undefined;
    this.state = Body.Head;
    this.pending = undefined;
    this.remaining = 0;
  }

  /** The connection reached its end (FIN): whether that completes the response. */
  endOfStream(): boolean {
    if (this.state === Body.UntilClose) this.state = Body.Done;
    return this.state === Body.Done;
  }

  /**
   * Reads the next `length` bytes of the response, from `chunk`. Nothing of `chunk` is kept once this
   * returns (a head cut short is copied), so the caller may read the next bytes into the same buffer.
   */
  feed(chunk: Buffer, length = chunk.length): Feed {
    let data = chunk;
    let size = length;
    let at = 0;
    while (at < size) {
      switch (this.state) {
        case Body.Head: {
          if (this.pending !== undefined) {
            data = Buffer.concat([this.pending, data.subarray(at, size)]);
            size = data.length;
            at = 0;
            this.pending = undefined;
          }
          // Bytes past `size` are stale (a reused buffer): a match there is no match.
          let end = data.indexOf(HEAD_END, at);
          if (end + HEAD_END.length > size) end = -1;
          if (end < 0) {
            if (size - at > MAX_HEAD_BYTES) return this.invalid(`response head larger than ${MAX_HEAD_BYTES} bytes`);
            this.pending = Buffer.from(data.subarray(at, size));
            return 'more';
          }
          if (!this.parseHead(data, at, end)) return 'invalid';
          at = end + 4;
          break;
        }
        case Body.Length: {
          const n = Math.min(this.remaining, size - at);
          this.remaining -= n;
          at += n;
          if (this.remaining === 0) this.state = Body.Done;
          break;
        }
        case Body.ChunkSize:
        case Body.Trailers: {
          let lf = data.indexOf(LF, at);
          if (lf >= size) lf = -1;
          if (lf < 0) {
            this.pending = this.pending === undefined ? Buffer.from(data.subarray(at, size)) : Buffer.concat([this.pending, data.subarray(at, size)]);
            if (this.pending.length > MAX_HEAD_BYTES) return this.invalid('chunk-size or trailer line too long');
            return 'more';
          }
          const part = data.subarray(at, lf);
          const line = (this.pending === undefined ? part : Buffer.concat([this.pending, part])).toString('latin1');
          this.pending = undefined;
          at = lf + 1;
          const text = line.endsWith('\r') ? line.slice(0, -1) : line;
          if (this.state === Body.Trailers) {
            if (text === '') this.state = Body.Done;
            break;
          }
          const chunkSize = parseChunkSize(text);
          if (chunkSize === undefined) return this.invalid(`bad chunk size ${JSON.stringify(text.slice(0, 40))}`);
          if (chunkSize === 0) this.state = Body.Trailers;
          else {
            this.state = Body.ChunkData;
            this.remaining = chunkSize;
          }
          break;
        }
        case Body.ChunkData: {
          const n = Math.min(this.remaining, size - at);
          this.remaining -= n;
          at += n;
          if (this.remaining === 0) {
            this.state = Body.ChunkEnd;
            this.remaining = 2;
          }
          break;
        }
        case Body.ChunkEnd: {
          const expected = this.remaining === 2 ? CR : LF;
          if (data[at] !== expected) return this.invalid('chunk data not followed by CRLF');
          at++;
          if (--this.remaining === 0) this.state = Body.ChunkSize;
          break;
        }
        case Body.UntilClose:
          return 'more';
        case Body.Done:
          this.trailing = true;
          return 'done';
      }
    }
    if (this.state === Body.Done) return 'done';
    return 'more';
  }

  private invalid(why: string): Feed {
    this.error = why;
    return 'invalid';
  }

  /**
   * Reads the head in `buf[from, to)` (without its final CRLFCRLF); a 1xx head is skipped and the
   * next one awaited. It reads bytes in place: a string is made only of the values kept (the pod and
   * gateway names) and of the rare headers whose value is a list (Transfer-Encoding, an unusual
   * Connection), because making strings of every response's head was most of the generator's own
   * per-request work.
   */
  private parseHead(buf: Buffer, from: number, to: number): boolean {
    // "HTTP/1.1 200 OK": version, space, three digits.
    if (to - from < 12 || !bytesAre(buf, from, HTTP_1) || buf[from + 8] !== SP) {
      this.error = `not an HTTP/1.x status line: ${quoted(buf, from, to)}`;
      return false;
    }
    const status = digitsValue(buf, from + 9, from + 12);
    if (status < 100) {
      this.error = `bad status in ${quoted(buf, from, to)}`;
      return false;
    }
    let keepAlive = buf[from + 7] === DIGIT_1; // HTTP/1.1 keeps the connection unless told otherwise
    let length: number | undefined;
    let chunked = false;
    let transferEncoding = false;
    let pod: string | undefined;
    let gateway: string | undefined;
    // One pass over the header lines: each ends at CRLF (the last one at `to`).
    let start = lineEnd(buf, from, to) + 2;
    while (start < to) {
      const end = lineEnd(buf, start, to);
      const lineStart = start;
      start = end + 2;
      let colon = lineStart;
      while (colon < end && buf[colon] !== COLON) colon++;
      // Only names of the lengths we look for are compared, to keep a response's cost low.
      const n = colon - lineStart;
      if (colon === end || this.lengths[n] !== 1) continue;
      let vs = colon + 1;
      let ve = end;
      while (vs < ve && isOws(buf[vs])) vs++;
      while (ve > vs && isOws(buf[ve - 1])) ve--;
      if (n === 14 && nameIs(buf, lineStart, CONTENT_LENGTH)) {
        const v = ve - vs > 0 && ve - vs <= 15 ? digitsValue(buf, vs, ve) : -1;
        if (v < 0 || (length !== undefined && length !== v)) {
          this.error = `bad content-length ${JSON.stringify(buf.toString('latin1', vs, ve))}`;
          return false;
        }
        length = v;
      } else if (this.podHeader && n === this.podHeader.length && nameIs(buf, lineStart, this.podHeader)) pod ??= this.podNames.name(buf, vs, ve);
      else if (this.gatewayHeader && n === this.gatewayHeader.length && nameIs(buf, lineStart, this.gatewayHeader)) gateway ??= this.gatewayNames.name(buf, vs, ve);
      else if (n === 17 && nameIs(buf, lineStart, TRANSFER_ENCODING)) {
        transferEncoding = true;
        chunked = buf.toString('latin1', vs, ve).toLowerCase().split(',').at(-1)?.trim() === 'chunked';
      } else if (n === 10 && nameIs(buf, lineStart, CONNECTION)) {
        if (ve - vs === KEEP_ALIVE.length && nameIs(buf, vs, KEEP_ALIVE)) keepAlive = true;
        else if (ve - vs === CLOSE.length && nameIs(buf, vs, CLOSE)) keepAlive = false;
        else {
          const tokens = buf.toString('latin1', vs, ve).toLowerCase().split(',').map((t) => t.trim());
          if (tokens.includes('close')) keepAlive = false;
          else if (tokens.includes('keep-alive')) keepAlive = true;
        }
      }
    }
    if (status < 200 && status !== 101) return true; // interim response: the real one follows
    this.status = status;
    this.pod = pod;
    this.gateway = gateway;
    this.keepAlive = keepAlive;
    if (status === 204 || status === 304 || status === 101) this.state = Body.Done;
    else if (chunked) this.state = Body.ChunkSize;
    // RFC 9112 6.3: a response with a transfer coding other than chunked last runs until the close.
    else if (transferEncoding || length === undefined) {
      this.state = Body.UntilClose;
      this.keepAlive = false;
    } else if (length === 0) this.state = Body.Done;
    else {
      this.state = Body.Length;
      this.remaining = length;
    }
    return true;
  }
}

const SP = 32;
const COLON = 58;
const DIGIT_0 = 48;
const DIGIT_1 = 49;
const HTTP_1 = Buffer.from('HTTP/1.');
// Header names (and Connection's two common values) in lower case, compared to the response's bytes.
const CONTENT_LENGTH = Buffer.from('content-length');
const TRANSFER_ENCODING = Buffer.from('transfer-encoding');
const CONNECTION = Buffer.from('connection');
const KEEP_ALIVE = Buffer.from('keep-alive');
const CLOSE = Buffer.from('close');

const isOws = (c: number | undefined) => c === SP || c === 9;

/** Where the line starting at `from` ends: its CRLF, or `to`. */
function lineEnd(buf: Buffer, from: number, to: number): number {
  let k = from;
  while (k < to && !(buf[k] === CR && buf[k + 1] === LF)) k++;
  return k;
}

/** Whether `buf` holds exactly `bytes` at `at`. */
function bytesAre(buf: Buffer, at: number, bytes: Buffer): boolean {
  for (let k = 0; k < bytes.length; k++) if (buf[at + k] !== bytes[k]) return false;
  return true;
}

/** The string of a header value, made again only when its bytes differ from the last one's. */
class LastName {
  private bytes: Buffer | undefined;
  private text = '';

  name(buf: Buffer, from: number, to: number): string {
    const last = this.bytes;
    if (last !== undefined && last.length === to - from && bytesAre(buf, from, last)) return this.text;
    this.bytes = Buffer.from(buf.subarray(from, to));
    this.text = this.bytes.toString('latin1');
    return this.text;
  }
}

/** Whether `buf` holds `lower` at `at`, ASCII letters compared without case. */
function nameIs(buf: Buffer, at: number, lower: Buffer): boolean {
  for (let k = 0; k < lower.length; k++) {
    const c = buf[at + k] ?? 0;
    if ((c >= 65 && c <= 90 ? c + 32 : c) !== lower[k]) return false;
  }
  return true;
}

/** The decimal number in `buf[from, to)`, or -1 when a byte there is not a digit. */
function digitsValue(buf: Buffer, from: number, to: number): number {
  let v = 0;
  for (let k = from; k < to; k++) {
    const d = (buf[k] ?? 0) - DIGIT_0;
    if (d < 0 || d > 9) return -1;
    v = v * 10 + d;
  }
  return v;
}

/** The start of a head, quoted for an error message. */
function quoted(buf: Buffer, from: number, to: number): string {
  return JSON.stringify(buf.toString('latin1', from, Math.min(to, from + 40)));
}

function parseChunkSize(line: string): number | undefined {
  const semi = line.indexOf(';');
  const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
  if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return undefined;
  return parseInt(hex, 16);
}
