// The benchmark's own logic, without heavy load: the table, the ratios, the output parsers, the rate
// ladder, the node:net floor's counting and the CPU profile summary. The measurements themselves are `npm run bench`.

import net from 'node:net';
import { describe, expect, it } from 'vitest';

import { formatSelfTime, topSelfTime, type CpuProfile } from './cpu-profile.ts';
import { measureFloor } from './http-floor.ts';
import { parseBenchArgs } from './main.ts';
import { nginxConfig } from './nginx.ts';
import { formatMarkdown, formatTable, ratioTo, type BenchRow } from './table.ts';
import { parseRequestsPerSec, runTool } from './tools.ts';
import { climb, type LadderStep } from './udp-bench.ts';

describe('bench table', () => {
  it('prints a header, a rule and one line per row, missing tools as "not installed"', () => {
    const rows: BenchRow[] = [
      { bench: 'http', tool: 'zerodrop', target: 'nginx', connections: 50, value: 30123.4, unit: 'req/s', status: 'ok', loss: '0 failed' },
      { bench: 'http', tool: 'hey', target: 'nginx', connections: 50, unit: 'req/s', status: 'not installed' },
      { bench: 'http', tool: 'wrk', target: 'nginx', connections: 50, value: 40000, unit: 'req/s', status: 'ok', ratio: ratioTo(30123.4, 40000) },
    ];
    const lines = formatTable(rows).split('\n');
    expect(lines).toHaveLength(5);
    expect(lines[0]).toMatch(/^bench\s+tool\s+target\s+conns\/flows\s+value\s+unit\s+ratio\s+loss\/errors\s+note$/);
    expect(lines[2]).toContain('30,123');
    expect(lines[3]).toContain('not installed');
    expect(lines[4]).toContain('0.75x');
  });

  it('prints the same rows as a Markdown table for the README', () => {
    const rows: BenchRow[] = [
      { bench: 'http', tool: 'zerodrop', target: 'nginx', connections: 50, value: 30123.4, unit: 'req/s', status: 'ok', loss: '0 failed', note: 'a | b' },
      { bench: 'http', tool: 'hey', target: 'nginx', connections: 50, unit: 'req/s', status: 'not installed' },
    ];
    expect(formatMarkdown(rows).split('\n')).toEqual([
      '| bench | tool | target | conns/flows | value | unit | ratio | loss/errors | note |',
      '| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
      '| http | zerodrop | nginx | 50 | 30,123 | req/s | - | 0 failed | a \\| b |',
      '| http | hey | nginx | 50 | not installed | req/s | - | - |  |',
    ]);
  });

  it('has no ratio without both figures', () => {
    expect(ratioTo(undefined, 5)).toBeUndefined();
    expect(ratioTo(5, 0)).toBeUndefined();
    expect(ratioTo(9, 10)).toBeCloseTo(0.9);
  });
});

describe('tool output', () => {
  it('reads Requests/sec as hey and wrk print it', () => {
    expect(parseRequestsPerSec('Summary:\n  Requests/sec:\t31234.5678\n')).toBeCloseTo(31234.5678);
    expect(parseRequestsPerSec('Requests/sec:  46361.12\nTransfer/sec: 7.2MB')).toBeCloseTo(46361.12);
    expect(parseRequestsPerSec('error')).toBeUndefined();
  });
});

