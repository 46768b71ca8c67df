// The processes inside one pod's container over time: a reload replaces a gateway's workers (nginx,
// HAProxy's master-worker) while the pod and its main process stay, so the pod's lifecycle alone
// cannot say which process a failure met. Every few ms the main process's descendants are listed
// from /proc (its children's children too), and each one's appearance and end is recorded
// (process-started, process-exited) with its pid, parent and command line: the old workers'
// lifetimes and the new ones' on the Timeline, as a pod's. Linux only; elsewhere nothing is recorded.

import { childrenOf, readCommandLine, readProcStat, runs } from '../../state/proc-stat.ts';

/** Once the pod reloads: often enough to place a worker's start and end within a request's duration. */
export const PROCESS_POLL_MS = 20;
/**
 * Until then only the processes that are there matter, not to the millisecond: every pod of a
 * profile that can reload is watched, in every scenario, and the harness's event loop pays for it.
 */
export const PROCESS_IDLE_POLL_MS = 100;
/** Looks a new process may keep its parent's command line before it is recorded under it (a worker forked, never renamed). */
const NAMING_LOOKS = 5;

interface Seen {
  ppid: number;
  command: string;
  /**
   * When it was first seen; its process-started is recorded with this time once it has a name of
   * its own (a fork still carries its parent's command line until it execs or renames itself, later
   * on a busy machine), or after NAMING_LOOKS looks, or at its end.
   */
  since: number;
  recorded: boolean;
  looks: number;
  parentCommand: string;
}

type RecordProcess = (kind: 'process-started' | 'process-exited', detail: { [key: string]: unknown }, t?: number) => void;

export class ProcessWatch {
  private readonly seen = new Map<number, Seen>();
  private timer?: NodeJS.Timeout;
  private intervalMs = PROCESS_IDLE_POLL_MS;

  private readonly mainPid: number;
  private readonly record: RecordProcess;
  private readonly now: () => number;

  constructor(mainPid: number, now: () => number, record: RecordProcess) {
    this.mainPid = mainPid;
    this.now = now;
    this.record = record;
  }

  start(intervalMs = PROCESS_IDLE_POLL_MS): void {
    this.look();
    this.every(intervalMs);
  }

  /** Looks every PROCESS_POLL_MS from now on (a reload is under way), starting with one at once. */
  quicken(): void {
    if (this.timer === undefined || this.intervalMs === PROCESS_POLL_MS) return;
    this.look();
    this.every(PROCESS_POLL_MS);
  }

  private every(intervalMs: number): void {
    clearInterval(this.timer);
    this.intervalMs = intervalMs;
    this.timer = setInterval(() => this.look(), intervalMs);
    this.timer.unref();
  }

  /** Teardown: no more looks, nothing more recorded. */
  cancel(): void {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One last look (what ended with the main process), then no more. */
  stop(): void {
    if (this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
    this.look(true);
  }

  private look(final = false): void {
    const now = new Map<number, number>();
    if (!final) {
      const queue = [this.mainPid];
      while (queue.length > 0) {
        const parent = queue.shift()!;
        for (const child of childrenOf(parent)) {
          if (!runs(readProcStat(child))) continue;
          now.set(child, parent);
          queue.push(child);
        }
      }
    }
    for (const [pid, was] of this.seen) {
      if (now.has(pid)) {
        // Kept up to date: a forked worker names itself a moment after the fork (nginx's "worker
        // process"), and the last title tells what it was doing when it ended ("is shutting down").
        const command = readCommandLine(pid);
        if (command !== undefined && command !== '') was.command = command;
      }
      was.looks++;
      const named = was.command !== was.parentCommand || was.looks >= NAMING_LOOKS;
      if (!was.recorded && (named || !now.has(pid))) {
        was.recorded = true;
        this.record('process-started', { pid, ppid: was.ppid, command: was.command }, was.since);
      }
      if (now.has(pid)) continue;
      this.seen.delete(pid);
      this.record('process-exited', { pid, ppid: was.ppid, command: was.command });
    }
    const t = this.now();
    for (const [pid, ppid] of now) {
      if (this.seen.has(pid)) continue;
      this.seen.set(pid, { ppid, command: readCommandLine(pid) ?? '', since: t, recorded: false, looks: 0, parentCommand: readCommandLine(ppid) ?? '' });
    }
  }
}
