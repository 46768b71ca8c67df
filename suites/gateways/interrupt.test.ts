// Ctrl-C in the middle of a gateway scenario: every gateway process (a real nginx with its
// workers, when installed; the reference gateway otherwise) is gone, and so is every pod's
// rendered configuration directory.

import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import { startRunUntil } from '../helpers/interrupted-run.ts';
import { leftoverProcesses } from '../helpers/leftovers.ts';
import { readProcStat, runs } from '../../src/state/proc-stat.ts';

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
    // The run's processes: marked, or (nginx, which overwrites its environment block with its process
    // title) named by a command line under the run's TMPDIR, and their descendants. Another nginx on
    // the machine (another run, a benchmark) is not among them.
    const ours = await leftoverProcesses(mark, scratch);
    expect(ours.length).toBeGreaterThan(1);
    // Two gateway pods and their replacement, each a master and a worker.
    if (profile === 'nginx') expect(ours.filter((pid) => readProcStat(pid)?.comm === 'nginx').length).toBeGreaterThanOrEqual(4);
    expect((await readdir(scratch)).length).toBe(1);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await leftoverProcesses(mark, scratch)).toEqual([]);
    // A worker whose master is gone no longer descends from anything named above: none of the
    // processes seen before the interrupt may still run.
    expect(ours.filter((pid) => runs(readProcStat(pid)))).toEqual([]);
    expect(await readdir(scratch)).toEqual([]);
  });
});
