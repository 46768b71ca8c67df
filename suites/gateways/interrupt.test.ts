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
import { runningProcesses } from '../../src/state/proc-stat.ts';

/**
 * Running processes of a program, by the kernel's short name (comm). (nginx rewrites its environment block for
 * its process titles, so the environment mark of leftoverProcesses cannot find it.)
 */
function processesNamed(name: string): Set<number> {
  // Zombies are left out: a killed process stays one until init reaps it.
  return new Set((runningProcesses() ?? []).filter((stat) => stat.comm === name).map((stat) => stat.pid));
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('interrupting a gateway scenario', () => {
  it('leaves no gateway process and no pod directory behind', async () => {
    const profile = onPath('nginx') ? 'nginx' : 'reference';
    const mark = randomUUID();
    const before = processesNamed('nginx');
    // The pods' scratch directories go under the harness's temporary directory: a fresh one here.
    const scratch = await mkdtemp(join(tmpdir(), 'zerodrop-interrupt-'));
    const reports = await mkdtemp(join(tmpdir(), 'zerodrop-interrupt-reports-'));
    dirs.push(scratch, reports);
    const args = ['run', '--scenario', 'gateway-slow-lb', '--profile', profile, '--report-dir', reports];
    const { child, reached, exited } = startRunUntil(args, { ZERODROP_TEST_MARK: mark, TMPDIR: scratch }, 'step delete');
    await reached;
    expect((await leftoverProcesses(mark)).length).toBeGreaterThan(1);
    const ours = [...processesNamed('nginx')].filter((pid) => !before.has(pid));
    // Two gateway pods and their replacement, each a master and a worker.
    if (profile === 'nginx') expect(ours.length).toBeGreaterThanOrEqual(4);
    expect((await readdir(scratch)).length).toBe(1);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await leftoverProcesses(mark)).toEqual([]);
    const still = processesNamed('nginx');
    expect(ours.filter((pid) => still.has(pid))).toEqual([]);
    expect(await readdir(scratch)).toEqual([]);
  });
});
