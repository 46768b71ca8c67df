import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../suites/helpers/marked-process.ts';
import { MAX_HEAD_BYTES, ResponseParser, type Feed } from './http1-response.ts';

/**
 * What a reused read buffer holds beyond the bytes just read, and after they were parsed: the end of
 * a head, a chunk line's end, a whole other response. A parser that looks past the bytes it was
 * given, or keeps a reference to them, reads these.
 */
const STALE = '\r\n\r\nHTTP/1.1 500 Stale\r\nContent-Length: 0\r\n\r\n0\r\n';

/**
 * Feeds `text` cut at the given positions, as the generator does: each piece is read into the same
 * buffer (`onread`), stale bytes after it, and the buffer is overwritten once the piece is parsed.
 * Returns what each feed said.
 */
function feedCut(parser: ResponseParser, text: string, cuts: number[]): Feed[] {
  const bytes = Buffer.from(text, 'latin1');
  const readBuffer = Buffer.alloc(bytes.length + STALE.length);
  const bounds = [0, ...cuts, bytes.length];
  const said: Feed[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    readBuffer.fill(STALE, 'latin1');
    const n = bytes.copy(readBuffer, 0, bounds[i], bounds[i + 1]);
    said.push(parser.feed(readBuffer, n));
    readBuffer.fill(STALE, 'latin1');
  }
  return said;
}

/** The response, fed whole and then cut in two at every byte: the parser must say the same each time. */
function everySplit(text: string): { parser: ResponseParser; said: Feed }[] {
  const results = [];
  for (let cut = 0; cut <= text.length; cut++) {
    const parser = new ResponseParser();
    const said = feedCut(parser, text, cut === 0 || cut === text.length ? [] : [cut]).at(-1)!;
    results.push({ parser, said });
  }
  return results;
}

const CHUNKED =
  'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Zerodrop-Pod: pod-c\r\nx-zerodrop-pod: second\r\n\r\n' +
  '5\r\nhello\r\n1a;ext=1\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nTrailer: x\r\n\r\n';

