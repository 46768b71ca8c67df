// Ctrl-C in the middle of a gateway scenario: every gateway process (a real nginx with its
// workers, when installed; the reference gateway otherwise) is gone, and so is every pod's
// rendered configuration directory.

import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import { startRunUntil } from '../helpers/interrupted-run.ts';
import { leftoverProcesses } from '../helpers/leftovers.ts';
import { runningProcesses } from '../../src/state/proc-stat.ts';

/**
 * This run's nginx processes: each master's command line names its pod's directory, which is under
 * the run's own TMPDIR (nginx rewrites its environment block for its process titles, so the
 * environment mark of leftoverProcesses cannot find it), and each worker is a master's child. Other
 * nginx processes on the machine (another run, a benchmark) are not this test's.
 */
function nginxUnder(dir: string): number[] {
  // Zombies are left out: a killed process stays one until init reaps it.
  const nginx = (runningProcesses() ?? []).filter((stat) => stat.comm === 'nginx');
  const masters = new Set(nginx.filter((stat) => commandLine(stat.pid).includes(dir)).map((stat) => stat.pid));
  return nginx.filter((stat) => masters.has(stat.pid) || masters.has(stat.ppid)).map((stat) => stat.pid);
}

function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1');
  } catch {
    return ''; // gone meanwhile
  }
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('interrupting a gateway scenario', () => {
  it('leaves no gateway process and no pod directory behind', async () => {
    const profile = onPath('nginx') ? 'nginx' : 'reference';
    const mark = randomUUID();
    // The pods' scratch directories go under the harness's temporary directory: a fresh one here.
    const scratch = await mkdtemp(join(tmpdir(), 'zerodrop-interrupt-'));
    const reports = await mkdtemp(join(tmpdir(), 'zerodrop-interrupt-reports-'));
    dirs.push(scratch, reports);
    const args = ['run', '--scenario', 'gateway-slow-lb', '--profile', profile, '--report-dir', reports];
    const { child, reached, exited } = startRunUntil(args, { ZERODROP_TEST_MARK: mark, TMPDIR: scratch }, 'step delete');
    await reached;
    expect((await leftoverProcesses(mark)).length).toBeGreaterThan(1);
    const ours = nginxUnder(scratch);
    // Two gateway pods and their replacement, each a master and a worker.
    if (profile === 'nginx') expect(ours.length).toBeGreaterThanOrEqual(4);
    expect((await readdir(scratch)).length).toBe(1);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await leftoverProcesses(mark)).toEqual([]);
    expect(nginxUnder(scratch)).toEqual([]);
    // A worker whose master is gone no longer names the directory through its parent: none of the
    // processes seen before the interrupt may still run.
    const still = new Set((runningProcesses() ?? []).map((stat) => stat.pid));
    expect(ours.filter((pid) => still.has(pid))).toEqual([]);
    expect(await readdir(scratch)).toEqual([]);
  });
});