describe('runTool', () => {
  it("gives the tool's output and the CPU seconds it used", async () => {
    // Busy until it has used 300 ms of CPU, however busy the machine is.
    const r = await runTool(process.execPath, ['-e', 'const u = process.cpuUsage(); while (process.cpuUsage(u).user < 300_000); console.log("out"); console.error("err")'], 30_000);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe('out');
    expect(r.output).toContain('err');
    // 300 ms of CPU in the loop, and Node's start-up: a little more than 0.3 s, and not a lot more.
    expect(r.cpuSeconds).toBeGreaterThan(0.25);
    expect(r.cpuSeconds).toBeLessThan(3);
  });

  it('stops the tool when the benchmark is interrupted, and rejects', async () => {
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(new Error('interrupted')), 200);
    await expect(runTool('sleep', ['30'], 60_000, controller.signal)).rejects.toThrow('interrupted');
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});

describe('rate ladder', () => {
  const step = (rate: number, lost: number, held = 1): LadderStep => ({ rate, sent: rate, lost, held });

  it('stops at the first step that loses a packet and keeps the last clean one', async () => {
    const seen: number[] = [];
    const ladder = await climb([1, 2, 3, 4], async (rate) => {
      seen.push(rate);
      return step(rate, rate >= 3 ? 1 : 0);
    });
    expect(seen).toEqual([1, 2, 3]);
    expect(ladder.best?.rate).toBe(2);
    expect(ladder.failed?.rate).toBe(3);
  });

  it('climbs no further once interrupted, and rejects', async () => {
    const controller = new AbortController();
    const seen: number[] = [];
    const climbing = climb(
      [1, 2, 3],
      async (rate) => {
        seen.push(rate);
        if (rate === 2) controller.abort(new Error('interrupted'));
        return step(rate, 0);
      },
      controller.signal,
    );
    await expect(climbing).rejects.toThrow('interrupted');
    expect(seen).toEqual([1, 2]);
  });

  it('climbs on past the first loss while every lost packet was a kernel drop, when asked', async () => {
    const drops = (rate: number, lost: number, socketDrops: number): LadderStep => ({ rate, sent: rate, lost, held: 1, socketDrops });
    const seen: number[] = [];
    const ladder = await climb(
      [1, 2, 3, 4, 5],
      async (rate) => {
        seen.push(rate);
        return [drops(1, 0, 0), drops(2, 5, 5), drops(3, 9, 9), drops(4, 9, 7), drops(5, 0, 0)][rate - 1]!;
      },
      undefined,
      true,
    );
    expect(seen).toEqual([1, 2, 3, 4]);
    expect(ladder.best?.rate).toBe(1);
    expect(ladder.failed?.rate).toBe(2);
    expect(ladder.exact?.rate).toBe(3);
    expect(ladder.inexact?.rate).toBe(4);
    // Without drop counters only a step without loss is exact.
    const blind = await climb([1, 2], async (rate) => step(rate, rate - 1), undefined, true);
    expect(blind.exact?.rate).toBe(1);
    expect(blind.inexact?.rate).toBe(2);
  });

  it('does not count a step that was not held, even without loss', async () => {
    const ladder = await climb([1, 2], async (rate) => step(rate, 0, rate === 2 ? 0.5 : 1));
    expect(ladder.best?.rate).toBe(1);
    expect(ladder.failed?.held).toBe(0.5);
  });
});

describe('node:net floor', () => {
  it('counts every response the server wrote, and closes its connections when the time is up', async () => {
    let answered = 0;
    const open = new Set<net.Socket>();
    const server = net.createServer((socket) => {
      open.add(socket);
      socket.on('close', () => open.delete(socket));
      socket.on('error', () => undefined);
      socket.on('data', () => {
        answered++;
        socket.write('HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as net.AddressInfo;
      const run = await measureFloor(new URL(`http://127.0.0.1:${port}/`), 4, 300);
      expect(run.requests).toBeGreaterThan(0);
      expect(run.seconds).toBeGreaterThanOrEqual(0.29);
      // At most one answer per connection was still on its way when the time was up.
      expect(answered - run.requests).toBeGreaterThanOrEqual(0);
      expect(answered - run.requests).toBeLessThanOrEqual(4);
      await expect.poll(() => open.size).toBe(0);
    } finally {
      server.close();
    }
  });
});

describe('CPU profile summary', () => {
  it("charges each sample's time to the function on top, and names V8's own entries as they are", () => {
    const frame = (functionName: string, url = '', lineNumber = -1) => ({ functionName, url, lineNumber });
    const profile: CpuProfile = {
      nodes: [
        { id: 1, callFrame: frame('(root)') },
        { id: 2, callFrame: frame('writeBuffer') },
        { id: 3, callFrame: frame('parseHead', 'file:///x/src/load/http1-response.ts', 161) },
        { id: 4, callFrame: frame('', 'file:///x/src/load/http.ts', 9) },
        { id: 5, callFrame: frame('(idle)') },
      ],
      samples: [2, 3, 2, 4, 5, 2, 5],
      timeDeltas: [100, 50, 100, 25, 200, 100, 25],
    };
    const top = topSelfTime(profile, 3);
    expect(top.map((t) => [t.where, t.micros])).toEqual([
      ['writeBuffer', 300],
      ['(idle)', 225],
      ['parseHead http1-response.ts:162', 50],
    ]);
    expect(top[0]?.share).toBeCloseTo(300 / 600);
    expect(topSelfTime(profile, 10).map((t) => t.where)).toContain('(anonymous) http.ts:10');
    expect(formatSelfTime(top).split('\n')[0]).toBe(' 50.0%  writeBuffer');
  });
});

describe('nginx target', () => {
  it('is one worker on the given loopback address, serving a static 200', () => {
    const conf = nginxConfig('/tmp/x', '127.9.9.1', 18080);
    expect(conf).toMatch(/^worker_processes 1;/m);
    expect(conf).toContain('listen 127.9.9.1:18080');
    expect(conf).toContain('return 200');
    expect(conf).toContain('access_log off;');
  });
});

describe('bench arguments', () => {
  it('selects benchmarks with --only, repeatable or comma-separated', () => {
    expect(parseBenchArgs(['--quick', '--only', 'http,udp', '--only', 'soak']).only).toEqual(['http', 'udp', 'soak']);
    expect(parseBenchArgs([]).only).toEqual(['http', 'udp', 'provider', 'soak', 'scale']);
    expect(() => parseBenchArgs(['--only', 'disk'])).toThrow(/--only disk: use one or more of http, udp, provider, soak/);
  });

  it('runs the model section only when named, on the pinned releases --kube-version names (a minor names its pin)', () => {
    expect(parseBenchArgs(['--only', 'model']).only).toEqual(['model']);
    expect(parseBenchArgs(['--kube-version', '1.36,v1.37.2', '--kube-version', 'v1.36.3']).kubeVersions).toEqual(['v1.36.3', 'v1.37.2']);
    expect(parseBenchArgs([]).kubeVersions).toContain('v1.37.2');
    expect(() => parseBenchArgs(['--kube-version', '1.20'])).toThrow(/--kube-version 1\.20: netns has no control plane pinned/);
  });
});