describe('ResponseParser', () => {
  it('reads a Content-Length response and its pod, whatever the cut', () => {
    const text = 'HTTP/1.1 503 Service Unavailable\r\ncontent-length: 5\r\nx-zerodrop-pod: pod-b\r\nx-zerodrop-gateway: gw-1\r\n\r\nnope!';
    for (const { parser, said } of everySplit(text)) {
      expect(said).toBe('done');
      expect(parser).toMatchObject({ status: 503, pod: 'pod-b', gateway: 'gw-1', keepAlive: true, trailing: false });
    }
  });

  it("reads the pod names from the headers a profile's attribution names, and leaves unread a header it does not", () => {
    const text = 'HTTP/1.1 200 OK\r\ncontent-length: 2\r\nX-Served-By: gw-7\r\nx-zerodrop-gateway: not-this\r\nx-zerodrop-pod: pod-b\r\n\r\nok';
    const renamed = new ResponseParser({ pod: 'x-zerodrop-pod', gateway: 'x-served-by' });
    expect(feedCut(renamed, text, [20]).at(-1)).toBe('done');
    expect(renamed).toMatchObject({ pod: 'pod-b', gateway: 'gw-7' });
    // attribution: 'connection': the gateway names no pod, so no header is taken for it.
    const unnamed = new ResponseParser({ pod: 'x-zerodrop-pod', gateway: undefined });
    expect(feedCut(unnamed, text, []).at(-1)).toBe('done');
    expect(unnamed.gateway).toBeUndefined();
    expect(unnamed.pod).toBe('pod-b');
  });

  it('reads a chunked response with extensions and trailers, whatever the cut, and keeps the first pod value', () => {
    for (const { parser, said } of everySplit(CHUNKED)) {
      expect(said).toBe('done');
      expect(parser).toMatchObject({ status: 200, pod: 'pod-c', keepAlive: true });
    }
    // Byte by byte too.
    const parser = new ResponseParser();
    const said = feedCut(parser, CHUNKED, [...Array(CHUNKED.length - 1).keys()].map((i) => i + 1));
    expect(said.at(-1)).toBe('done');
    expect(said.slice(0, -1).every((s) => s === 'more')).toBe(true);
  });

  it('is not done before the last byte', () => {
    for (const text of [CHUNKED, 'HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc']) {
      const parser = new ResponseParser();
      expect(parser.feed(Buffer.from(text.slice(0, -1), 'latin1'))).toBe('more');
      expect(parser.endOfStream()).toBe(false);
    }
  });

  it('skips interim 1xx responses', () => {
    const parser = new ResponseParser();
    expect(feedCut(parser, 'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', [10])).toEqual(['more', 'done']);
    expect(parser.status).toBe(200);
  });

  it('has no body for 204 and 304', () => {
    for (const status of [204, 304]) {
      const parser = new ResponseParser();
      expect(parser.feed(Buffer.from(`HTTP/1.1 ${status} X\r\nContent-Length: 10\r\n\r\n`))).toBe('done');
    }
  });

  it('reads a response without a length until the connection ends, and never reuses that connection', () => {
    const parser = new ResponseParser();
    expect(parser.feed(Buffer.from('HTTP/1.1 200 OK\r\n\r\nsome body'))).toBe('more');
    expect(parser.keepAlive).toBe(false);
    expect(parser.endOfStream()).toBe(true);
    const gzip = new ResponseParser();
    expect(gzip.feed(Buffer.from('HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 2\r\n\r\nab'))).toBe('more');
  });

  it('follows Connection and the HTTP version for reuse', () => {
    const cases: [string, boolean][] = [
      ['HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n', true],
      ['HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n', false],
      ['HTTP/1.1 200 OK\r\nconnection: Keep-Alive, Close\r\nContent-Length: 0\r\n\r\n', false],
      ['HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n', false],
      ['HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n', true],
    ];
    for (const [text, keepAlive] of cases) {
      const parser = new ResponseParser();
      expect(parser.feed(Buffer.from(text))).toBe('done');
      expect(parser.keepAlive, text).toBe(keepAlive);
    }
  });

  it('notices bytes after the end of the response', () => {
    const parser = new ResponseParser();
    expect(parser.feed(Buffer.from('HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nabHTTP/1.1'))).toBe('done');
    expect(parser.trailing).toBe(true);
  });

  it('starts over after reset()', () => {
    const parser = new ResponseParser();
    parser.feed(Buffer.from('HTTP/1.1 200 OK\r\nx-zerodrop-pod: a\r\nConnection: close\r\nContent-Length: 0\r\n\r\n'));
    parser.reset();
    expect(parser).toMatchObject({ status: undefined, pod: undefined, keepAlive: true });
    expect(parser.feed(Buffer.from('HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n'))).toBe('done');
    expect(parser.status).toBe(404);
  });

  it('refuses what is not an HTTP/1.x response, saying why', () => {
    const bad: [string, RegExp][] = [
      ['SSH-2.0-OpenSSH\r\n\r\n', /not an HTTP\/1.x status line/],
      ['HTTP/1.1 2x0 OK\r\n\r\n', /bad status/],
      ['HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n', /bad content-length/],
      ['HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n', /bad content-length/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n', /bad chunk size/],
      ['HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXY', /not followed by CRLF/],
    ];
    for (const [text, why] of bad) {
      const parser = new ResponseParser();
      expect(parser.feed(Buffer.from(text)), text).toBe('invalid');
      expect(parser.error).toMatch(why);
    }
    const huge = new ResponseParser();
    expect(huge.feed(Buffer.from(`HTTP/1.1 200 OK\r\nx: ${'a'.repeat(MAX_HEAD_BYTES)}`))).toBe('invalid');
    expect(huge.error).toMatch(/larger than/);
  });
});

describe('ResponseParser on generated responses', () => {
  /** A random valid response: status, a few headers, a Content-Length or chunked framing. */
  function generate(random: () => number): { text: string; status: number; pod: string } {
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
    const status = pick([200, 201, 404, 500, 503]);
    const pod = `pod-${Math.floor(random() * 1000)}`;
    const body = 'x'.repeat(Math.floor(random() * 3000));
    const headers = [`X-Zerodrop-Pod: ${pod}`, 'Server: test', `Date: ${new Date(0).toUTCString()}`];
    for (let i = Math.floor(random() * 4); i > 0; i--) headers.push(`X-Filler-${i}: ${'v'.repeat(Math.floor(random() * 200))}`);
    let payload = '';
    if (random() < 0.5) {
      headers.push(`Content-Length: ${body.length}`);
      payload = body;
    } else {
      headers.push('Transfer-Encoding: chunked');
      let rest = body;
      while (rest.length > 0) {
        const n = 1 + Math.floor(random() * Math.min(rest.length, 700));
        payload += `${n.toString(16)}\r\n${rest.slice(0, n)}\r\n`;
        rest = rest.slice(n);
      }
      payload += '0\r\n\r\n';
    }
    headers.sort(() => random() - 0.5);
    // Names in any case, optional whitespace around values (RFC 9110 5.1, 5.6.3).
    const mixCase = (name: string) => [...name].map((c) => (random() < 0.5 ? c.toUpperCase() : c.toLowerCase())).join('');
    const ows = () => pick(['', ' ', '\t', ' \t ']);
    const lines = headers.map((h) => {
      const colon = h.indexOf(':');
      return `${mixCase(h.slice(0, colon))}:${ows()}${h.slice(colon + 1).trim()}${ows()}`;
    });
    return { text: `HTTP/1.1 ${status} Reason\r\n${lines.join('\r\n')}\r\n\r\n${payload}`, status, pod };
  }

  it('finds the end of 300 random responses cut at random places, never before it', () => {
    const random = seededRandom(7);
    for (let n = 0; n < 300; n++) {
      const { text, status, pod } = generate(random);
      const cuts = [...new Set(Array.from({ length: Math.floor(random() * 8) }, () => 1 + Math.floor(random() * (text.length - 1))))].sort((a, b) => a - b);
      const parser = new ResponseParser();
      const said = feedCut(parser, text, cuts);
      expect(said.slice(0, -1).every((s) => s === 'more'), `response ${n}, cuts ${cuts.join(',')}`).toBe(true);
      expect(said.at(-1), `response ${n}, cuts ${cuts.join(',')}`).toBe('done');
      expect(parser).toMatchObject({ status, pod, keepAlive: true, trailing: false });
    }
  });
});
