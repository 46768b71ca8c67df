// A real gateway whose binary is missing is `skipped` with its install command, never failed, and
// the run exits 0.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import type { RunResult } from '../../src/report/results.ts';

const run = promisify(execFile);
let dir = '';
afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('gateway profiles without their binary', () => {
  it('are skipped with the install hint, and the run exits 0', async () => {
    dir = await mkdtemp(join(tmpdir(), 'zerodrop-skip-'));
    const args = ['src/cli/main.ts', 'run', '--scenario', 'gateway-delete-http', '--report-dir', dir];
    for (const p of ['nginx', 'nginx-naive', 'haproxy', 'caddy-naive']) args.push('--profile', p);
    // A PATH with Node alone: nginx, haproxy and caddy are not on it.
    const { stdout } = await run(process.execPath, args, { env: { ...process.env, PATH: dirname(process.execPath) }, timeout: 60_000 });
    expect(stdout).toMatch(/SKIP/);
    const results = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as RunResult;
    expect(results.scenarios.map((s) => [s.profile, s.verdict])).toEqual([
      ['nginx', 'skipped'],
      ['nginx-naive', 'skipped'],
      ['haproxy', 'skipped'],
      ['caddy-naive', 'skipped'],
    ]);
    expect(results.scenarios[0]?.reason).toBe('nginx not found on PATH (install: apt-get install nginx)');
    expect(results.scenarios[3]?.reason).toBe('caddy not found on PATH (install: apt-get install caddy)');
  });
});
