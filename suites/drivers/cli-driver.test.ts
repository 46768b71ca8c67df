// `zerodrop run --driver` as a user runs it: bad usage exits 2 before anything starts, and a
// missing client binary skips with the install hint (exit 0), as a missing profile binary does.

import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const run = promisify(execFile);

async function zerodrop(args: string[], env: Record<string, string> = {}) {
  try {
    const { stdout, stderr } = await run(process.execPath, ['src/cli/main.ts', ...args], { env: { ...process.env, ...env }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe.concurrent('zerodrop run --driver', () => {
  it('exits 2 on an unknown driver, naming the allowed ones', async () => {
    const r = await zerodrop(['run', '--driver', 'wrk']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--driver wrk: unknown driver; use one of builtin, hey, iperf3');
  });

  it('exits 2 when the driver cannot carry out a selected scenario', async () => {
    const r = await zerodrop(['run', '--driver', 'hey', '--scenario', 'backend-delete-tcp-stream']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('hey drives HTTP/1.1 request loads, not a tcp-stream load');
  });

  it('skips with the install hint when hey is not on PATH', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'zerodrop-driver-'));
    dirs.push(dir);
    // Only node's own directory on PATH: no hey there.
    const r = await zerodrop(['run', '--driver', 'hey', '--scenario', 'gateway-delete-http', '--report-dir', dir, '--reporter', 'json'], { PATH: dirname(process.execPath) });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const results = JSON.parse(await readFile(join(dir, 'results.json'), 'utf8')) as { scenarios: { verdict: string; reason?: string }[] };
    expect(results.scenarios).toEqual([expect.objectContaining({ verdict: 'skipped', reason: '--driver hey: hey not found on PATH (install: apt-get install hey)' })]);
  });
});
