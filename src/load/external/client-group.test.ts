import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { groupAlive } from '../../providers/local/processes.ts';
import { readProcStat, runs } from '../../state/proc-stat.ts';
import { readRunRecords, RunRecordFile } from '../../state/run-record.ts';
import { startClientGroup } from './client-group.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function record(): { dir: string; file: RunRecordFile; groups: () => number[] } {
  const dir = mkdtempSync(join(tmpdir(), 'zerodrop-client-group-test-'));
  dirs.push(dir);
  const file = RunRecordFile.create(dir);
  return { dir, file, groups: () => readRunRecords(dir).records.flatMap((r) => r.record.groups.map((g) => g.pid)) };
}

/** The process group of `pid`, or undefined once it no longer runs. */
function pgrpOf(pid: number): number | undefined {
  const stat = readProcStat(pid);
  return runs(stat) ? stat.pgrp : undefined;
}

describe.skipIf(process.platform !== 'linux')('startClientGroup', () => {
  it('leads its own group, listed in the run record while it runs, and taken off when it ends', async () => {
    const { file, groups } = record();
    const client = startClientGroup(['sh', '-c', 'sleep 0.3; echo done'], { tracker: file, interruptSignal: 'SIGINT', forceKillAfterMs: 1_000 });
    const pid = client.pid as number;
    expect(pgrpOf(pid)).toBe(pid);
    expect(pgrpOf(pid)).not.toBe(pgrpOf(process.pid));
    expect(groups()).toEqual([pid]);
    const result = await client.result;
    expect(result).toMatchObject({ stdout: 'done\n', exitCode: 0 });
    expect(groups()).toEqual([]);
    file.close();
  });

  it('on abort kills the whole group, not only its leader, and the record lets it go', async () => {
    const { file, groups } = record();
    const controller = new AbortController();
    // A leader with a child of its own; a background job of a non-interactive shell ignores
    // SIGINT (POSIX, 2.11 Signals and Error Handling): the SIGINT ends the shell, and only the
    // group's SIGKILL that follows its leader's exit ends the child. The child does not hold the
    // output open, so the client's end does not wait for it.
    const client = startClientGroup(['sh', '-c', 'sleep 30 >/dev/null 2>&1 & echo $!; wait'], { signal: controller.signal, tracker: file, interruptSignal: 'SIGINT', forceKillAfterMs: 1_000 });
    const pid = client.pid as number;
    const grandchild = await (async () => {
      const deadline = performance.now() + 3_000;
      while (performance.now() < deadline) {
        const [first] = readdirChildren(pid);
        if (first !== undefined) return first;
        await new Promise((r) => setTimeout(r, 10));
      }
      return undefined;
    })();
    expect(grandchild).toBeDefined();
    try {
      expect(pgrpOf(grandchild as number)).toBe(pid);
      const started = performance.now();
      controller.abort();
      const result = await client.result;
      expect(performance.now() - started).toBeLessThan(2_500);
      expect(result.stdout.trim()).toBe(String(grandchild));
      expect(pgrpOf(grandchild as number)).toBeUndefined();
      expect(groupAlive(pid)).toBe(false);
      expect(groups()).toEqual([]);
    } finally {
      if (pgrpOf(grandchild as number) === pid) process.kill(grandchild as number, 'SIGKILL');
      file.close();
    }
  });

  it('resolves with the spawn error for a missing binary, recording nothing', async () => {
    const { file, groups } = record();
    const client = startClientGroup(['zerodrop-no-such-client'], { tracker: file, interruptSignal: 'SIGINT', forceKillAfterMs: 1_000 });
    const result = await client.result;
    expect(client.pid).toBeUndefined();
    expect(result.stderr).toMatch(/ENOENT/);
    expect(result.exitCode).toBeUndefined();
    expect(groups()).toEqual([]);
    file.close();
  });
});

/** Children of `pid`, from /proc/<pid>/task/<pid>/children (Linux 3.5+). */
function readdirChildren(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
