import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

import { cleanLocal, groupMembers, removeRecord } from './clean.ts';
import { readProcStat, runs } from './proc-stat.ts';
import { processRef, processStartTime, readRunRecords, RunRecordFile, runsDir, sameProcessAlive, stateDir, type RunRecord } from './run-record.ts';

const children: ChildProcess[] = [];
const dirs: string[] = [];

function sleeper(detached = true): ChildProcess {
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { detached, stdio: 'ignore' });
  children.push(child);
  return child;
}

async function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  await new Promise((resolve) => child.once('exit', resolve));
}

function tempState(): string {
  const dir = mkdtempSync(join(tmpdir(), 'zerodrop-state-test-'));
  dirs.push(dir);
  return dir;
}

/** A dead zerodrop: a process that has already exited, with the start time it had. */
async function deadProcess(): Promise<{ pid: number; startTime: string }> {
  const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 200)'], { stdio: 'ignore' });
  const startTime = processStartTime(child.pid as number) as string;
  await exited(child);
  return { pid: child.pid as number, startTime };
}

function writeRecord(dir: string, record: Partial<RunRecord> & { id: string; zerodrop: RunRecord['zerodrop'] }): string {
  mkdirSync(runsDir(dir), { recursive: true });
  const path = join(runsDir(dir), `${record.id}.json`);
  writeFileSync(path, JSON.stringify({ version: 1, startedAt: new Date().toISOString(), groups: [], tempDirs: [], namespaces: [], kindClusters: [], ...record }));
  return path;
}

