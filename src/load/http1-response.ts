// An incremental parser for HTTP/1.1 responses, just enough for the load generator: the status, the
// two headers that say which pods served the request, and where the response ends (Content-Length,
// chunked, or the close of the connection), so that a connection can be reused for the next request.
// Bodies are counted, never kept. It is fed the bytes of one connection, one response at a time.
//
// Why our own rather than a client library's: the generator records every request, and at the
// benchmark's rates (issue 7: at least 0.9x autocannon) the cost of a general client (promises,
// header objects, body streams, retry bookkeeping) is most of the generator's CPU.

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

export class ResponseParser {
  /** Status of the response, once its head has been read. */
  status: number | undefined;
  /** First x-zerodrop-pod value. */
  pod: string | undefined;
  /** First x-zerodrop-gateway value. */
  gateway: string | undefined;
  /** Whether the server lets the connection carry another request after this response. */
  keepAlive = true;
  /** The server sent bytes after the end of the response: the connection must not be reused. */
  trailing = false;
  /** Why the response is invalid, when feed() said so. */
  error: string | undefined;

  private state: BodyState = Body.Head;
  /** Bytes of an unfinished head, chunk-size line or trailer line carried to the next chunk. */
  private pending: Buffer | undefined;
  /** Body bytes still expected (Length, ChunkData) or CRLF bytes still expected (ChunkEnd). */
  private remaining = 0;

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

  feed(chunk: Buffer): Feed {
    let data = chunk;
    let at = 0;
    while (at < data.length) {
      switch (this.state) {
        case Body.Head: {
          if (this.pending !== undefined) {
            data = Buffer.concat([this.pending, data.subarray(at)]);
            at = 0;
            this.pending = undefined;
          }
          const end = data.indexOf(HEAD_END, at);
          if (end < 0) {
            if (data.length - at > MAX_HEAD_BYTES) return this.invalid(`response head larger than ${MAX_HEAD_BYTES} bytes`);
            this.pending = data.subarray(at);
            return 'more';
          }
          if (!this.parseHead(data.toString('latin1', at, end))) return 'invalid';
          at = end + 4;
          break;
        }
        case Body.Length: {
          const n = Math.min(this.remaining, data.length - at);
          this.remaining -= n;
          at += n;
          if (this.remaining === 0) this.state = Body.Done;
          break;
        }
        case Body.ChunkSize:
        case Body.Trailers: {
          const lf = data.indexOf(LF, at);
          if (lf < 0) {
            this.pending = this.pending === undefined ? data.subarray(at) : Buffer.concat([this.pending, data.subarray(at)]);
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
          const size = parseChunkSize(text);
          if (size === undefined) return this.invalid(`bad chunk size ${JSON.stringify(text.slice(0, 40))}`);
          if (size === 0) this.state = Body.Trailers;
          else {
            this.state = Body.ChunkData;
            this.remaining = size;
          }
          break;
        }
        case Body.ChunkData: {
          const n = Math.min(this.remaining, data.length - at);
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

  /** Reads a head (without its final CRLFCRLF); a 1xx head is skipped and the next one awaited. */
  private parseHead(head: string): boolean {
    // "HTTP/1.1 200 OK": version, space, three digits.
    if (!head.startsWith('HTTP/1.') || head.charCodeAt(8) !== 32) {
      this.error = `not an HTTP/1.x status line: ${JSON.stringify(head.slice(0, 40))}`;
      return false;
    }
    const status = Number(head.slice(9, 12));
    if (!Number.isInteger(status) || status < 100 || status > 999) {
      this.error = `bad status in ${JSON.stringify(head.slice(0, 40))}`;
      return false;
    }
    let keepAlive = head.charCodeAt(7) === 49; // HTTP/1.1 keeps the connection unless told otherwise
    let length: number | undefined;
    let chunked = false;
    let transferEncoding = false;
    let pod: string | undefined;
    let gateway: string | undefined;
    let i = head.indexOf('\r\n');
    while (i >= 0) {
      const start = i + 2;
      const next = head.indexOf('\r\n', start);
      const end = next < 0 ? head.length : next;
      i = next;
      const colon = head.indexOf(':', start);
      if (colon < 0 || colon > end) continue;
      // Only names of the lengths we look for are compared, to keep a response's cost low.
      const n = colon - start;
      if (n !== 10 && n !== 14 && n !== 17 && n !== 18) continue;
      const name = head.slice(start, colon).toLowerCase();
      const value = head.slice(colon + 1, end).trim();
      if (name === 'content-length') {
        const v = /^\d+$/.test(value) ? Number(value) : NaN;
        if (!Number.isSafeInteger(v) || (length !== undefined && length !== v)) {
          this.error = `bad content-length ${JSON.stringify(value)}`;
          return false;
        }
        length = v;
      } else if (name === 'x-zerodrop-pod') pod ??= value;
      else if (name === 'x-zerodrop-gateway') gateway ??= value;
      else if (name === 'transfer-encoding') {
        transferEncoding = true;
        chunked = value.toLowerCase().split(',').at(-1)?.trim() === 'chunked';
      } else if (name === 'connection') {
        const tokens = value.toLowerCase().split(',').map((t) => t.trim());
        if (tokens.includes('close')) keepAlive = false;
        else if (tokens.includes('keep-alive')) keepAlive = true;
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

function parseChunkSize(line: string): number | undefined {
  const semi = line.indexOf(';');
  const hex = (semi < 0 ? line : line.slice(0, semi)).trim();
  if (!/^[0-9a-fA-F]{1,12}$/.test(hex)) return undefined;
  return parseInt(hex, 16);
}
