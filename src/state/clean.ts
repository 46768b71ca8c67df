// `zerodrop clean`, local part: the leftovers of runs whose `zerodrop run` process is gone without
// tearing down (crashed, SIGKILLed). Read from their state records (run-record.ts); a run whose
// process still lives is skipped, whatever its age.
//
// A recorded process group is killed only where the kernel shows it is still ours: the leader with
// the recorded start time, or, once the leader has exited, members of that group id that started
// no earlier than it (a group id stays taken while any member lives, so those descend from our
// leader). Temporary directories are removed only if their name is one zerodrop gives
// (`zerodrop-...`), so a damaged record cannot point the cleaner at anything else.

import { readFileSync, rmSync, existsSync } from 'node:fs';
import { basename } from 'node:path';

import { readProcStat, runningProcesses, runs } from './proc-stat.ts';
import { processStartTime, readRunRecords, sameProcessAlive, stateDir, type ProcessRef, type RunRecord } from './run-record.ts';

export interface CleanOptions {
  dryRun: boolean;
  /** Where the records are (default: stateDir()). */
  dir?: string;
  log: (line: string) => void;
}

export interface CleanedRun {
  /** The record's file. */
  path: string;
  record: RunRecord;
  /** What could not be removed: while any is left, the record stays for the next clean. */
  problems: string[];
}

export interface LocalCleanResult {
  /** Runs whose leftovers were (or, with dryRun, would be) removed. */
  cleaned: CleanedRun[];
  /** Runs still in progress. */
  live: RunRecord[];
  /** Files in the runs directory that are not records. */
  unreadable: string[];
}

const REAP_WAIT_MS = 3_000;

/** Processes now in the group `ref` names that belong to it (see the file comment), with their names. */
export function groupMembers(ref: ProcessRef): { pid: number; comm: string }[] {
  const leaderStart = processStartTime(ref.pid);
  // The leader runs with another start time: the id was reused, nothing here is ours.
  if (leaderStart !== undefined && ref.startTime !== undefined && leaderStart !== ref.startTime) return [];
  const members: { pid: number; comm: string }[] = [];
  for (const stat of runningProcesses() ?? []) {
    if (stat.pgrp !== ref.pid) continue;
    if (ref.startTime !== undefined && stat.startTime !== '' && BigInt(stat.startTime) < BigInt(ref.startTime)) continue;
    members.push({ pid: stat.pid, comm: commandLine(stat.pid) || stat.comm });
  }
  return members;
}

/** A process's command line, shortened for a log line. */
function commandLine(pid: number): string {
  try {
    const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return line.length > 80 ? `${line.slice(0, 77)}...` : line;
  } catch {
    return '';
  }
}

function temporaryDirOfOurs(path: string): boolean {
  return basename(path).startsWith('zerodrop-');
}

async function killAndWait(pids: number[]): Promise<number[]> {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
  const deadline = performance.now() + REAP_WAIT_MS;
  const alive = () => pids.filter((pid) => runs(readProcStat(pid)));
  while (alive().length > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return alive();
}

/** Removes (or lists, with dryRun) the local leftovers of every dead run that has a record. */
export async function cleanLocal(opts: CleanOptions): Promise<LocalCleanResult> {
  const dir = opts.dir ?? stateDir();
  const { records, unreadable } = readRunRecords(dir);
  const verb = opts.dryRun ? 'would remove' : 'removed';
  const result: LocalCleanResult = { cleaned: [], live: [], unreadable };
  for (const path of unreadable) opts.log(`skipped ${path}: not a readable run record`);
  for (const { path, record } of records) {
    if (record.zerodrop.pid === process.pid || sameProcessAlive(record.zerodrop)) {
      result.live.push(record);
      opts.log(`skipped run ${record.id}: zerodrop (pid ${record.zerodrop.pid}) is still running`);
      continue;
    }
    const problems: string[] = [];
    for (const group of record.groups) {
      const members = groupMembers(group);
      if (members.length === 0) continue;
      const names = members.map((m) => `${m.pid} ${m.comm}`).join(', ');
      if (opts.dryRun) {
        opts.log(`would kill process group ${group.pid} (${names})`);
        continue;
      }
      const survivors = await killAndWait(members.map((m) => m.pid));
      if (survivors.length > 0) problems.push(`process group ${group.pid}: ${survivors.join(', ')} still running after SIGKILL`);
      else opts.log(`killed process group ${group.pid} (${names})`);
    }
    for (const temp of record.tempDirs) {
      if (!existsSync(temp)) continue;
      if (!temporaryDirOfOurs(temp)) {
        problems.push(`${temp}: not a zerodrop temporary directory; left alone`);
        continue;
      }
      if (!opts.dryRun) {
        try {
          rmSync(temp, { recursive: true, force: true });
        } catch (error) {
          problems.push(`${temp}: ${(error as Error).message}`);
          continue;
        }
      }
      opts.log(`${verb} ${temp}`);
    }
    for (const problem of problems) opts.log(`could not remove ${problem}`);
    // The record stays until the cluster part (clean-clusters.ts) has dealt with its kind
    // clusters too: the caller then calls removeRecord.
    result.cleaned.push({ path, record, problems });
  }
  return result;
}

/** Deletes the record of a cleaned run unless something it lists could not be removed. */
export function removeRecord(run: CleanedRun, opts: CleanOptions): void {
  if (run.problems.length > 0) {
    opts.log(`kept record ${run.path} (${run.problems.length} leftover(s) could not be removed)`);
    return;
  }
  if (!opts.dryRun) rmSync(run.path, { force: true });
  opts.log(`${opts.dryRun ? 'would remove' : 'removed'} record ${run.path}`);
}
