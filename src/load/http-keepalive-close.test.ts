// The generator's side of the keep-alive race of a drain: a keep-alive connection the server closes between two requests,
// without saying Connection: close, is recorded as `unannounced-close` (the race a drain must not
// run), and one closed after Connection: close is not; a think time paces a worker on a timer; an
// unpaced load states the rate it must hold.

import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpLoadSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import { startHttpLoad } from './http.ts';

const servers: net.Server[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve));
});

/** A server answering every request; `after(n, socket)` runs once the n-th response of a socket is written. */
async function server(head: (n: number) => string, after: (n: number, socket: net.Socket) => void = () => undefined): Promise<number> {
  const s = net.createServer((socket) => {
    let n = 0;
    let buffered = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      while (buffered.includes('\r\n\r\n')) {
        buffered = buffered.slice(buffered.indexOf('\r\n\r\n') + 4);
        n++;
        socket.write(`HTTP/1.1 200 OK\r\nContent-Length: 0\r\nx-zerodrop-gateway: gw-1\r\n${head(n)}\r\n`);
        after(n, socket);
      }
    });
  });
  servers.push(s);
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return (s.address() as AddressInfo).port;
}

const spec = (o: Partial<HttpLoadSpec>): HttpLoadSpec => ({ kind: 'http', service: 'svc', path: '/', keepAlive: true, mode: 'closed', connections: 1, timeoutMs: 2000, ...o });

describe('keep-alive connections closed by the server', () => {
  it('records a close between two requests without Connection: close, naming the pod that answered last (the mutant)', async () => {
    // Closed 20 ms after the 2nd response, while the worker thinks for 200 ms: no request fails, the close is still seen.
    const port = await server(() => '', (n, socket) => n === 2 && setTimeout(() => socket.end(), 20));
    const recorder = new Recorder();
    const load = startHttpLoad('ka', spec({ thinkMs: 200 }), { host: '127.0.0.1', port }, recorder, { maxRequests: 3 });
    await load.done;
    const closes = recorder.timeline.events.filter((e) => e.kind === 'unannounced-close');
    expect(closes).toHaveLength(1);
    expect(closes[0]).toMatchObject({ pod: 'gw-1', detail: { load: 'ka', how: 'fin' } });
    expect(recorder.timeline.requests.every((r) => r.outcome === 'ok')).toBe(true);
  });

  it('records nothing when the server said Connection: close first (the correct drain)', async () => {
    const port = await server((n) => (n === 2 ? 'Connection: close\r\n' : ''), (n, socket) => n === 2 && socket.end());
    const recorder = new Recorder();
    const load = startHttpLoad('ka', spec({ thinkMs: 50 }), { host: '127.0.0.1', port }, recorder, { maxRequests: 4 });
    await load.done;
    expect(recorder.timeline.events.filter((e) => e.kind === 'unannounced-close')).toHaveLength(0);
    expect(recorder.timeline.requests.map((r) => r.newConnection)).toEqual([true, false, true, false]);
  });

  it('records nothing for a load without keep-alive', async () => {
    const port = await server(() => '', (_n, socket) => setTimeout(() => socket.end(), 5));
    const recorder = new Recorder();
    await startHttpLoad('nk', spec({ keepAlive: false, thinkMs: 30 }), { host: '127.0.0.1', port }, recorder, { maxRequests: 3 }).done;
    expect(recorder.timeline.events.filter((e) => e.kind === 'unannounced-close')).toHaveLength(0);
  });
});

describe('think time and held rate', () => {
  it('a worker waits at least thinkMs between a response and its next request', async () => {
    const port = await server(() => '');
    const recorder = new Recorder();
    await startHttpLoad('think', spec({ thinkMs: 30 }), { host: '127.0.0.1', port }, recorder, { maxRequests: 4 }).done;
    const r = recorder.timeline.requests;
    expect(r).toHaveLength(4);
    // Timers have a millisecond's grain.
    for (let i = 1; i < r.length; i++) expect(r.at(i).start - r.at(i - 1).end).toBeGreaterThanOrEqual(29);
  });

  it('an unpaced closed load reports heldRatePerWorker x connections as its target, for loadHeld', async () => {
    const port = await server(() => '');
    const summary = await startHttpLoad('held', spec({ connections: 2, thinkMs: 1, heldRatePerWorker: 7 }), { host: '127.0.0.1', port }, new Recorder(), { maxRequests: 4 }).done;
    expect(summary.targetRate).toBe(14);
  });

  it('rejects a negative think time', () => {
    expect(() => startHttpLoad('bad', spec({ thinkMs: -1 }), { host: '127.0.0.1', port: 1 }, new Recorder())).toThrow(/thinkMs must be 0 or more/);
  });
});
