// One reader of /proc/<pid>/stat for everything that asks the kernel about a process: whether it
// still runs, which group it leads, when it started (what tells a pid from its reuse), and the CPU
// its children used once they have ended.
// Linux only; elsewhere every reader answers "unknown" (undefined, or nothing listed).
// What a poller reads while a load is measured is read asynchronously (childrenOf, readCommandLine,
// readProcStatAsync), on libuv's threadpool, not on the event loop that times the load: a read of
// /proc/<pid>/cmdline waits for the target's memory-map lock (the kernel copies the argv out of its
// memory), and one look at a Caddy pod (its stat, cmdline and every thread's children) took the loop
// 0.4 ms at the median, 3.6 ms at p99 and 14 ms at worst during reloads on a busy 2-core machine.

import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

export interface ProcStat {
  pid: number;
  /** The kernel's short name (at most 15 bytes), as in /proc/<pid>/comm. */
  comm: string;
  /** R, S, D, T, Z (zombie: exited, waiting to be reaped), X (dead), ... */
  state: string;
  ppid: number;
  pgrp: number;
  /** Field 22, clock ticks since boot, kept as the kernel's text: it identifies, it is not summed. */
  startTime: string;
  /**
   * Fields 16 and 17 (cutime + cstime): CPU seconds, user and system, of the children this process
   * has waited for, and of theirs. The kernel counts in USER_HZ, 100 ticks a second on Linux.
   */
  reapedChildrenCpuSeconds: number;
}

/** USER_HZ: what /proc counts CPU time in, fixed at 100 a second by Linux's user-space ABI. */
const TICKS_PER_SECOND = 100;

/** The stat line of `pid`, or undefined when it is gone (or there is no /proc). */
export function readProcStat(pid: number | string): ProcStat | undefined {
  try {
    return parseStat(pid, readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

/** readProcStat off the event loop. */
export async function readProcStatAsync(pid: number | string): Promise<ProcStat | undefined> {
  try {
    return parseStat(pid, await readFile(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return undefined;
  }
}

function parseStat(pid: number | string, line: string): ProcStat {
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so the fields after the
  // last ')' are split, starting at field 3 (state); starttime (field 22) is index 19.
  const close = line.lastIndexOf(')');
  const fields = line.slice(close + 2).split(' ');
  const [state = '', ppid = '', pgrp = ''] = fields;
  const reapedTicks = Number(fields[13]) + Number(fields[14]);
  return {
    pid: Number(pid),
    comm: line.slice(line.indexOf('(') + 1, close),
    state,
    ppid: Number(ppid),
    pgrp: Number(pgrp),
    startTime: fields[19] ?? '',
    reapedChildrenCpuSeconds: reapedTicks / TICKS_PER_SECOND,
  };
}

/** False for a zombie or a dead entry: it no longer runs, holds no socket, and only waits to be reaped. */
export function runs(stat: ProcStat | undefined): stat is ProcStat {
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/** Every process that runs now (zombies left out), or undefined where there is no /proc to list. */
export function runningProcesses(): ProcStat[] | undefined {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  const found: ProcStat[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(entry); // undefined when it ended while we looked
    if (runs(stat)) found.push(stat);
  }
  return found;
}

/** The children of `pid` (every thread's), as the kernel lists them; empty when it is gone or there is no /proc. */
export async function childrenOf(pid: number): Promise<number[]> {
  let tasks: string[];
  try {
    tasks = await readdir(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  // Each thread's list, "12 34 "; '' for a thread that ended while we looked.
  const lists = await Promise.all(tasks.map((task) => readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')));
  return [...new Set(lists.flatMap((list) => list.split(' ').filter((word) => word.trim() !== '').map(Number)))];
}

/** The argv of `pid` as one line (a process may rewrite it: nginx's "worker process is shutting down"); undefined when gone. */
export async function readCommandLine(pid: number): Promise<string | undefined> {
  try {
    return (await readFile(`/proc/${pid}/cmdline`, 'utf8')).split('\0').filter((w) => w !== '').join(' ');
  } catch {
    return undefined;
  }
}
