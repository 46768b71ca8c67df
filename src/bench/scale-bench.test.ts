// The `scale` bench section with a short run (seconds, not the default 300): every row is there and
// measured, and its figures are the ones the targets in docs/benchmarks.md are about.

import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AddressPool } from '../providers/local/addresses.ts';
import { packageRoot } from '../paths.ts';
import { parseBenchArgs } from './main.ts';
import { gatewayOverrides, heldRateOf, keepIfFailed, scaleBench } from './scale-bench.ts';

describe('scale bench', () => {
  it('takes its duration and rate as options, 300 s by default and 20 s with --quick', () => {
    expect(parseBenchArgs(['--only', 'scale'])).toMatchObject({ only: ['scale'], scaleSeconds: 300, scaleRate: 2000 });
    expect(parseBenchArgs(['--quick'])).toMatchObject({ scaleSeconds: 20 });
    expect(parseBenchArgs(['--scale-seconds', '5', '--scale-rate', '400'])).toMatchObject({ scaleSeconds: 5, scaleRate: 400 });
    expect(() => parseBenchArgs(['--scale-seconds', '0'])).toThrow(/--scale-seconds 0: expected a whole number from 1/);
    expect(gatewayOverrides({ seconds: 300, gatewayRate: 2000 })).toEqual({ clients: 20, ratePerClient: 100, deleteAtMs: 297_000 });
  });

  it('takes the held and asked rates from loadHeld: the rated loads summed, none without one, and the connects that waited out a SYN retransmission', () => {
    const loads = [
      { load: 'http', targetRate: 2000, achievedRate: 1300.5, late: 0 },
      { load: 'keep-alive', targetRate: 100, achievedRate: 99.5, late: 0, slowConnects: 2 },
      { load: 'fresh', targetRate: 40, achievedRate: 20, late: 0, slowConnects: 3 },
      { load: 'long', late: 0 },
    ];
    expect(heldRateOf({ assertions: [{ name: 'loadHeld', verdict: 'inconclusive', message: '', details: { loads } }] })).toEqual({
      clients: { achieved: 1300.5, target: 2000 },
      all: { achieved: 1420, target: 2140 },
      slowConnects: 5,
    });
    expect(heldRateOf({ assertions: [{ name: 'noFailedRequests', verdict: 'pass', message: '' }] })).toBeUndefined();
  });

  it('keeps a failed gateway run\'s reports beside the bench report, replacing an earlier one, and nothing of a run that passed', async () => {
    const root = await mkdtemp(join(tmpdir(), 'zerodrop-scale-keep-test-'));
    try {
      const run = async (verdict: string, text: string) => {
        const dir = await mkdtemp(join(root, 'run-'));
        await writeFile(join(dir, 'results.json'), text);
        return { dir, note: await keepIfFailed({ failedReportsDir: join(root, 'bench-failed') }, 'local', verdict, dir) };
      };
      const passed = await run('pass', 'p');
      expect(passed.note).toBe('');
      expect(existsSync(join(root, 'bench-failed'))).toBe(false);
      expect(await readFile(join(passed.dir, 'results.json'), 'utf8')).toBe('p');
      const first = await run('fail', 'first');
      expect(existsSync(first.dir)).toBe(false);
      await writeFile(join(root, 'bench-failed', 'scale-local', 'only-in-the-first'), '');
      const failed = await run('fail', 'second');
      expect(failed.note).toBe(`; reports kept in ${join(root, 'bench-failed', 'scale-local')}`);
      expect(await readFile(join(root, 'bench-failed', 'scale-local', 'results.json'), 'utf8')).toBe('second');
      expect(existsSync(join(root, 'bench-failed', 'scale-local', 'only-in-the-first'))).toBe(false);
      expect(await keepIfFailed({}, 'local', 'fail', passed.dir)).toBe('');
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('measures a gateway run and the generator alone beside the old format, in seconds', { timeout: 180_000 }, async () => {
    const pool = await AddressPool.create();
    try {
      // The netns row as on a machine that cannot start a cluster (its run is the netns suites' cost).
      const netnsMissing = async () => 'not root: --provider netns creates network namespaces';
      const { rows, detail } = await scaleBench({ host: pool.allocate(), seconds: 3, gatewayRate: 200, generatorRate: 500, cwd: packageRoot, signal: new AbortController().signal, netnsMissing });
      expect(rows.map((r) => [r.bench, r.tool, r.status, r.unit])).toEqual([
        ['scale', 'zerodrop', 'ok', 'MB'],
        ['scale', 'old format', 'ok', 'MB'],
        ['scale', 'zerodrop', 'not installed', 'MB'],
        ['scale', 'zerodrop', 'ok', 'MB'],
        ['scale', 'old format', 'ok', 'MB'],
      ]);
      expect(rows[2]).toMatchObject({ target: 'gateway-delete-http via nginx-pooled on a netns cluster (kube-proxy nftables), 200 req/s, 3 s', note: 'not root: --provider netns creates network namespaces' });
      for (const r of rows.filter((r) => r.status === 'ok')) expect(r.value).toBeGreaterThan(10);
      expect(rows[0]!.loss).toMatch(/^\d+ failed( \(\d+ not judged: overlong, cut by design\))?$/);
      expect(rows[0]!.note).toMatch(/; clients held [\d,]+ of 200 req\/s, all loads [\d,]+ of [\d,]+ req\/s;/);
      const generator = detail['generator'] as { generator: { recorded: number; failed: number }; fresh: { memoryPerRequest: number; diskPerRequest: number }; old: { resultsJsonBytes: number; requests: number } };
      expect(generator.generator.recorded).toBeGreaterThan(1000);
      // Columns grow by chunks of 16,384 rows: a short run's figure is one chunk over few requests.
      expect(generator.fresh.memoryPerRequest * generator.generator.recorded).toBeLessThan(1.5 * 1024 * 1024);
      expect(generator.fresh.diskPerRequest).toBeLessThan(100);
      expect(generator.old.resultsJsonBytes / generator.old.requests).toBeGreaterThan(200);
      const gateway = detail['gateway'] as { sameVerdictsFromRecords: boolean; counts: { requests: number }; held: { clients: { achieved: number; target: number } } };
      expect(gateway.counts.requests).toBeGreaterThan(100);
      expect(gateway.held.clients.achieved).toBeGreaterThan(0);
      expect(gateway.held.clients.target).toBe(200);
      expect(gateway.sameVerdictsFromRecords).toBe(true);
    } finally {
      pool.close();
    }
  });
});
