// Ctrl-C in the middle of a gateway scenario: every gateway process (a real nginx with its
// workers, when installed; the reference gateway otherwise) is gone, and so is every pod's
// rendered configuration directory.

import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onPath } from '../../src/profiles/requirements.ts';
import { startRunUntil } from '../helpers/interrupted-run.ts';
import { leftoverProcesses } from '../helpers/leftovers.ts';

/**
 * Running (not zombie) processes of a program, by /proc/<pid>/comm. (nginx rewrites its environment block for
 * its process titles, so the environment mark of leftoverProcesses cannot find it.)
 */
async function processesNamed(name: string): Promise<Set<number>> {
  const pids = new Set<number>();
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const comm = await readFile(`/proc/${entry}/comm`, 'utf8').catch(() => '');
    if (comm.trim() !== name) continue;
    // A killed process stays a zombie until init reaps it: it no longer runs, so it does not count.
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => '');
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
    if (state !== undefined && state !== '' && state !== 'Z' && state !== 'X') pids.add(Number(entry));
  }
  return pids;
}

const dirs: string[] = [];
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

describe('interrupting a gateway scenario', () => {
  it('leaves no gateway process and no pod directory behind', async () => {
    const profile = onPath('nginx') ? 'nginx' : 'reference';
    const mark = randomUUID();
    const before = await processesNamed('nginx');
    // The pods' scratch directories go under the harness's temporary directory: a fresh one here.
    const scratch = await mkdtemp(join(tmpdir(), 'zerodrop-interrupt-'));
    const reports = await mkdtemp(join(tmpdir(), 'zerodrop-interrupt-reports-'));
    dirs.push(scratch, reports);
    const args = ['run', '--scenario', 'gateway-slow-lb', '--profile', profile, '--report-dir', reports];
    const { child, reached, exited } = startRunUntil(args, { ZERODROP_TEST_MARK: mark, TMPDIR: scratch }, 'step delete');
    await reached;
    expect((await leftoverProcesses(mark)).length).toBeGreaterThan(1);
    const ours = [...(await processesNamed('nginx'))].filter((pid) => !before.has(pid));
    // Two gateway pods and their replacement, each a master and a worker.
    if (profile === 'nginx') expect(ours.length).toBeGreaterThanOrEqual(4);
    expect((await readdir(scratch)).length).toBe(1);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(await leftoverProcesses(mark)).toEqual([]);
    const still = await processesNamed('nginx');
    expect(ours.filter((pid) => still.has(pid))).toEqual([]);
    expect(await readdir(scratch)).toEqual([]);
  });
});
