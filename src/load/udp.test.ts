// The packet load: the packet format, exact accounting against an echo that loses, duplicates and
// reorders on purpose, and the pluggable transport a TURN client uses.

import { spawnSync } from 'node:child_process';
import dgram from 'node:dgram';

import { afterEach, describe, expect, it } from 'vitest';

import type { UdpLoadSpec } from '../model/load.ts';
import { Recorder } from '../observe/recorder.ts';
import {
  PACKET_ECHOED,
  PACKET_LATE_THRESHOLD_MS,
  decodePacket,
  echoPacket,
  encodePacket,
  startUdpLoad,
  validateUdpLoad,
  type FlowTransportFactory,
} from './udp.ts';
import { dropsSince, readUdpDrops } from '../observe/udp-drops.ts';
import { loadHeld } from '../assert/validity.ts';
import { watchLoop } from '../../suites/helpers/loop-watch.ts';

const sockets: dgram.Socket[] = [];
afterEach(() => {
  for (const s of sockets.splice(0)) s.close();
});

/** An in-process echo; `mangle` decides, per packet, how many copies go back and after how long. */
async function echo(mangle: (flow: number, seq: number) => { copies: number; delayMs?: number } = () => ({ copies: 1 })) {
  const socket = dgram.createSocket('udp4');
  sockets.push(socket);
  socket.on('message', (msg, rinfo) => {
    const p = decodePacket(msg);
    if (!p) return;
    const { copies, delayMs = 0 } = mangle(p.flow, p.seq);
    const reply = echoPacket(msg, 'echo-1');
    const send = () => {
      for (let i = 0; i < copies; i++) socket.send(reply, rinfo.port, rinfo.address);
    };
    if (delayMs > 0) setTimeout(send, delayMs);
    else send();
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  return { host: '127.0.0.1', port: socket.address().port };
}

const spec = (overrides: Partial<UdpLoadSpec> = {}): UdpLoadSpec => ({
  kind: 'udp',
  service: 'svc',
  flows: 3,
  ratePerFlow: 200,
  durationMs: 500,
  payloadBytes: 100,
  replyTimeoutMs: 300,
  ...overrides,
});

describe('packet format', () => {
  it('round-trips the header and carries the echoing pod', () => {
    const sent = encodePacket({ token: 0xdeadbeef, flow: 7, seq: 123_456, sentAt: 1234.5678 }, 80);
    expect(sent.length).toBe(80);
    expect(decodePacket(sent)).toEqual({ type: 1, token: 0xdeadbeef, flow: 7, seq: 123_456, sentAt: 1234.5678 });
    const echoed = decodePacket(echoPacket(sent, 'backend-1'));
    expect(echoed).toEqual({ type: PACKET_ECHOED, token: 0xdeadbeef, flow: 7, seq: 123_456, sentAt: 1234.5678, pod: 'backend-1' });
    expect(decodePacket(Buffer.from('hello world, not a zerodrop packet'))).toBeUndefined();
  });

  it('rejects specs it cannot hold or bound', () => {
    expect(() => validateUdpLoad(spec({ flows: 0 }))).toThrow(/flows/);
    expect(() => validateUdpLoad(spec({ payloadBytes: 8 }))).toThrow(/payloadBytes/);
    expect(() => validateUdpLoad(spec({ ratePerFlow: 1e6, durationMs: 1e6 }))).toThrow(/bound/);
  });
});

describe('startUdpLoad', () => {
  it('accounts every packet of every flow against a perfect echo', async () => {
    const target = await echo();
    const recorder = new Recorder();
    using loop = watchLoop();
    const load = startUdpLoad('udp', spec(), target, recorder);
    const summary = await load.done;
    expect(summary).toMatchObject({ load: 'udp', mode: 'udp', flows: 3, sent: 300, received: 300, lost: 0, duplicated: 0, targetRate: 600 });
    // Never late while the test's own loop kept up (a starved test process may send late, rightly).
    if (loop.maxDelayMs() < PACKET_LATE_THRESHOLD_MS / 2) expect(summary.late).toBe(0);
    expect(summary.achievedRate).toBeGreaterThan(500);
    const flows = recorder.timeline.flows ?? [];
    expect(flows).toHaveLength(3);
    for (const f of flows) {
      expect(f).toMatchObject({ sent: 100, received: 100, lost: 0, losses: [] });
      expect(f.pods).toEqual([{ pod: 'echo-1', first: f.start, last: f.end, count: 100 }]);
      expect(f.rttMs!.p50).toBeLessThan(50);
      expect(f.localPort).toBeGreaterThan(0);
    }
    // stop() after done returns the same summary: flows are recorded once.
    expect(await load.stop()).toBe(summary);
    expect(recorder.timeline.flows).toHaveLength(3);
  });

  it('names lost sequence numbers as ranges and counts duplicates and reordering', async () => {
    const target = await echo((flow, seq) => {
      if (flow === 1 && seq >= 10 && seq <= 19) return { copies: 0 };
      if (flow === 1 && seq === 30) return { copies: 0 };
      if (flow === 0 && seq === 5) return { copies: 3 };
      // Held back past several later packets: arrives out of order.
      if (flow === 2 && seq === 40) return { copies: 1, delayMs: 40 };
      return { copies: 1 };
    });
    const recorder = new Recorder();
    const summary = await startUdpLoad('udp', spec(), target, recorder).done;
    expect(summary).toMatchObject({ sent: 300, received: 289, lost: 11, duplicated: 2, reordered: 1 });
    const [f0, f1, f2] = recorder.timeline.flows ?? [];
    expect(f0).toMatchObject({ duplicated: 2, lost: 0 });
    expect(f1?.losses.map((l) => [l.from, l.to])).toEqual([
      [10, 19],
      [30, 30],
    ]);
    expect(f1!.losses[0]!.lastSentAt).toBeGreaterThan(f1!.losses[0]!.firstSentAt);
    expect(f2).toMatchObject({ reordered: 1, lost: 0 });
  });

  it('counts an echo slower than replyTimeoutMs as lost', async () => {
    const target = await echo((flow, seq) => (flow === 0 && seq === 3 ? { copies: 1, delayMs: 250 } : { copies: 1 }));
    const recorder = new Recorder();
    const summary = await startUdpLoad('udp', spec({ flows: 1, durationMs: 200, replyTimeoutMs: 100 }), target, recorder).done;
    expect(summary.lost).toBe(1);
    expect(recorder.timeline.flows?.[0]?.losses).toEqual([expect.objectContaining({ from: 3, to: 3 })]);
    expect(recorder.timeline.flows?.[0]?.lateEchoes).toBe(1);
  });

  it('stops early on stop(), waits for echoes in flight, and records only what was sent', async () => {
    const target = await echo();
    const recorder = new Recorder();
    const load = startUdpLoad('udp', spec({ durationMs: 10_000 }), target, recorder);
    await new Promise((r) => setTimeout(r, 400));
    const summary = await load.stop();
    // Of the 6,000 packets it would have sent in 10 s; the worker thread's start-up time varies.
    expect(summary.sent).toBeGreaterThan(0);
    expect(summary.sent).toBeLessThan(1000);
    expect(summary.lost).toBe(0);
  });

  it('reports packets sent late when it could not hold its schedule, which makes the run inconclusive', async () => {
    const target = await echo();
    const recorder = new Recorder();
    const load = startUdpLoad('udp', spec({ flows: 2, durationMs: 600 }), target, recorder, { thread: 'main' });
    await new Promise((r) => setTimeout(r, 150));
    const until = performance.now() + 250;
    while (performance.now() < until) {
      // The generator's thread is blocked: packets due now go out late, none is skipped.
    }
    const summary = await load.done;
    expect(summary.sent).toBe(240);
    expect(summary.late).toBeGreaterThan(0);
    expect(loadHeld([summary]).verdict).toBe('inconclusive');
  });

  it('carries the same packets over a pluggable transport (what the TURN client plugs in)', async () => {
    // An in-memory transport: echoes every packet itself, as if relayed, under the pod name "relayed".
    const opened: number[] = [];
    const transport: FlowTransportFactory = async (ctx) => {
      opened.push(ctx.flow);
      return {
        send: (packet) => queueMicrotask(() => ctx.onDatagram(echoPacket(packet, 'relayed'))),
        close: () => undefined,
      };
    };
    const recorder = new Recorder();
    const summary = await startUdpLoad('turn', spec({ flows: 2, durationMs: 100 }), { host: 'unused', port: 0 }, recorder, { transport }).done;
    expect(opened.sort()).toEqual([0, 1]);
    expect(summary).toMatchObject({ sent: 40, received: 40, lost: 0 });
    expect(recorder.timeline.flows?.[0]?.pods[0]?.pod).toBe('relayed');
    expect(recorder.timeline.flows?.[0]?.localPort).toBeUndefined();
  });

  it('sees a flow move to another pod whose name has the same length', async () => {
    // The generator reuses the flow's last pod name while the echoed name bytes are unchanged; names of
    // equal length are where a cache that compared lengths only would miss the move.
    let replies = 0;
    const transport: FlowTransportFactory = async (ctx) => ({
      send: (packet) => queueMicrotask(() => ctx.onDatagram(echoPacket(packet, replies++ < 10 ? 'pod-a' : 'pod-b'))),
      close: () => undefined,
    });
    const recorder = new Recorder();
    const summary = await startUdpLoad('move', spec({ flows: 1, durationMs: 100 }), { host: 'unused', port: 0 }, recorder, { transport }).done;
    expect(summary).toMatchObject({ sent: 20, received: 20, lost: 0 });
    expect(recorder.timeline.flows?.[0]?.pods.map(({ pod, count }) => ({ pod, count }))).toEqual([
      { pod: 'pod-a', count: 10 },
      { pod: 'pod-b', count: 10 },
    ]);
  });
});

describe('readUdpDrops', () => {
  it.runIf(process.platform === 'linux')('sees the kernel drop datagrams at a full receive buffer', async () => {
    const socket = dgram.createSocket('udp4');
    sockets.push(socket);
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    socket.setRecvBufferSize(4096);
    const port = socket.address().port;
    const mine = (ip: string, p: number) => ip === '127.0.0.1' && p === port;
    const before = readUdpDrops(mine);
    expect(before?.size).toBe(1);
    // The event loop is blocked while the child sends, so nothing is read: the buffer overflows.
    spawnSync(process.execPath, ['-e', `const s=require('node:dgram').createSocket('udp4');let n=0;const f=()=>{for(let i=0;i<200;i++)s.send(Buffer.alloc(200),${port},'127.0.0.1');if(++n<10)setImmediate(f);else setTimeout(()=>s.close(),50)};f()`]);
    expect(dropsSince(before, readUdpDrops(mine))).toBeGreaterThan(0);
  });
});