afterEach(async () => {
  for (const child of children.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited(child);
  }
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('state records', () => {
  it('live in $ZERODROP_STATE_DIR, else $XDG_STATE_HOME/zerodrop, else ~/.local/state/zerodrop', () => {
    expect(stateDir({ ZERODROP_STATE_DIR: '/x/state', XDG_STATE_HOME: '/y' })).toBe('/x/state');
    expect(stateDir({ XDG_STATE_HOME: '/y' })).toBe('/y/zerodrop');
    expect(stateDir({ XDG_STATE_HOME: 'relative' })).toMatch(/\/\.local\/state\/zerodrop$/);
    expect(stateDir({})).toMatch(/\/\.local\/state\/zerodrop$/);
  });

  it('are written at once, follow what the run starts and removes, and are deleted on close', () => {
    const dir = tempState();
    const file = RunRecordFile.create(dir);
    const read = () => readRunRecords(dir).records.map((r) => r.record);
    expect(read()).toMatchObject([{ version: 1, zerodrop: { pid: process.pid, startTime: processStartTime(process.pid) }, groups: [], tempDirs: [] }]);
    const child = sleeper();
    file.processGroupStarted(child.pid as number);
    file.tempDirCreated('/tmp/zerodrop-abc-1');
    file.tempDirCreated('/tmp/zerodrop-abc-2');
    file.tempDirRemoved('/tmp/zerodrop-abc-1');
    file.namespaceCreated('zerodrop-abc');
    file.kindClusterCreating('zerodrop');
    expect(read()[0]).toMatchObject({
      groups: [{ pid: child.pid, startTime: processStartTime(child.pid as number) }],
      tempDirs: ['/tmp/zerodrop-abc-2'],
      namespaces: ['zerodrop-abc'],
      kindClusters: ['zerodrop'],
    });
    file.kindClusterDeleted('zerodrop');
    expect(read()[0]?.kindClusters).toEqual([]);
    // A load driver's group that ended while the run goes on is taken off (src/load/external/client-group.ts).
    const driver = sleeper();
    file.processGroupStarted(driver.pid as number);
    expect(read()[0]?.groups.map((g) => g.pid)).toEqual([child.pid, driver.pid]);
    const { ino: inode, size: longest } = statSync(file.path);
    file.processGroupEnded(driver.pid as number);
    expect(read()[0]?.groups.map((g) => g.pid)).toEqual([child.pid]);
    // Rewritten in place (a rename over it blocked the event loop on a busy disk), never shrinking:
    // the shorter record is padded, and still reads whole.
    expect(statSync(file.path).ino).toBe(inode);
    expect(statSync(file.path).size).toBe(longest);
    file.close();
    expect(readdirSync(runsDir(dir))).toEqual([]);
  });

  it('tell a process from a later one that got its pid, by start time', () => {
    const ref = processRef(process.pid);
    expect(sameProcessAlive(ref)).toBe(true);
    expect(sameProcessAlive({ pid: process.pid, startTime: String(BigInt(ref.startTime as string) - 1n) })).toBe(false);
  });
});

describe('zerodrop clean (local part)', () => {
  it('kills the dead run\'s process groups, removes its temp dirs and then its record', async () => {
    const dir = tempState();
    const pod = sleeper();
    const temp = mkdtempSync(join(tmpdir(), 'zerodrop-cleantest-'));
    writeFileSync(join(temp, 'nginx.conf'), '');
    const path = writeRecord(dir, { id: 'dead', zerodrop: await deadProcess(), groups: [processRef(pod.pid as number)], tempDirs: [temp, join(tmpdir(), 'zerodrop-already-gone')] });
    const lines: string[] = [];
    const opts = { dryRun: false, dir, log: (l: string) => lines.push(l) };

    const result = await cleanLocal(opts);
    await exited(pod);
    expect(pod.signalCode).toBe('SIGKILL');
    expect(existsSync(temp)).toBe(false);
    expect(result.cleaned.map((r) => r.record.id)).toEqual(['dead']);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^killed process group ${pod.pid} \\(${pod.pid} .*setInterval`)), `removed ${temp}`]);
    for (const run of result.cleaned) removeRecord(run, opts);
    expect(existsSync(path)).toBe(false);
    expect(lines.at(-1)).toBe(`removed record ${path}`);
  });

  it('with --dry-run lists the same things and touches nothing', async () => {
    const dir = tempState();
    const pod = sleeper();
    const temp = mkdtempSync(join(tmpdir(), 'zerodrop-cleantest-'));
    dirs.push(temp);
    const path = writeRecord(dir, { id: 'dead', zerodrop: await deadProcess(), groups: [processRef(pod.pid as number)], tempDirs: [temp] });
    const lines: string[] = [];
    const opts = { dryRun: true, dir, log: (l: string) => lines.push(l) };
    const result = await cleanLocal(opts);
    for (const run of result.cleaned) removeRecord(run, opts);
    expect(lines).toEqual([expect.stringMatching(/^would kill process group \d+/), `would remove ${temp}`, `would remove record ${path}`]);
    expect(pod.exitCode === null && pod.signalCode === null).toBe(true);
    expect(existsSync(temp)).toBe(true);
    expect(existsSync(path)).toBe(true);
  });

  it('skips a run whose zerodrop still runs', async () => {
    const dir = tempState();
    const zerodrop = sleeper();
    const pod = sleeper();
    const path = writeRecord(dir, { id: 'live', zerodrop: processRef(zerodrop.pid as number), groups: [processRef(pod.pid as number)] });
    const lines: string[] = [];
    const result = await cleanLocal({ dryRun: false, dir, log: (l) => lines.push(l) });
    expect(result.live.map((r) => r.id)).toEqual(['live']);
    expect(result.cleaned).toEqual([]);
    expect(lines).toEqual([`skipped run live: zerodrop (pid ${zerodrop.pid}) is still running`]);
    expect(pod.exitCode === null && pod.signalCode === null).toBe(true);
    expect(existsSync(path)).toBe(true);
  });

  it('never kills a process whose pid was reused (other start time), nor removes a directory zerodrop did not make', async () => {
    const dir = tempState();
    const stranger = sleeper();
    const elsewhere = mkdtempSync(join(tmpdir(), 'not-ours-'));
    dirs.push(elsewhere);
    const reused = { pid: stranger.pid as number, startTime: String(BigInt(processStartTime(stranger.pid as number) as string) - 5n) };
    expect(groupMembers(reused)).toEqual([]);
    writeRecord(dir, { id: 'old', zerodrop: await deadProcess(), groups: [reused], tempDirs: [elsewhere] });
    const lines: string[] = [];
    const opts = { dryRun: false, dir, log: (l: string) => lines.push(l) };
    const result = await cleanLocal(opts);
    expect(stranger.exitCode === null && stranger.signalCode === null).toBe(true);
    expect(existsSync(elsewhere)).toBe(true);
    expect(result.cleaned[0]?.problems).toEqual([`${elsewhere}: not a zerodrop temporary directory; left alone`]);
    // A record with something left that could not be removed stays for the next clean.
    for (const run of result.cleaned) removeRecord(run, opts);
    expect(readRunRecords(dir).records).toHaveLength(1);
  });

  it('kills what is left of a group whose leader has exited, and only members started after it', async () => {
    const dir = tempState();
    // A leader that starts a member of its own group, then exits.
    const leader = spawn(process.execPath, ['-e', "const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' }); console.log(c.pid); c.unref(); process.exit(0)"], {
      detached: true,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    children.push(leader);
    const ref = processRef(leader.pid as number);
    let out = '';
    leader.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    await exited(leader);
    const member = Number(out.trim());
    expect(groupMembers(ref).map((m) => m.pid)).toEqual([member]);
    writeRecord(dir, { id: 'orphans', zerodrop: await deadProcess(), groups: [ref] });
    await cleanLocal({ dryRun: false, dir, log: () => {} });
    // Gone, or a zombie until its new parent (init) reaps it.
    expect(groupMembers(ref)).toEqual([]);
    expect(runs(readProcStat(member))).toBe(false);
  });

  it('reports files in the runs directory that are not records and leaves them', async () => {
    const dir = tempState();
    mkdirSync(runsDir(dir), { recursive: true });
    writeFileSync(join(runsDir(dir), 'junk.json'), '{"hello": 1}');
    const lines: string[] = [];
    const result = await cleanLocal({ dryRun: false, dir, log: (l) => lines.push(l) });
    expect(result.unreadable).toEqual([join(runsDir(dir), 'junk.json')]);
    expect(existsSync(join(runsDir(dir), 'junk.json'))).toBe(true);
  });
});
